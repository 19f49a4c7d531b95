#pragma once
// Cutting a long list of keys or key-value pairs into requests of bounded size.

#include <cstddef>
#include <iterator>
#include <vector>

namespace ddprun::util {

/// `items` cut, in order, into runs of `size` (the last one shorter; none for no items; a
/// `size` of 0 counts as 1).
template <typename T>
std::vector<std::vector<T>> batches(std::vector<T> items, std::size_t size) {
  size = size == 0 ? 1 : size;
  std::vector<std::vector<T>> out;
  out.reserve((items.size() + size - 1) / size);
  for (auto at = items.begin(); at != items.end();) {
    const auto left = static_cast<std::size_t>(std::distance(at, items.end()));
    const auto end = at + static_cast<std::ptrdiff_t>(left < size ? left : size);
    out.emplace_back(std::make_move_iterator(at), std::make_move_iterator(end));
    at = end;
  }
  return out;
}

}  // namespace ddprun::util
