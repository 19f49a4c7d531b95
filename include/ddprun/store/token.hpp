#pragma once
// Reading the rendezvous token an agent (or `ddprun status`) uses; the choice of source is
// the pure decide_token_source in store/auth.hpp.

#include "ddprun/store/auth.hpp"
#include "ddprun/store/client.hpp"
#include "ddprun/util/result.hpp"

#include <optional>
#include <string>

namespace ddprun::store {

/// The token, or nullopt when there is none (no source, or the job's token file is absent).
/// Errors (ErrorCode::config, one line naming the file): unreadable, empty, or readable by
/// the group or others.
Result<std::optional<std::string>> load_token(const TokenSource& source);

/// Client options for a rendezvous client: the handshake with the token, or the probe without.
void use_rdzv_auth(ClientOptions& options, const std::optional<std::string>& token);

}  // namespace ddprun::store
