#include "ddprun/sched/ports.hpp"

#include "ddprun/util/strings.hpp"

namespace ddprun::sched {

namespace {
constexpr std::uint64_t k_fnv_offset = 14695981039346656037ULL;
constexpr std::uint64_t k_fnv_prime = 1099511628211ULL;
constexpr int k_max_port = 65535;
constexpr std::int64_t k_max_reserved_ports = 1024;
}  // namespace

std::vector<int> candidate_ports(std::uint64_t key) {
  const auto first = static_cast<int>(key % static_cast<std::uint64_t>(k_port_span));
  std::vector<int> ports;
  ports.reserve(k_port_candidates);
  for (int i = 0; i < k_port_candidates; ++i) {
    ports.push_back(k_port_base + (first + i) % k_port_span);
  }
  return ports;
}

Result<std::vector<int>> parse_port_range(std::string_view text) {
  const auto dash = text.find('-');
  auto lo = util::parse_int_in(text.substr(0, dash), 1, k_max_port);
  auto hi = dash == std::string_view::npos
                ? lo
                : util::parse_int_in(text.substr(dash + 1), 1, k_max_port);
  if (!lo || !hi || *lo > *hi || *hi - *lo >= k_max_reserved_ports) {
    return make_error(ErrorCode::config, "port range " + util::quoted(text) +
                                             ": expected PORT or LO-HI within [1, 65535]");
  }
  std::vector<int> ports;
  for (auto p = *lo; p <= *hi; ++p) {
    ports.push_back(static_cast<int>(p));
  }
  return ports;
}

std::string describe_ports(const std::vector<int>& ports) {
  bool consecutive = !ports.empty();
  for (std::size_t i = 1; i < ports.size(); ++i) {
    consecutive = consecutive && ports[i] == ports[i - 1] + 1;
  }
  if (consecutive && ports.size() > 1) {
    return std::to_string(ports.front()) + "-" + std::to_string(ports.back());
  }
  std::string out;
  for (int p : ports) {
    out += (out.empty() ? "" : ", ") + std::to_string(p);
  }
  return out;
}

std::uint64_t port_key_of(std::string_view job_id) {
  std::uint64_t h = k_fnv_offset;
  for (char c : job_id) {
    h = (h ^ static_cast<unsigned char>(c)) * k_fnv_prime;
  }
  return h;
}

}  // namespace ddprun::sched
