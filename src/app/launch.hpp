#pragma once
#include "ddprun/util/env.hpp"

#include <string>
#include <vector>

namespace ddprun::app {
/// The launcher proper (`ddprun [flags] script args...`). Throws Fatal on usage/config errors.
int launch(const std::vector<std::string>& args, const util::Env& env);
}  // namespace ddprun::app
