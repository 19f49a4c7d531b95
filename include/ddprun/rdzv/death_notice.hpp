#pragma once
// What an agent's guardian tells the rendezvous when the agent is killed (process/
// guardian_notice.hpp): where the rendezvous is and how to reach it, which node died and the
// round it ran in. The agent refreshes it at each change; `ddprun __agent-died` acts on it
// (app/agent_died.cpp). Pure: the JSON codec and the header change.
//
// Acting on a notice must do no harm when it is stale (the agent left, the round moved on):
// the header changes only when its current round is the named one, complete and not closed.

#include "ddprun/rdzv/state.hpp"
#include "ddprun/util/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddprun::rdzv {

struct DeathNotice {
  enum class Backend { store, etcd_v3 };
  Backend backend = Backend::store;
  std::string run_id;
  std::string node_id;               ///< NodeDesc::id() of the dead agent
  std::optional<int> round;          ///< the round it ran in; nullopt while joining
  std::optional<std::string> token;  ///< the rendezvous token, when there is one
  // store (c10d, static): the rendezvous store.
  std::string host;
  int port = 0;
  // etcd-v3: the members ("https://h:2379,...") and how to reach them, the run's generation.
  std::string members;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string username;
  std::string password;
  std::string key_prefix;
  std::int64_t generation = 0;
  std::int64_t lease = 0;  ///< the agent's lease (0: none)
  bool operator==(const DeathNotice&) const = default;
};

std::string encode_notice(const DeathNotice& notice);
/// Parses encode_notice's output; a protocol error naming what is wrong otherwise.
Result<DeathNotice> decode_notice(std::string_view text);

/// The header after the node's death: its round ends with the node lost. nullopt when the
/// header is not in that round, complete and open (a stale notice), or none is named.
std::optional<RoundHeader> with_node_dead(const RoundHeader& h, const DeathNotice& notice);

/// The heartbeat value that reads as silent for ever (is_silent), so a closer skips the slot.
inline constexpr const char* k_dead_heartbeat = "0";

/// "rendezvous 'job' at 127.0.0.1:29400" / "rendezvous 'job' in etcd http://h:2379".
std::string describe_rendezvous(const DeathNotice& notice);

}  // namespace ddprun::rdzv
