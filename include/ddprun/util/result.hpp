#pragma once
// Result<T>: a value or an Error, the std::expected subset ddprun needs.
// Pure code returns Result for expected failures; exceptions stay at the boundaries.

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace ddprun {

/// What kind of failure an Error reports; app maps usage/config errors to exit 2.
/// given_up: the job stopped on purpose because going on would not help (a crash loop).
/// not_needed: the job ended while this node stood by as a spare (it exits 0).
/// finished_without: the job finished without this node, which was dropped from it (it exits 0).
enum class ErrorCode {
  usage,
  config,
  io,
  protocol,
  timeout,
  closed,
  given_up,
  not_needed,
  finished_without,
  internal
};

/// One failure: a code and a one-line message naming the value and what was expected.
struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
};

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Result*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  T& checked() {
    if (!has_value()) {
      std::abort();  // reading the value of a failed Result is a programming error
    }
    return std::get<0>(v_);
  }
  std::variant<T, Error> v_;
};

/// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace ddprun
