// libFuzzer entry point for the rendezvous option parsers: --rdzv-conf text through
// parse_rdzv_conf and, when it parses, through parse_rdzv_settings (the c10d keys); the same
// text through --rdzv-endpoint's and --nnodes's parsers. Every parse must give a value or a
// one-line error; a parsed --rdzv-conf must re-render to text that parses to the same map, and
// parsed settings must hold only positive timeouts. config::read_rdzv_conf (quotes, known keys
// per backend) must keep only known keys and give one-line warnings.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rdzv_conf.hpp"
#include "ddprun/rdzv/settings.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

constexpr int k_default_port = 29400;
constexpr int k_max_port = 65535;
constexpr int k_node_choices = 4;

template <typename T>
void check_one_line(const ddprun::Result<T>& r) {
  if (!r && r.error().message.find_first_of("\r\n") != std::string::npos) {
    std::abort();
  }
}

std::string render_conf(const std::map<std::string, std::string>& conf) {
  std::string out;
  for (const auto& [key, value] : conf) {
    out += (out.empty() ? "" : ",") + key + "=" + value;
  }
  return out;
}

void check_conf(std::string_view text, int min_nodes, int max_nodes) {
  auto conf = ddprun::config::parse_rdzv_conf(text);
  check_one_line(conf);
  if (!conf) {
    return;
  }
  for (const auto& [key, value] : *conf) {
    if (key.empty() || value.empty() || key.find_first_of("=,") != std::string::npos ||
        value.find(',') != std::string::npos) {
      std::abort();
    }
  }
  auto again = ddprun::config::parse_rdzv_conf(render_conf(*conf));
  if (!again || *again != *conf) {
    std::abort();
  }
  auto settings = ddprun::rdzv::parse_rdzv_settings(*conf, "fuzz", min_nodes, max_nodes);
  check_one_line(settings);
  if (settings &&
      (settings->join_timeout.count() <= 0 || settings->read_timeout.count() <= 0 ||
       settings->last_call_timeout.count() <= 0 || settings->close_timeout.count() <= 0 ||
       settings->heartbeat_timeout.count() <= 0 || settings->keep_alive_interval.count() <= 0 ||
       settings->keep_alive_max_attempt <= 0)) {
    std::abort();
  }
}

bool is_known_key(const std::string& key) {
  for (const auto& k : ddprun::config::rdzv_conf_keys()) {
    if (k.key == key) {
      return true;
    }
  }
  return false;
}

void check_read(std::string_view text) {
  for (const char* backend : {"static", "c10d"}) {
    auto read = ddprun::config::read_rdzv_conf(text, backend);
    check_one_line(read);
    if (!read) {
      continue;
    }
    for (const auto& line : read->warnings) {
      if (line.find_first_of("\r\n") != std::string::npos) {
        std::abort();
      }
    }
    for (const auto& [key, value] : read->pairs) {
      if (!is_known_key(key) || value.empty()) {
        std::abort();
      }
    }
  }
}

void check_endpoint_and_nodes(std::string_view text) {
  auto ep = ddprun::config::parse_endpoint(text, k_default_port);
  check_one_line(ep);
  if (ep && (ep->host.empty() || ep->port < 0 || ep->port > k_max_port)) {
    std::abort();
  }
  auto nodes = ddprun::config::parse_nnodes(text);
  check_one_line(nodes);
  if (nodes && (nodes->min < 1 || nodes->min > nodes->max)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) {
    return 0;
  }
  // The first byte picks an --nnodes range, some of them invalid (0:0, 3:2).
  const int min_nodes = data[0] % k_node_choices;
  const int max_nodes = (data[0] / k_node_choices) % k_node_choices;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  check_conf(text, min_nodes, max_nodes);
  check_read(text);
  check_endpoint_and_nodes(text);
  return 0;
}
