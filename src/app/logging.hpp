#pragma once
#include <string>

namespace ddprun::app {
/// Configures spdlog for ddprun's own messages: stderr, glog-like prefix close to torchrun
/// main's (`I1129 10:40:00.123456 4242 ddprun] message`), level by name.
void setup_logging(const std::string& level);
}  // namespace ddprun::app
