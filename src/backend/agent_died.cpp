// `ddprun __agent-died` (agent_died.hpp): a killed agent's guardian tells the rendezvous.

#include "ddprun/backend/agent_died.hpp"

#include "ddprun/etcd/client.hpp"
#include "ddprun/etcd/endpoints.hpp"
#include "ddprun/net/run_now.hpp"
#include "ddprun/process/guardian_notice.hpp"
#include "ddprun/rdzv/death_notice.hpp"
#include "ddprun/rdzv/decide.hpp"
#include "ddprun/rdzv/etcd_kv.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/header_update.hpp"
#include "ddprun/rdzv/signed_kv.hpp"
#include "ddprun/rdzv/store_kv.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/random.hpp"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <memory>

namespace ddprun::backend {

namespace {

using rdzv::DeathNotice;

/// What became of the named round.
struct Told {
  bool ended = false;  ///< this command ended it
  std::string what;    ///< "round 3 ends", "round 3 had already ended", ...
};

std::string read_stdin() {
  std::string text;
  char buf[4096];
  while (text.size() <= process::k_max_notice_bytes) {
    ssize_t n = read(0, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

Told round_ended(int round) { return Told{true, "round " + std::to_string(round) + " ends"}; }
Told round_gone(int round) {
  return Told{false, "round " + std::to_string(round) + " had already ended or the job is over"};
}
Told was_joining() { return Told{false, "it was joining; its slot now reads as silent"}; }
/// Ends the notice's round with the node lost, when the header is still in it: the header
/// update every agent makes (header_update.hpp), tried k_notice_attempts times with a short
/// spread pause after each race lost to another writer.
asio::awaitable<Result<Told>> end_round(asio::io_context& io, rdzv::Kv& kv, const DeathNotice& n) {
  if (!n.round) {
    co_return was_joining();
  }
  asio::steady_timer timer(io);
  rdzv::HeaderUpdate how{[](int lost) { return lost >= k_notice_attempts; },
                         [&timer](int lost) -> asio::awaitable<void> {
                           timer.expires_after(rdzv::contention_backoff(
                               lost, k_notice_backoff_cap, util::agent_random().unit()));
                           boost::system::error_code ec;
                           co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                         },
                         nullptr, "the round header kept changing"};
  const rdzv::HeaderChange change = [&n](const rdzv::RoundHeader& h) {
    return rdzv::with_node_dead(h, n);
  };
  auto done = co_await rdzv::update_header(kv, rdzv::state_key(n.run_id), change, how);
  if (!done) {
    co_return done.error();
  }
  co_return done->changed ? round_ended(*n.round) : round_gone(*n.round);
}

asio::awaitable<Result<Told>> tell_store(asio::io_context& io, const DeathNotice& n) {
  store::ClientOptions options;
  options.host = n.host;
  options.port = static_cast<std::uint16_t>(n.port);
  options.connect_timeout = k_notice_call_timeout;
  options.op_timeout = k_notice_call_timeout;
  store::use_rdzv_auth(options, n.token);
  rdzv::StoreKv kv(io, options);
  auto beat = co_await kv.set(rdzv::heartbeat_key(n.run_id, n.node_id), rdzv::k_dead_heartbeat);
  if (!beat) {
    co_return beat.error();
  }
  co_return co_await end_round(io, kv, n);
}

Result<std::unique_ptr<etcd::Client>> etcd_client(asio::io_context& io, const DeathNotice& n) {
  auto members = etcd::parse_endpoints(n.members);
  if (!members) {
    return members.error();
  }
  etcd::ClientOptions options;
  options.endpoints = std::move(*members);
  options.tls = {n.ca_file, n.cert_file, n.key_file};
  options.username = n.username;
  options.password = n.password;
  options.call_timeout = k_notice_call_timeout;
  return etcd::Client::make(io, std::move(options));
}

asio::awaitable<Result<Told>> tell_etcd(asio::io_context& io, const DeathNotice& n) {
  auto client = etcd_client(io, n);
  if (!client) {
    co_return client.error();
  }
  // Revoking the lease deletes the agent's alive and heartbeat keys: the watchers wake. A
  // lease that already ran out is no error here: the header change still applies.
  std::string lease_note;
  if (n.lease != 0) {
    auto revoked = co_await (*client)->lease_revoke(n.lease);
    lease_note = revoked ? "revoked its lease; " : "its lease: " + revoked.error().message + "; ";
  }
  const auto prefix =
      rdzv::etcd_generation_prefix(rdzv::etcd_run_prefix(n.key_prefix, n.run_id), n.generation);
  rdzv::EtcdKv etcd_kv(**client, prefix);
  std::unique_ptr<rdzv::SignedKv> signed_kv;
  if (n.token) {
    signed_kv = std::make_unique<rdzv::SignedKv>(etcd_kv, *n.token);
  }
  auto told = co_await end_round(io, signed_kv ? static_cast<rdzv::Kv&>(*signed_kv) : etcd_kv, n);
  if (told) {
    told->what = lease_note + told->what;
  }
  co_return told;
}

Result<Told> tell(const DeathNotice& n) {
  asio::io_context io;
  try {
    return n.backend == DeathNotice::Backend::store ? net::run_now(io, tell_store(io, n))
                                                    : net::run_now(io, tell_etcd(io, n));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::internal, e.what());
  }
}

}  // namespace

int agent_died_command(const std::vector<std::string>& args) {
  const std::string agent = args.size() > 1 ? args[1] : "?";
  auto notice = rdzv::decode_notice(read_stdin());
  if (!notice) {
    (void)std::fprintf(stderr, "ddprun: guardian: agent %s was killed; %s\n", agent.c_str(),
                       notice.error().message.c_str());
    return util::k_exit_failure;
  }
  const auto where = rdzv::describe_rendezvous(*notice);
  auto told = tell(*notice);
  if (!told) {
    (void)std::fprintf(stderr,
                       "ddprun: guardian: agent %s was killed; could not tell %s that node %s "
                       "is gone (%s)%s\n",
                       agent.c_str(), where.c_str(), notice->node_id.c_str(),
                       told.error().message.c_str(),
                       notice->backend == DeathNotice::Backend::store
                           ? "; expected when that agent hosted the store"
                           : "");
    return util::k_exit_failure;
  }
  (void)std::fprintf(stderr,
                     "ddprun: guardian: agent %s was killed; told %s that node %s is gone (%s)\n",
                     agent.c_str(), where.c_str(), notice->node_id.c_str(), told->what.c_str());
  return util::k_exit_success;
}

}  // namespace ddprun::backend
