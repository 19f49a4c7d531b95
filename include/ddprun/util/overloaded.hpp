#pragma once
// Overloaded{...}: a std::visit handler made of lambdas, one per alternative.

namespace ddprun::util {

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace ddprun::util
