#pragma once
#include "ddprun/config/launch_config.hpp"

namespace ddprun::app {
/// Configures spdlog for ddprun's own messages: stderr, glog-like prefix close to torchrun
/// main's (`I1129 10:40:00.123456 4242 ddprun] message`), at `level`.
void setup_logging(config::LogLevel level);
}  // namespace ddprun::app
