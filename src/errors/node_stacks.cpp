// A node's answer to a job-wide stack request: its text form and the merge of every node's
// groups (node_stacks.hpp shows the text).

#include "ddprun/errors/node_stacks.hpp"

#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

namespace ddprun::errors {
namespace {

constexpr std::string_view k_magic = "ddprun-stacks 1";
constexpr char k_escape = '%';
constexpr unsigned char k_first_printable = 0x20;
constexpr unsigned char k_delete = 0x7f;
constexpr std::size_t k_hex_digits = 2;
constexpr int k_hex_base = 16;
/// Bytes of a bad line quoted in an error message.
constexpr std::size_t k_shown_bytes = 60;

bool needs_escape(unsigned char u) {
  return u < k_first_printable || u == k_delete || u == static_cast<unsigned char>(k_escape);
}

/// '%', control characters and DEL as %XX: the value stays on its line.
std::string escape(std::string_view s) {
  static constexpr char k_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (needs_escape(u)) {
      out += {k_escape, k_hex[u >> 4U], k_hex[u & 0xfU]};
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != k_escape) {
      out += s[i];
      continue;
    }
    unsigned value = 0;
    const char* first = s.data() + i + 1;
    const char* last = first + std::min(k_hex_digits, s.size() - i - 1);
    auto [ptr, ec] = std::from_chars(first, last, value, k_hex_base);
    if (ec != std::errc{} || ptr != first + k_hex_digits) {
      return std::nullopt;
    }
    out += static_cast<char>(value);
    i += k_hex_digits;
  }
  return out;
}

std::optional<int> parse_rank(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr != s.data() + s.size() || v < 0 || v > k_max_decoded_rank) {
    return std::nullopt;
  }
  return v;
}

/// "0,2-7" into `out`, at most `budget` ranks; false on anything else.
bool parse_rank_list(std::string_view text, std::size_t budget, std::vector<int>& out) {
  for (const auto& part : util::split(text, ',')) {
    const auto dash = part.find('-');
    auto lo = parse_rank(std::string_view(part).substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_rank(std::string_view(part).substr(dash + 1));
    if (!lo || !hi || *hi < *lo ||
        static_cast<std::size_t>(*hi - *lo) + 1 > budget - std::min(budget, out.size())) {
      return false;
    }
    for (int r = *lo; r <= *hi; ++r) {
      out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  return !out.empty() && std::adjacent_find(out.begin(), out.end()) == out.end();
}

Error bad_line(std::size_t number, std::string_view line, const std::string& why) {
  return make_error(ErrorCode::protocol, "stacks summary line " + std::to_string(number) + " " +
                                             util::quoted(line.substr(0, k_shown_bytes)) + ": " +
                                             why);
}

/// One record line into `out`; `ranks` counts the ranks of every group so far.
Result<void> read_record(std::string_view line, std::size_t number, std::size_t& ranks,
                         NodeStacks& out) {
  const auto space = line.find(' ');
  const std::string_view name = line.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view{} : line.substr(space + 1);
  std::string_view text = rest;
  StackGroup group;
  if (name == "group") {
    const auto cut = rest.find(' ');
    if (!parse_rank_list(rest.substr(0, cut), k_max_decoded_ranks - ranks, group.ranks)) {
      return bad_line(number, line,
                      "expected ranks such as 0,2-7 (distinct, at most " +
                          std::to_string(k_max_decoded_ranks) + " in all)");
    }
    ranks += group.ranks.size();
    text = cut == std::string_view::npos ? std::string_view{} : rest.substr(cut + 1);
  }
  auto value = unescape(text);
  if (!value) {
    return bad_line(number, line, "a '%' not followed by two hex digits");
  }
  if (name == "node") {
    out.node = std::move(*value);
  } else if (name == "method") {
    out.method = std::move(*value);
  } else if (name == "file") {
    out.files.push_back(std::move(*value));
  } else if (name == "group") {
    group.frames = std::move(*value);
    out.groups.push_back(std::move(group));
  }
  return {};
}

}  // namespace

std::string encode_node_stacks(const NodeStacks& stacks) {
  std::string out = std::string(k_magic) + "\nnode " + escape(stacks.node) + "\nmethod " +
                    escape(stacks.method) + "\n";
  for (const auto& f : stacks.files) {
    out += "file " + escape(f) + "\n";
  }
  for (const auto& g : stacks.groups) {
    out += "group " + render_rank_list(g.ranks) + " " + escape(g.frames) + "\n";
  }
  return out;
}

Result<NodeStacks> decode_node_stacks(std::string_view text) {
  const auto lines = util::split(text, '\n');
  if (lines.empty() || lines.front() != k_magic) {
    return make_error(ErrorCode::protocol,
                      "stacks summary: expected '" + std::string(k_magic) + "' first, got " +
                          util::quoted(text.substr(0, std::min(text.find('\n'), k_shown_bytes))));
  }
  NodeStacks out;
  std::size_t ranks = 0;
  bool has_node = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      continue;
    }
    has_node = has_node || lines[i].starts_with("node ") || lines[i] == "node";
    if (auto ok = read_record(lines[i], i + 1, ranks, out); !ok) {
      return ok.error();
    }
  }
  if (!has_node) {
    return make_error(ErrorCode::protocol, "stacks summary: no 'node' line");
  }
  return out;
}

std::vector<StackGroup> merge_stack_groups(const std::vector<NodeStacks>& nodes) {
  std::map<std::string, std::vector<int>> by_frames;
  for (const auto& n : nodes) {
    for (const auto& g : n.groups) {
      auto& ranks = by_frames[g.frames];
      ranks.insert(ranks.end(), g.ranks.begin(), g.ranks.end());
    }
  }
  std::vector<StackGroup> groups;
  for (auto& [frames, ranks] : by_frames) {
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    if (!ranks.empty()) {
      groups.push_back(StackGroup{std::move(ranks), frames});
    }
  }
  order_stack_groups(groups);
  return groups;
}

}  // namespace ddprun::errors
