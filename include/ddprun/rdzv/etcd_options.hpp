#pragma once
// How ddprun reaches the etcd cluster of --rdzv-backend etcd-v3: the client's options from the
// resolved --rdzv-endpoint members and --rdzv-conf keys (config::EtcdSettings). Shared by the
// agents and `ddprun status`, so both reach etcd the same way.

#include "ddprun/config/launch_config.hpp"
#include "ddprun/etcd/client.hpp"
#include "ddprun/util/result.hpp"

namespace ddprun::rdzv {

/// The members (the first one asked chosen at random: agents spread over the members), the TLS
/// files, and the username with the password read from password_file (one trailing newline
/// removed). ErrorCode::config naming the file when it cannot be read.
Result<etcd::ClientOptions> etcd_client_options(const config::EtcdSettings& settings);

}  // namespace ddprun::rdzv
