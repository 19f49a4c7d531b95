#pragma once
// Hex helpers for wire-level tests: "00 03 2f" <-> bytes.

#include <cctype>
#include <string>
#include <string_view>

namespace ddprun::test {

inline std::string from_hex(std::string_view text) {
  std::string out;
  int high = -1;
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
      continue;
    }
    const int v = std::isdigit(static_cast<unsigned char>(c)) != 0
                      ? c - '0'
                      : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<char>(high * 16 + v));
      high = -1;
    }
  }
  return out;
}

inline std::string to_hex(std::string_view bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (!out.empty()) {
      out.push_back(' ');
    }
    out.push_back(k_digits[u >> 4U]);
    out.push_back(k_digits[u & 0xfU]);
  }
  return out;
}

}  // namespace ddprun::test
