#pragma once
// Fatal: the one exception type, thrown at boundaries (app, store client I/O) and caught in
// app::main, which prints its one-line message and exits with the mapped status.

#include "ddprun/util/result.hpp"

#include <stdexcept>

namespace ddprun {

class Fatal : public std::runtime_error {
 public:
  explicit Fatal(Error error) : std::runtime_error(error.message), error_(std::move(error)) {}
  const Error& error() const { return error_; }

 private:
  Error error_;
};

/// Unwraps a Result or throws Fatal with its error.
template <typename T>
T value_or_throw(Result<T> r) {
  if (!r) {
    throw Fatal(r.error());
  }
  return std::move(*r);
}

}  // namespace ddprun
