#pragma once
// The JSON of the header's parts that more than the header's codec writes (`ddprun status
// --json` too): one writer each, found by nlohmann::json through ADL, so the two never drift.

#include "ddprun/rdzv/state.hpp"

#include <nlohmann/json.hpp>

namespace ddprun::rdzv {

/// {"node", "round", "failures", "reason"}
void to_json(nlohmann::json& j, const Exclusion& x);
/// {"round", "left", "lost"}
void to_json(nlohmann::json& j, const RoundEnd& e);

}  // namespace ddprun::rdzv
