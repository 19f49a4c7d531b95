#include "ddprun/util/strings.hpp"

#include "ddprun/util/template.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace ddprun::util {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// Control characters are escaped as Python's repr does, so that a message naming a value
// stays on one line whatever the value holds.
std::string quoted(std::string_view s) {
  static constexpr char k_hex[] = "0123456789abcdef";
  constexpr unsigned char k_first_printable = 0x20;
  constexpr unsigned char k_delete = 0x7f;
  std::string out = "'";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < k_first_printable || u == k_delete) {
      out += {'\\', 'x', k_hex[u >> 4U], k_hex[u & 0xfU]};
    } else {
      out += c;
    }
  }
  return out + "'";
}

Result<std::int64_t> parse_int(std::string_view text) {
  auto t = trim(text);
  if (!t.empty() && t.front() == '+') {
    t.remove_prefix(1);
  }
  std::int64_t value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    return make_error(ErrorCode::usage, "invalid integer " + quoted(text));
  }
  return value;
}

Result<std::int64_t> parse_int_in(std::string_view text, std::int64_t lo, std::int64_t hi) {
  auto v = parse_int(text);
  if (!v) {
    return v;
  }
  if (*v < lo || *v > hi) {
    return make_error(ErrorCode::usage, "value " + quoted(text) + " is out of range [" +
                                            std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

Result<double> parse_double(std::string_view text) {
  auto t = std::string(trim(text));
  if (t.empty() || std::isspace(static_cast<unsigned char>(t.back())) != 0) {
    return make_error(ErrorCode::usage, "invalid number " + quoted(text));
  }
  double value = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(value)) {
    return make_error(ErrorCode::usage, "invalid number " + quoted(text));
  }
  return value;
}

Result<std::chrono::milliseconds> parse_seconds(std::string_view text) {
  auto v = parse_double(text);
  if (!v) {
    return v.error();
  }
  if (*v < 0 || *v > 1e9) {
    return make_error(ErrorCode::usage,
                      "duration " + quoted(text) + " must be between 0 and 1e9 seconds");
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(*v * 1000.0)));
}

Result<bool> parse_bool_word(std::string_view text) {
  auto t = to_lower(trim(text));
  if (t == "1" || t == "true" || t == "t" || t == "yes" || t == "y") {
    return true;
  }
  if (t == "0" || t == "false" || t == "f" || t == "no" || t == "n") {
    return false;
  }
  return make_error(ErrorCode::usage, "invalid boolean " + quoted(text) +
                                          " (expected 1,true,t,yes,y or 0,false,f,no,n)");
}

std::string substitute_var(std::string_view text, std::string_view name, std::string_view value) {
  return substitute_vars(text, {{std::string(name), std::string(value)}});
}

std::string render_ranges(std::vector<int> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string out;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) {
      ++j;
    }
    out += (out.empty() ? "" : ",") + std::to_string(values[i]);
    if (j > i) {
      out += "-" + std::to_string(values[j]);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace ddprun::util
