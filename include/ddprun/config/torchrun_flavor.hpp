#pragma once
// What the workers get where torchrun's versions differ: the torchrun of the workers' torch
// decides (its version found on disk by host/torch_version.hpp, or DDPRUN_WORKER_TORCH). An
// unknown torch gets the newest torchrun's, with both NCCL names. docs/from-torchrun.md has
// the table; tests/e2e/torchrun_env/ the captures it is checked against.

#include <optional>
#include <string>

namespace ddprun::config {

/// Which name of NCCL's async-error-handling variable the workers get: torch >= 2.2 reads
/// TORCH_NCCL_ASYNC_ERROR_HANDLING and warns about the old name, older torch reads only
/// NCCL_ASYNC_ERROR_HANDLING; both when the workers' torch is not known.
enum class NcclNames { both, current, legacy };

struct TorchrunFlavor {
  NcclNames nccl_names = NcclNames::both;  ///< >= 2.2: current; older: legacy
  /// >= 2.4 (pytorch#128096): a single-node c10d job's workers use the agent's store
  /// (TORCHELASTIC_USE_AGENT_STORE=True); older: worker rank 0 hosts it on a free port (False).
  bool one_node_agent_store = true;
  /// >= 2.9 (pytorch#160690): every worker inherits TORCHELASTIC_SIGNALS_TO_HANDLE, the
  /// --signals-to-handle text torchrun writes into its own environment.
  bool signals_env = true;
  bool operator==(const TorchrunFlavor&) const = default;
};

/// A torch version as major.minor.
struct TorchRelease {
  int major = 0;
  int minor = 0;
};

/// What the torchrun of `torch` gives its workers; nullopt (not known): the newest torchrun's,
/// with both NCCL names.
TorchrunFlavor torchrun_flavor(std::optional<TorchRelease> torch);

/// "TORCH_NCCL_ASYNC_ERROR_HANDLING, the agent's store for one node,
/// TORCHELASTIC_SIGNALS_TO_HANDLE": what `flavor` gives, for the INFO line.
std::string render_flavor(const TorchrunFlavor& flavor);

}  // namespace ddprun::config
