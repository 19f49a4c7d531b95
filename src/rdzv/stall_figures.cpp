#include "ddprun/rdzv/stall_figures.hpp"

#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ddprun::rdzv {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view k_none = "-";
constexpr std::int64_t k_max_ms = std::int64_t{1} << 53;  // far beyond any run, still exact

std::optional<milliseconds> max_of(std::optional<milliseconds> a, std::optional<milliseconds> b) {
  if (!a || !b) {
    return a ? a : b;
  }
  return std::max(*a, *b);
}

std::string ms_text(std::optional<milliseconds> v) {
  return v ? std::to_string(v->count()) : std::string(k_none);
}

/// One field: "-" is none (nullopt inside), a non-negative count is a value; else nothing.
std::optional<std::optional<milliseconds>> parse_ms(std::string_view text) {
  if (text == k_none) {
    return std::optional<milliseconds>();
  }
  auto v = util::parse_int_in(text, 0, k_max_ms);
  if (!v) {
    return std::nullopt;
  }
  return std::optional<milliseconds>(milliseconds(*v));
}

}  // namespace

StallFigures merge(const StallFigures& a, const StallFigures& b) {
  return StallFigures{max_of(a.startup, b.startup), max_of(a.gap, b.gap),
                      std::max(a.running, b.running)};
}

std::string encode_stall_figures(const StallFigures& f) {
  return ms_text(f.startup) + " " + ms_text(f.gap) + " " + std::to_string(f.running.count());
}

std::optional<StallFigures> decode_stall_figures(std::string_view text) {
  const auto parts = util::split(text, ' ');
  if (parts.size() != 3) {
    return std::nullopt;
  }
  auto startup = parse_ms(parts[0]);
  auto gap = parse_ms(parts[1]);
  auto running = parse_ms(parts[2]);
  if (!startup || !gap || !running || !*running) {
    return std::nullopt;
  }
  return StallFigures{*startup, *gap, **running};
}

std::string encode_node_stall(milliseconds timeout, const StallFigures& f) {
  return std::to_string(timeout.count()) + " " + encode_stall_figures(f);
}

std::optional<NodeStall> decode_node_stall(std::string_view text) {
  const auto space = text.find(' ');
  if (space == std::string_view::npos) {
    return std::nullopt;
  }
  auto timeout = util::parse_int_in(text.substr(0, space), 0, k_max_ms);
  auto figures = decode_stall_figures(text.substr(space + 1));
  if (!timeout || !figures) {
    return std::nullopt;
  }
  return NodeStall{milliseconds(*timeout), *figures};
}

std::string node_stall_key(const std::string& run_id, const std::string& node_id) {
  const std::string state = state_key(run_id);  // ".../<id>/state": the run's directory
  return state.substr(0, state.size() - std::string_view("state").size()) + "stall/" + node_id;
}

std::string round_stall_key(const std::string& run_id, int round) {
  return round_prefix(run_id, round) + "stall";
}

}  // namespace ddprun::rdzv
