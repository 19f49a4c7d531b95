#pragma once
// What etcd_kv.cpp and etcd_kv_feeds.cpp share. Internal to the rdzv module.

#include "ddprun/etcd/codec.hpp"

#include <string>

namespace ddprun::rdzv {

/// What etcd said when it ended a watch: its reason, or the compaction.
std::string cancel_text(const etcd::WatchMessage& m);

}  // namespace ddprun::rdzv
