// Slurm hostlist expansion. The tokenizer follows pdsh/Slurm's _next_tok (separators outside
// brackets split, runs of separators collapse); each token is then expanded left to right, one
// bracket group at a time, so an earlier group varies slowest — the same order Slurm gets by
// recursing on the prefix of the last group. Iterating (not recursing) keeps hostile input from
// exhausting the stack; every product is checked against the caps before it is built.

#include "ddprun/sched/hostlist.hpp"

#include "ddprun/util/strings.hpp"

#include <cstdint>

namespace ddprun::sched {

namespace {

constexpr std::size_t k_max_shown_chars = 80;

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; }
bool is_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

/// The text as it appears in messages: one line, bounded length.
std::string shown(std::string_view text) {
  std::string s(text.substr(0, k_max_shown_chars));
  for (auto& c : s) {
    c = (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  }
  return util::quoted(s + (text.size() > k_max_shown_chars ? "..." : ""));
}

Error bad(std::string_view whole, const std::string& why) {
  return make_error(ErrorCode::config, "hostlist " + shown(whole) + ": " + why);
}

/// What every step of one expansion needs: the whole text (for messages) and the caps.
struct Expansion {
  std::string_view whole;
  const HostlistLimits& limits;

  [[nodiscard]] Error too_many_names() const {
    return bad(whole, "more than " + std::to_string(limits.max_names) + " names");
  }
};

Result<std::vector<std::string_view>> tokenize(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t start = std::string_view::npos;
  bool in_brackets = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[' && in_brackets) {
      return bad(text, "nested '[' at offset " + std::to_string(i));
    }
    if (c == ']' && !in_brackets) {
      return bad(text, "']' without '[' at offset " + std::to_string(i));
    }
    in_brackets = (c == '[') || (in_brackets && c != ']');
    if (!in_brackets && is_separator(c)) {
      if (start != std::string_view::npos) {
        tokens.push_back(text.substr(start, i - start));
      }
      start = std::string_view::npos;
    } else if (start == std::string_view::npos) {
      start = i;
    }
  }
  if (in_brackets) {
    return bad(text, "'[' without ']'");
  }
  if (start != std::string_view::npos) {
    tokens.push_back(text.substr(start));
  }
  return tokens;
}

std::string padded(std::uint64_t value, std::size_t width) {
  std::string s = std::to_string(value);
  return s.size() < width ? std::string(width - s.size(), '0') + s : s;
}

/// One "lo-hi" or "num" item appended to `out` as zero-padded texts.
Result<void> append_range(std::string_view item, const Expansion& ex,
                          std::vector<std::string>& out) {
  const auto whole = ex.whole;
  const auto dash = item.find('-');
  const auto lo_text = item.substr(0, dash);
  const auto hi_text = dash == std::string_view::npos ? lo_text : item.substr(dash + 1);
  if (!is_digits(lo_text) || !is_digits(hi_text)) {
    return bad(whole, "range " + shown(item) + " is not 'N' or 'LO-HI' with decimal digits");
  }
  if (lo_text.size() > k_max_range_digits || hi_text.size() > k_max_range_digits) {
    return bad(whole, "range " + shown(item) + " has a number longer than " +
                          std::to_string(k_max_range_digits) + " digits");
  }
  const auto lo = static_cast<std::uint64_t>(*util::parse_int(lo_text));
  const auto hi = static_cast<std::uint64_t>(*util::parse_int(hi_text));
  if (lo > hi) {
    return bad(whole, "range " + shown(item) + " has low > high");
  }
  if (hi - lo >= ex.limits.max_range_hosts) {
    return bad(whole, "range " + shown(item) + " spans more than " +
                          std::to_string(ex.limits.max_range_hosts) + " hosts");
  }
  if (out.size() + (hi - lo + 1) > ex.limits.max_names) {
    return ex.too_many_names();
  }
  for (auto v = lo; v <= hi; ++v) {
    out.push_back(padded(v, lo_text.size()));
  }
  return {};
}

/// The inside of one bracket group ("1-3,5") as number texts.
Result<std::vector<std::string>> expand_ranges(std::string_view body, const Expansion& ex) {
  std::vector<std::string> numbers;
  for (const auto& item : util::split(body, ',')) {
    auto r = append_range(item, ex, numbers);
    if (!r) {
      return r.error();
    }
  }
  return numbers;
}

/// acc x (literal + number) for every number; checks the caps first.
Result<void> extend(std::vector<std::string>& acc, std::string_view literal,
                    const std::vector<std::string>& numbers, std::size_t already,
                    const Expansion& ex) {
  if (acc.size() > ex.limits.max_prefix_expansions) {
    return bad(ex.whole, "more than " + std::to_string(ex.limits.max_prefix_expansions) +
                             " prefix expansions before a bracket group");
  }
  if (already + acc.size() * numbers.size() > ex.limits.max_names) {
    return ex.too_many_names();
  }
  std::vector<std::string> next;
  next.reserve(acc.size() * numbers.size());
  for (const auto& a : acc) {
    const std::string head = a + std::string(literal);
    for (const auto& n : numbers) {
      next.push_back(head + n);
    }
  }
  acc = std::move(next);
  return {};
}

Result<void> expand_token(std::string_view token, const Expansion& ex,
                          std::vector<std::string>& out) {
  std::vector<std::string> acc{""};
  std::size_t pos = 0;
  for (auto open = token.find('['); open != std::string_view::npos; open = token.find('[', pos)) {
    const auto close = token.find(']', open);  // the tokenizer guarantees it exists
    auto numbers = expand_ranges(token.substr(open + 1, close - open - 1), ex);
    if (!numbers) {
      return numbers.error();
    }
    auto r = extend(acc, token.substr(pos, open - pos), *numbers, out.size(), ex);
    if (!r) {
      return r;
    }
    pos = close + 1;
  }
  if (out.size() + acc.size() > ex.limits.max_names) {  // a plain name counts too
    return ex.too_many_names();
  }
  for (auto& a : acc) {
    out.push_back(std::move(a) + std::string(token.substr(pos)));
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view text,
                                                 const HostlistLimits& limits) {
  if (text.find_first_of("{}") != std::string_view::npos) {
    return bad(text, "hostlist functions ('{...}') need slurmctld and are not supported");
  }
  auto tokens = tokenize(text);
  if (!tokens) {
    return tokens.error();
  }
  const Expansion ex{text, limits};
  std::vector<std::string> hosts;
  for (auto token : *tokens) {
    auto r = expand_token(token, ex, hosts);
    if (!r) {
      return r.error();
    }
  }
  return hosts;
}

Result<std::vector<int>> expand_per_node_counts(std::string_view text,
                                                const HostlistLimits& limits) {
  std::vector<int> counts;
  for (const auto& item : util::split(text, ',')) {
    std::string_view s = util::trim(item);
    std::int64_t repeat = 1;
    if (const auto paren = s.find("(x"); paren != std::string_view::npos && s.back() == ')') {
      auto r = util::parse_int_in(s.substr(paren + 2, s.size() - paren - 3), 1,
                                  static_cast<std::int64_t>(limits.max_names));
      if (!r) {
        return make_error(ErrorCode::config, "per-node counts " + shown(text) +
                                                 ": expected N or N(xM) items, got " + shown(s));
      }
      repeat = *r;
      s = s.substr(0, paren);
    }
    auto n = util::parse_int_in(s, 0, 1'000'000);
    if (!n || counts.size() + static_cast<std::size_t>(repeat) > limits.max_names) {
      return make_error(ErrorCode::config, "per-node counts " + shown(text) +
                                               ": expected N or N(xM) items, got " + shown(item));
    }
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), static_cast<int>(*n));
  }
  return counts;
}

}  // namespace ddprun::sched
