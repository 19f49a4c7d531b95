// argparse's option recognition, table-driven. Order follows CPython's _parse_optional:
// exact spelling, then "name=value" with an exact name, then long-prefix abbreviation
// (ambiguity is an error), then a short option with glued text.
#include "lookup.hpp"

#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <cctype>

namespace ddprun::cli::detail {

namespace {

constexpr std::string_view k_long_prefix = "--";

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

const FlagSpec* find_exact(std::span<const FlagSpec> table, std::string_view spelling) {
  for (const auto& flag : table) {
    for (auto s : flag.spellings) {
      if (s == spelling) {
        return &flag;
      }
    }
  }
  return nullptr;
}

std::string join_spellings(const std::vector<std::string_view>& spellings) {
  std::string out;
  for (auto s : spellings) {
    out += out.empty() ? "" : ", ";
    out += s;
  }
  return out;
}

struct PrefixHits {
  std::vector<const FlagSpec*> flags;       // distinct options, table order
  std::vector<std::string_view> spellings;  // every matching spelling, for the message
  std::string_view first_spelling;          // first spelling of the first option
};

PrefixHits collect_prefix_hits(std::span<const FlagSpec> table, std::string_view prefix) {
  PrefixHits hits;
  for (const auto& flag : table) {
    for (auto s : flag.spellings) {
      if (!util::starts_with(s, k_long_prefix) || !util::starts_with(s, prefix)) {
        continue;
      }
      if (hits.flags.empty() || hits.flags.back() != &flag) {
        hits.flags.push_back(&flag);
      }
      if (hits.first_spelling.empty()) {
        hits.first_spelling = s;
      }
      hits.spellings.push_back(s);
    }
  }
  return hits;
}

Result<std::optional<OptionMatch>> find_by_prefix(std::span<const FlagSpec> table,
                                                  std::string_view token) {
  auto eq = token.find('=');
  auto name = token.substr(0, eq);
  auto hits = collect_prefix_hits(table, name);
  if (hits.flags.empty()) {
    return std::optional<OptionMatch>{};
  }
  if (hits.flags.size() > 1) {
    return make_error(ErrorCode::usage, "ambiguous option: " + std::string(name) + " could match " +
                                            join_spellings(hits.spellings));
  }
  OptionMatch m{hits.flags.front(), std::string(hits.first_spelling), std::nullopt, false};
  if (eq != std::string_view::npos) {
    m.attached = std::string(token.substr(eq + 1));
  }
  return std::optional<OptionMatch>{m};
}

std::optional<OptionMatch> find_short(std::span<const FlagSpec> table, std::string_view token) {
  if (token.size() < 3 || token[1] == '-') {
    return std::nullopt;
  }
  auto name = token.substr(0, 2);
  const auto* flag = find_exact(table, name);
  if (flag == nullptr) {
    return std::nullopt;
  }
  return OptionMatch{flag, std::string(name), std::string(token.substr(2)), true};
}

}  // namespace

bool is_negative_number(std::string_view token) {
  if (token.size() < 2 || token[0] != '-') {
    return false;
  }
  auto body = token.substr(1);
  auto dot = body.find('.');
  if (dot == std::string_view::npos) {
    return all_digits(body);
  }
  auto whole = body.substr(0, dot);
  return (whole.empty() || all_digits(whole)) && all_digits(body.substr(dot + 1));
}

bool looks_like_option(std::string_view token) {
  return token.size() > 1 && token[0] == '-' && !is_negative_number(token);
}

Result<std::optional<OptionMatch>> find_option(std::span<const FlagSpec> table,
                                               std::string_view token) {
  if (const auto* flag = find_exact(table, token)) {
    return std::optional<OptionMatch>{OptionMatch{flag, std::string(token), std::nullopt, false}};
  }
  auto eq = token.find('=');
  if (eq != std::string_view::npos) {
    auto name = token.substr(0, eq);
    if (const auto* flag = find_exact(table, name)) {
      return std::optional<OptionMatch>{
          OptionMatch{flag, std::string(name), std::string(token.substr(eq + 1)), false}};
    }
  }
  if (util::starts_with(token, k_long_prefix)) {
    return find_by_prefix(table, token);
  }
  return find_short(table, token);
}

bool is_value_token(std::span<const FlagSpec> table, std::string_view token) {
  if (token == k_long_prefix) {
    return false;
  }
  if (!looks_like_option(token)) {
    return true;
  }
  auto found = find_option(table, token);
  if (!found || found->has_value()) {
    return false;
  }
  return token.find(' ') != std::string_view::npos;
}

std::optional<bool> parse_python_int_nonzero(std::string_view text) {
  auto t = util::trim(text);
  if (!t.empty() && (t.front() == '+' || t.front() == '-')) {
    t.remove_prefix(1);
  }
  if (t.empty() || !is_digit(t.front()) || !is_digit(t.back())) {
    return std::nullopt;
  }
  bool nonzero = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '_') {
      if (!is_digit(t[i - 1]) || !is_digit(t[i + 1])) {
        return std::nullopt;  // Python allows '_' only between two digits
      }
    } else if (!is_digit(t[i])) {
      return std::nullopt;
    } else {
      nonzero = nonzero || t[i] != '0';
    }
  }
  return nonzero;
}

}  // namespace ddprun::cli::detail
