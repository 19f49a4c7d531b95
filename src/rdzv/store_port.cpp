#include "ddprun/rdzv/store_port.hpp"

#include "ddprun/sched/ports.hpp"
#include "ddprun/util/files.hpp"
#include "ddprun/util/proc_net.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <thread>

namespace ddprun::rdzv {
namespace {

/// A closed port answers at once; this only bounds the client's own retries.
constexpr std::chrono::milliseconds k_probe_connect_timeout{300};
/// A foreign service that accepts and never answers costs at most this per candidate.
constexpr std::chrono::milliseconds k_probe_op_timeout{2000};
constexpr std::chrono::milliseconds k_probe_pause{500};
/// Passes in a row in which a store refused our token and none answered as ours before the
/// refusal is reported (the host may still be starting while another job's store answers).
constexpr int k_refusal_passes = 6;
/// A listener on the endpoint answers a TCP connection at once; a lost SYN gets one retry.
constexpr std::chrono::milliseconds k_endpoint_connect_bound{1500};
/// Each step of the endpoint check: a store answers in milliseconds.
constexpr std::chrono::milliseconds k_endpoint_check_bound{4000};

enum class Probe { ours, other, refused_token };

Probe probe(const store::ClientOptions& base, int port, const std::string& marker,
            std::string& why) {
  auto options = base;
  options.port = static_cast<std::uint16_t>(port);
  options.connect_timeout = k_probe_connect_timeout;
  options.op_timeout = k_probe_op_timeout;
  store::SyncClient client(options);
  auto present = client.check({marker});
  if (present && *present) {
    return Probe::ours;
  }
  if (present) {
    why = fmt::format("{}:{} is not this run's rendezvous store", options.host, port);
    return Probe::other;
  }
  why = present.error().message;
  return present.error().code == ErrorCode::config ? Probe::refused_token : Probe::other;
}

bool is_pid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(),
                                      [](unsigned char c) { return c >= '0' && c <= '9'; });
}

/// Whether one of `dir`'s open files (/proc/<pid>/fd) is a socket in `inodes`. Processes come
/// and go meanwhile: every filesystem error just ends the look.
bool has_socket(const std::filesystem::path& dir, const std::vector<std::uint64_t>& inodes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(dir / "fd", ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code link_ec;
    const auto inode = util::parse_socket_link(fs::read_symlink(it->path(), link_ec).string());
    if (inode && std::find(inodes.begin(), inodes.end(), *inode) != inodes.end()) {
      return true;
    }
  }
  return false;
}

/// The first process with an fd on one of `inodes`, with its command name; pid 0 when none.
PortHolder socket_owner(const std::vector<std::uint64_t>& inodes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (is_pid_name(name) && has_socket(it->path(), inodes)) {
      auto comm = util::read_file((it->path() / "comm").string()).value_or("");
      comm.erase(std::remove(comm.begin(), comm.end(), '\n'), comm.end());
      return {std::stol(name), comm};
    }
  }
  return {};
}

/// Whether anything accepts TCP connections at host:port within `bound`.
bool accepts_connections(const std::string& host, std::uint16_t port,
                         std::chrono::milliseconds bound) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  asio::ip::tcp::resolver resolver(io);
  boost::system::error_code result = asio::error::timed_out;
  resolver.async_resolve(host, std::to_string(port), [&](auto ec, auto endpoints) {
    if (ec) {
      result = ec;
      return;
    }
    asio::async_connect(socket, endpoints, [&](auto connect_ec, auto) { result = connect_ec; });
  });
  io.run_for(bound);
  return !result;
}

}  // namespace

EndpointCheck check_endpoint(const store::ClientOptions& base, const std::string& key) {
  if (!accepts_connections(base.host, base.port, k_endpoint_connect_bound)) {
    return {};
  }
  auto options = base;
  options.detect_dialect = true;
  options.connect_timeout = k_endpoint_check_bound;
  options.op_timeout = k_endpoint_check_bound;
  options.probe_timeout = k_endpoint_check_bound;
  store::SyncClient client(options);
  auto present = client.check({key});
  if (present && client.dialect() != store::Dialect::d2) {
    return {EndpointAnswer::old_store, std::string(store::to_string(client.dialect()))};
  }
  if (present || present.error().code == ErrorCode::config) {
    return {EndpointAnswer::store, ""};
  }
  if (!accepts_connections(base.host, base.port, k_endpoint_connect_bound)) {
    return {};  // the listener went away meanwhile: as if nobody had been there
  }
  return {EndpointAnswer::not_a_store, present.error().message};
}

std::optional<PortHolder> find_port_holder(int port) {
  std::vector<std::uint64_t> inodes;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    const auto found = util::parse_listening_inodes(util::read_file(table).value_or(""), port);
    inodes.insert(inodes.end(), found.begin(), found.end());
  }
  if (inodes.empty()) {
    return std::nullopt;
  }
  return socket_owner(inodes);
}

std::string describe(const PortHolder& holder) {
  if (holder.pid == 0) {
    return "held by a process this user cannot see";
  }
  return fmt::format("held by pid {} ({})", holder.pid, holder.command);
}

Error with_port_holder(Error e, int port) {
  if (auto holder = find_port_holder(port)) {
    e.message += ", " + describe(*holder);
  }
  return e;
}

Result<int> listen_on_first_free(store::Server& server, const std::string& bind_addr,
                                 const std::string& host, const std::vector<int>& candidates) {
  std::string last;
  for (int port : candidates) {
    auto ok = server.listen(bind_addr, static_cast<std::uint16_t>(port));
    if (ok) {
      return port;
    }
    last = with_port_holder(ok.error(), port).message;
    spdlog::info("derived rendezvous port {} is taken ({}); trying the next", port, last);
  }
  return make_error(ErrorCode::io,
                    fmt::format("none of the job's derived rendezvous ports {} is free on {} "
                                "(last: {}); pass --rdzv-endpoint HOST:PORT or --master-port",
                                sched::describe_ports(candidates), host, last));
}

Result<int> find_store_port(const std::string& host, const std::vector<int>& candidates,
                            const std::string& marker, const store::ClientOptions& base,
                            std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string why;
  int refusals = 0;
  for (;;) {
    std::optional<std::string> token_refusal;
    for (int port : candidates) {
      const Probe p = probe(base, port, marker, why);
      if (p == Probe::ours) {
        return port;
      }
      if (p == Probe::refused_token) {
        token_refusal = why;
      }
    }
    refusals = token_refusal ? refusals + 1 : 0;
    if (token_refusal && refusals >= k_refusal_passes) {
      return make_error(ErrorCode::config, *token_refusal);
    }
    if (std::chrono::steady_clock::now() + k_probe_pause >= deadline) {
      break;
    }
    std::this_thread::sleep_for(k_probe_pause);
  }
  return make_error(
      ErrorCode::timeout,
      fmt::format("no rendezvous store of this run answered on {} ports {} within "
                  "{} s (last: {})",
                  host, sched::describe_ports(candidates),
                  std::chrono::duration_cast<std::chrono::seconds>(timeout).count(), why));
}

}  // namespace ddprun::rdzv
