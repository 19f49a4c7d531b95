#include "ddprun/config/rendezvous_hint.hpp"

#include "ddprun/config/backends.hpp"

#include <algorithm>

namespace ddprun::config {
namespace {

const ConfigItem* item_of(const LaunchConfig& config, const std::string& name) {
  auto it = std::find_if(config.items.begin(), config.items.end(),
                         [&](const ConfigItem& i) { return i.name == name; });
  return it == config.items.end() ? nullptr : &*it;
}

bool is_default(const LaunchConfig& config, const std::string& name) {
  const auto* item = item_of(config, name);
  return item == nullptr || item->origin == "default";
}

bool from_scheduler(const LaunchConfig& config, const std::string& name) {
  const auto* item = item_of(config, name);
  return item != nullptr && item->origin != "default" && item->origin.rfind("flag ", 0) != 0 &&
         item->origin.rfind("env ", 0) != 0;
}

/// The ways to start a job by hand, one per line.
constexpr const char* k_fixes =
    "Without a scheduler, start every node with either\n"
    "  --master_addr <node-rank-0 host> --node_rank K (K = 0 on the host of the store, a "
    "different K below --nnodes on each other node), or\n"
    "  --rdzv_backend c10d --rdzv_endpoint <host>:<port> (the same on every node),\n"
    "or run ddprun from srun or a PBS job, which fills these in.";

std::string scheduler_hint(const std::string& store) {
  return "The scheduler placed the store at " + store +
         ": are the other nodes' agents started (one ddprun per node) and can they reach it?";
}

std::string loopback_line(const std::string& host, const std::string& flag, bool is_default) {
  return flag + " " + host + (is_default ? " (the default)" : "") +
         " is a loopback address that agents on other machines cannot reach.\n";
}

std::string static_hint(const LaunchConfig& config, const Endpoint& ep, bool store_is_loopback) {
  const std::string store = ep.host + ":" + std::to_string(ep.port);
  if (from_scheduler(config, "master_addr")) {
    return scheduler_hint(store);
  }
  std::string msg = "This agent is --node_rank " + std::to_string(config.rdzv.node_rank) + " of " +
                    std::to_string(config.rdzv.nnodes.max) + " with its store at " + store + ".\n";
  if (store_is_loopback) {
    msg +=
        loopback_line(config.rdzv.master_addr, "--master_addr", is_default(config, "master_addr"));
  }
  if (is_default(config, "node_rank")) {
    msg += "--node_rank was not given, so every node defaults to 0.\n";
  }
  return msg + k_fixes;
}

std::string c10d_hint(const LaunchConfig& config, const Endpoint& ep, bool store_is_loopback) {
  const std::string store = ep.host + ":" + std::to_string(ep.port);
  if (from_scheduler(config, "rdzv_endpoint")) {
    return scheduler_hint(store);
  }
  std::string msg = "This agent waits at --rdzv_endpoint " + store + " with --rdzv_id " +
                    config.rdzv.rdzv_id +
                    ": every node must be started with the same --rdzv_endpoint and --rdzv_id.\n";
  if (store_is_loopback) {
    msg += loopback_line(ep.host, "--rdzv_endpoint host", false);
  }
  return msg + "Or run ddprun from srun or a PBS job, which fills these in.";
}

}  // namespace

std::string render_rendezvous_hint(const LaunchConfig& config, const Endpoint& store,
                                   bool store_is_loopback) {
  const bool node_zero = row_of(config.rdzv.rdzv_backend).store_host == StoreHost::node_rank_zero;
  return node_zero ? static_hint(config, store, store_is_loopback)
                   : c10d_hint(config, store, store_is_loopback);
}

}  // namespace ddprun::config
