#include "ddprun/config/torchrun_flavor.hpp"

namespace ddprun::config {

namespace {

bool at_least(TorchRelease v, int major, int minor) {
  return v.major > major || (v.major == major && v.minor >= minor);
}

}  // namespace

TorchrunFlavor torchrun_flavor(std::optional<TorchRelease> torch) {
  if (!torch) {
    return TorchrunFlavor{};
  }
  TorchrunFlavor f;
  f.nccl_names = at_least(*torch, 2, 2) ? NcclNames::current : NcclNames::legacy;
  f.one_node_agent_store = at_least(*torch, 2, 4);
  f.signals_env = at_least(*torch, 2, 9);
  return f;
}

std::string render_flavor(const TorchrunFlavor& flavor) {
  std::string s;
  switch (flavor.nccl_names) {
    case NcclNames::current:
      s = "TORCH_NCCL_ASYNC_ERROR_HANDLING";
      break;
    case NcclNames::legacy:
      s = "NCCL_ASYNC_ERROR_HANDLING";
      break;
    case NcclNames::both:
      s = "TORCH_NCCL_ASYNC_ERROR_HANDLING and NCCL_ASYNC_ERROR_HANDLING";
      break;
  }
  s += flavor.one_node_agent_store ? ", the agent's store for a one-node job"
                                   : ", worker rank 0's store for a one-node c10d job";
  if (flavor.signals_env) {
    s += ", TORCHELASTIC_SIGNALS_TO_HANDLE";
  }
  return s;
}

}  // namespace ddprun::config
