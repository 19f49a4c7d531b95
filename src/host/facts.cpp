#include "ddprun/host/facts.hpp"

#include "ddprun/host/gpus.hpp"
#include "ddprun/host/names.hpp"
#include "ddprun/host/nvml.hpp"
#include "ddprun/net/asio.hpp"
#include "ddprun/util/strings.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

namespace ddprun::host {

namespace {

std::string random_uuid4() {
  unsigned char b[16] = {};
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  urandom.read(reinterpret_cast<char*>(b), sizeof b);
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);
  char out[37];
  (void)std::snprintf(out, sizeof out,
                      "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                      b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                      b[13], b[14], b[15]);
  return out;
}

bool is_executable_file(const std::string& path) {
  struct stat st = {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string directory_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
}

}  // namespace

std::string self_exe_path() {
  std::string path(PATH_MAX, '\0');
  auto n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) {
    return "";
  }
  path.resize(static_cast<std::size_t>(n));
  return path;
}

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    return cpus;
  }
  for (std::size_t c = 0; c < static_cast<std::size_t>(CPU_SETSIZE); ++c) {
    if (CPU_ISSET(c, &set)) {
      cpus.push_back(static_cast<int>(c));
    }
  }
  return cpus;
}

config::HostFacts gather_host_facts(const util::Env& env, const NvmlInfo* nvml) {
  config::HostFacts host;
  host.cpu_count = std::max(1, static_cast<int>(affinity_cpus().size()));
  std::optional<int> nvml_count;
  if (nvml != nullptr && nvml->loaded) {
    nvml_count = static_cast<int>(nvml->devices.size());
  }
  auto gpus = host::decide_gpu_count(env.get("CUDA_VISIBLE_DEVICES"), nvml_count);
  host.gpu_count = gpus.count;
  host.gpu_source = gpus.source;
  host.random_run_id = random_uuid4();
  host.exe_dir = directory_of(self_exe_path());
  host.is_executable = is_executable_file;
  return host;
}

namespace {

std::vector<asio::ip::address> resolve_addresses(const std::string& host) {
  asio::io_context ctx;
  asio::ip::udp::resolver resolver(ctx);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, "0", ec);
  std::vector<asio::ip::address> out;
  if (!ec) {
    for (const auto& r : results) {
      out.push_back(r.endpoint().address());
    }
  }
  return out;
}

bool binds_locally(const asio::ip::address& addr) {
  asio::io_context ctx;
  asio::ip::udp::socket socket(ctx);
  boost::system::error_code ec;
  socket.open(addr.is_v6() ? asio::ip::udp::v6() : asio::ip::udp::v4(), ec);
  if (!ec) {
    socket.bind(asio::ip::udp::endpoint(addr, 0), ec);
  }
  return !ec;
}

}  // namespace

bool resolves(const std::string& host) { return !resolve_addresses(host).empty(); }

bool is_local_host(const std::string& host) {
  for (const auto& addr : resolve_addresses(host)) {
    if (binds_locally(addr)) {
      return true;
    }
  }
  return false;
}

bool is_loopback_name(const std::string& host) {
  if (host == "localhost" || host == "localhost.localdomain") {
    return true;
  }
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(host, ec);
  return !ec && addr.is_loopback();
}

std::string bindable_address(const std::string& host) {
  for (const auto& addr : resolve_addresses(host)) {
    if (binds_locally(addr)) {
      return addr.to_string();
    }
  }
  return "";
}

std::string exact_bind_address(const std::string& host) {
  auto addrs = resolve_addresses(host);
  std::sort(addrs.begin(), addrs.end());
  addrs.erase(std::unique(addrs.begin(), addrs.end()), addrs.end());
  return addrs.size() == 1 && binds_locally(addrs.front()) ? addrs.front().to_string() : "";
}

std::string route_source_address(const std::string& host, int port) {
  for (const auto& addr : resolve_addresses(host)) {
    asio::io_context ctx;
    asio::ip::udp::socket socket(ctx);
    boost::system::error_code ec;
    socket.open(addr.is_v6() ? asio::ip::udp::v6() : asio::ip::udp::v4(), ec);
    if (!ec) {
      socket.connect(asio::ip::udp::endpoint(addr, static_cast<unsigned short>(port)), ec);
    }
    if (!ec) {
      return socket.local_endpoint(ec).address().to_string();
    }
  }
  return "";
}

Result<int> find_free_port(const std::string& host) {
  asio::io_context ctx;
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(ctx);
  auto results = resolver.resolve(host, "0", ec);
  if (ec || results.empty()) {
    return make_error(ErrorCode::io, "resolve " + host + ": " + ec.message());
  }
  asio::ip::tcp::acceptor acceptor(ctx);
  acceptor.open(results.begin()->endpoint().protocol(), ec);
  if (!ec) {
    acceptor.bind(results.begin()->endpoint(), ec);
  }
  if (ec) {
    return make_error(ErrorCode::io, "bind " + host + ":0: " + ec.message());
  }
  return static_cast<int>(acceptor.local_endpoint().port());
}

namespace {

std::optional<std::string> own_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) {
    return std::nullopt;
  }
  return std::string(name);
}

}  // namespace

std::string host_name() { return own_name().value_or("localhost"); }

std::string host_fqdn() {
  const auto own = own_name();
  if (!own) {
    return "localhost";
  }
  const char* name = own->c_str();
  // As Python's gethostbyaddr(name): the first address getaddrinfo gives, looked up backwards.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  addrinfo* info = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &info) != 0 || info == nullptr) {
    return name;
  }
  const void* addr = nullptr;
  socklen_t len = 0;
  if (info->ai_family == AF_INET) {
    addr = &reinterpret_cast<const sockaddr_in*>(info->ai_addr)->sin_addr;
    len = sizeof(in_addr);
  } else if (info->ai_family == AF_INET6) {
    addr = &reinterpret_cast<const sockaddr_in6*>(info->ai_addr)->sin6_addr;
    len = sizeof(in6_addr);
  }
  const int family = info->ai_family;
  hostent entry{};
  hostent* found = nullptr;
  std::vector<char> buffer(16384);
  int err = 0;
  const bool ok =
      addr != nullptr &&
      gethostbyaddr_r(addr, len, family, &entry, buffer.data(), buffer.size(), &found, &err) == 0 &&
      found != nullptr && found->h_name != nullptr;
  freeaddrinfo(info);
  if (!ok) {
    return name;
  }
  std::vector<std::string> aliases;
  for (char** a = found->h_aliases; a != nullptr && *a != nullptr; ++a) {
    aliases.emplace_back(*a);
  }
  return pick_fqdn(found->h_name, aliases);
}

}  // namespace ddprun::host
