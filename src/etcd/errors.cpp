// Error answers and what to do about them, and the newline framing of streams.

#include "ddprun/etcd/codec.hpp"
#include "ddprun/util/backoff.hpp"

#include <nlohmann/json.hpp>

namespace ddprun::etcd {
namespace {

constexpr unsigned k_http_server_error = 500;
constexpr std::size_t k_max_message_chars = 200;

/// Messages of etcdserver errors that another member may not give (etcdserver/api/v3rpc/
/// rpctypes/error.go): the member has no leader or is not it, or raft did not commit in time.
constexpr std::string_view k_member_trouble[] = {
    "etcdserver: no leader",         "etcdserver: not leader",     "etcdserver: leader changed",
    "etcdserver: request timed out", "etcdserver: server stopped", "etcdserver: not capable",
};

std::string one_line(std::string_view text) {
  std::string out(text.substr(0, k_max_message_chars));
  for (char& c : out) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return out;
}

}  // namespace

ServerError parse_server_error(unsigned http_status, std::string_view body) {
  ServerError e{http_status, 0, {}};
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("code")) {
    e.grpc_code = j["code"].is_number_integer() ? j["code"].get<int>() : 0;
    const auto& m = j.contains("error") ? j["error"] : j["message"];
    e.message = m.is_string() ? m.get<std::string>() : std::string();
  }
  if (e.message.empty()) {
    e.message = body.empty() ? "HTTP " + std::to_string(http_status) : one_line(body);
  }
  return e;
}

bool should_fail_over(const ServerError& e) {
  if (e.grpc_code == k_grpc_unavailable || e.grpc_code == k_grpc_deadline_exceeded) {
    return true;
  }
  for (std::string_view m : k_member_trouble) {
    if (e.message.find(m) != std::string::npos) {
      return true;
    }
  }
  return e.grpc_code == 0 && e.http_status >= k_http_server_error;
}

bool may_retry_elsewhere(const ServerError& e, bool idempotent) {
  if (!should_fail_over(e)) {
    return false;
  }
  return idempotent || e.message.find("etcdserver: no leader") != std::string::npos ||
         e.message.find("etcdserver: not leader") != std::string::npos;
}

bool is_overloaded(const ServerError& e) {
  return e.grpc_code == k_grpc_resource_exhausted ||
         e.message.find("etcdserver: too many requests") != std::string::npos;
}

std::chrono::milliseconds overload_pause(int attempt, double spread) {
  constexpr int k_doublings = 10;
  return util::backoff_pause(std::chrono::milliseconds(100), attempt, k_doublings, spread);
}

bool is_stale_token(const ServerError& e) {
  return e.grpc_code == k_grpc_unauthenticated ||
         e.message.find("invalid auth token") != std::string::npos;
}

std::vector<std::string> take_lines(std::string& buffer) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n', start)) {
    std::string line = buffer.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') {
      line.pop_back();
    }
    if (!line.empty()) {
      lines.push_back(std::move(line));
    }
    start = nl + 1;
  }
  buffer.erase(0, start);
  return lines;
}

}  // namespace ddprun::etcd
