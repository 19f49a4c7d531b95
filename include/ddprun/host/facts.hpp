#pragma once
// What this machine is: the facts config::resolve needs (CPUs, GPUs, its own executable), and
// its names and addresses (is a host this one, which address to bind or advertise).

#include "ddprun/config/launch_config.hpp"
#include "ddprun/util/result.hpp"

#include <string>
#include <vector>

namespace ddprun::host {

struct NvmlInfo;

/// CPU count from the inherited affinity mask; GPU count from CUDA_VISIBLE_DEVICES, else from
/// `nvml` (nullptr: NVML was not asked, i.e. no GPU count is needed), else zero; the directory
/// of this executable and an access(X_OK) test on regular files, for default_python().
config::HostFacts gather_host_facts(const util::Env& env, const NvmlInfo* nvml);

/// This executable's path from /proc/self/exe (symlinks resolved), or "" when it cannot be read.
std::string self_exe_path();

/// The CPUs of this process's affinity mask, ascending.
std::vector<int> affinity_cpus();

/// True when `host` names this machine: one of its addresses binds locally.
bool is_local_host(const std::string& host);

/// The local address the kernel would use to reach host:port (no packet is sent), or ""
/// when it cannot be found.
std::string route_source_address(const std::string& host, int port);

/// True when `host` resolves to at least one address here (/etc/hosts, DNS...).
bool resolves(const std::string& host);

/// True for "localhost" and loopback literals: a job that names them is on one machine.
bool is_loopback_name(const std::string& host);

/// The first address of `host` this machine can bind, or "" (then bind every interface).
std::string bindable_address(const std::string& host);

/// Where a store that clients reach as `host` must listen: the one address `host` names when
/// it names exactly one and this machine has it (clients resolving `host` find nothing else),
/// otherwise "" (every interface).
std::string exact_bind_address(const std::string& host);

/// A TCP port that was free a moment ago on `host` (bind to 0, read, close; racy by nature).
Result<int> find_free_port(const std::string& host);

/// gethostname(), "localhost" when it fails: no lookup.
std::string host_name();

/// This machine's name as Python's socket.getfqdn() gives it, and so torchrun (MASTER_ADDR of
/// a one-node job, the failure summary's host): the name and aliases of the reverse lookup of
/// the address the host name resolves to (pick_fqdn), or the host name when a lookup fails.
/// Where the host's name resolves to 127.0.0.1 that is `localhost`, as under torchrun.
std::string host_fqdn();

}  // namespace ddprun::host
