// RFC 4648 base64 with padding (Go's encoding/base64.StdEncoding, which etcd's gateway uses),
// and the prefix arithmetic of clientv3.GetPrefixRangeEnd.

#include "ddprun/etcd/codec.hpp"

#include <fmt/format.h>

#include <array>

namespace ddprun::etcd {
namespace {

constexpr std::string_view k_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr int k_invalid = -1;

constexpr std::array<int, 256> make_reverse() {
  std::array<int, 256> r{};
  r.fill(k_invalid);
  for (std::size_t i = 0; i < k_alphabet.size(); ++i) {
    r[static_cast<unsigned char>(k_alphabet[i])] = static_cast<int>(i);
  }
  return r;
}
constexpr std::array<int, 256> k_reverse = make_reverse();

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      const auto b = k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U;
      group = (group << 8U) | b;
    }
    for (std::size_t k = 0; k < 4; ++k) {
      const auto index = (group >> (18U - 6U * k)) & 0x3fU;
      out.push_back(k <= n ? k_alphabet[index] : '=');
    }
  }
  return out;
}

Result<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return make_error(
        ErrorCode::protocol,
        fmt::format("base64 \"{}\": length {} is not a multiple of 4", text, text.size()));
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t group = 0;
    std::size_t pad = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const int v = k_reverse[static_cast<unsigned char>(c)];
      const bool padding = c == '=' && k >= 2 && i + 4 == text.size();
      if (v == k_invalid && !padding) {
        return make_error(ErrorCode::protocol,
                          fmt::format("base64 \"{}\": bad character at {}", text, i + k));
      }
      if (padding) {
        ++pad;
      } else if (pad > 0) {
        return make_error(ErrorCode::protocol, fmt::format("base64 \"{}\": data after '='", text));
      }
      group = (group << 6U) | static_cast<std::uint32_t>(padding ? 0 : v);
    }
    for (std::size_t k = 0; k < 3 - pad; ++k) {
      out.push_back(static_cast<char>((group >> (16U - 8U * k)) & 0xffU));
    }
  }
  return out;
}

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xffU) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

RangeRequest prefix_range(const std::string& prefix, std::int64_t limit) {
  return {prefix, prefix_end(prefix), limit, 0, false};
}

DeleteRequest prefix_delete(const std::string& prefix) { return {prefix, prefix_end(prefix)}; }

}  // namespace ddprun::etcd
