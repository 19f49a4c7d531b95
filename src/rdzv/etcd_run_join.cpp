// Joining an etcd-v3 run. A generation is one job's life under an --rdzv-id; the decision of
// which one to use is pure (decide_generation), this file reads what it needs and makes the
// choice stick with one txn:
//   - start generation N+1: only if the generation key is unchanged since read (or still
//     absent); the same txn writes this agent's alive key, so a second agent starting at the
//     same moment finds N+1 alive and joins it, deletes generation N when nobody was alive
//     in it (a crashed job's keys), and writes N+1's first header when N's job did not end
//     and left nodes out (carried_header);
//   - join generation N: only if the generation key is unchanged and the alive key seen is
//     still there, so an agent never joins a generation whose last agent just went away.
// A generation running a round is joined only after one of its members' keep-alives is seen
// (a watch on its heartbeat keys, at most the keep-alive bound): the agents of a job killed a
// moment ago still hold leases, but they no longer beat, and a new job must not wait behind
// them for its whole join timeout.

#include "ddprun/etcd/codec.hpp"
#include "ddprun/rdzv/etcd_layout.hpp"
#include "ddprun/rdzv/etcd_run.hpp"
#include "ddprun/rdzv/state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace ddprun::rdzv {

using etcd::TxnOp;

struct EtcdRun::Look {
  GenerationView view;
  std::optional<etcd::KeyValue> generation_key;  ///< as read: the txn compares it
  std::optional<etcd::KeyValue> alive;           ///< an alive key of view.current
  std::optional<RoundHeader> header;             ///< view.current's, when it has a valid one
};

asio::awaitable<Result<EtcdRun::Look>> EtcdRun::look() {
  Look seen;
  auto gen = co_await client_.get(etcd_generation_key(run_prefix_));
  if (!gen) {
    co_return gen.error();
  }
  seen.generation_key = std::move(*gen);
  if (!seen.generation_key) {
    co_return seen;
  }
  auto& view = seen.view;
  view.current = parse_generation(seen.generation_key->value).value_or(0);
  use_generation(*view.current);
  std::vector<std::string> keys{state_key(options_.run_id)};
  auto header = co_await kv().multi_get_now(std::move(keys));
  if (header && !header->front().empty()) {
    if (auto h = decode_header(header->front())) {
      seen.header = std::move(*h);
    }
  }
  view.closed = seen.header && seen.header->closed;
  const bool running = seen.header && !view.closed && seen.header->phase == Phase::complete;
  const auto alive_prefix = etcd_alive_prefix(etcd_generation_prefix(run_prefix_, generation_));
  auto anyone = co_await client_.range(etcd::prefix_range(alive_prefix, 1));
  if (!anyone) {
    co_return anyone.error();
  }
  view.any_alive = !anyone->kvs.empty();
  if (view.any_alive) {
    seen.alive = anyone->kvs.front();
  }
  if (view.any_alive && running) {
    auto beat = co_await heartbeat_after(anyone->revision);
    if (!beat) {
      co_return beat.error();
    }
    view.silent = !*beat;
  }
  co_return seen;
}

// The stored form of a generation's header, as the rendezvous' Kv would write it.
etcd::PutRequest EtcdRun::header_put(std::int64_t generation, const RoundHeader& h) const {
  const std::string key = state_key(options_.run_id);
  std::string value = encode_header(h);
  if (options_.token) {
    value = sign_entry(*options_.token, key, "", value);
  }
  return {etcd_generation_prefix(run_prefix_, generation) + key, std::move(value), 0};
}

namespace {

std::string why_started(const GenerationView& view, std::size_t carried) {
  if (!view.current) {
    return {};
  }
  std::string why = fmt::format(" (generation {} was {})", *view.current,
                                view.closed   ? "closed"
                                : view.silent ? "running without a keep-alive: its agents are gone"
                                              : "left by every agent");
  if (carried > 0) {
    why += fmt::format("; its record of {} node(s) left out carries over", carried);
  }
  return why;
}

}  // namespace

// One look and one txn: true when this agent is now in a generation, false when the run
// changed under it (look again).
asio::awaitable<Result<bool>> EtcdRun::try_join() {
  auto seen = co_await look();
  if (!seen) {
    co_return seen.error();
  }
  const auto& view = seen->view;
  const std::string gen_key = etcd_generation_key(run_prefix_);
  const auto choice = decide_generation(view);
  const auto gen_prefix = etcd_generation_prefix(run_prefix_, choice.generation);
  etcd::TxnRequest t;
  t.compare.push_back(seen->generation_key
                          ? etcd::key_unchanged(gen_key, seen->generation_key->mod_revision)
                          : etcd::key_absent(gen_key));
  t.success.push_back(
      TxnOp::set({etcd_alive_prefix(gen_prefix) + options_.node_id, options_.node_id, lease_.id}));
  std::optional<RoundHeader> carried;
  if (choice.start_new) {
    t.success.push_back(TxnOp::set({gen_key, std::to_string(choice.generation), 0}));
    if (should_delete_previous(view)) {
      t.success.push_back(
          TxnOp::erase(etcd::prefix_delete(etcd_generation_prefix(run_prefix_, *view.current))));
    }
    if (seen->header && (carried = carried_header(*seen->header))) {
      t.success.push_back(TxnOp::set(header_put(choice.generation, *carried)));
    }
  } else {
    etcd::Compare still_alive{seen->alive->key,
                              etcd::CompareTarget::create_revision,
                              etcd::CompareResult::greater,
                              0,
                              {}};
    t.compare.push_back(std::move(still_alive));
  }
  auto r = co_await client_.txn(std::move(t));
  if (!r) {
    co_return r.error();
  }
  if (!r->succeeded) {
    co_return false;
  }
  use_generation(choice.generation);
  if (choice.start_new) {
    spdlog::info("etcd-v3 rendezvous '{}': started generation {} under {}{}", options_.run_id,
                 choice.generation, run_prefix_,
                 why_started(view, carried ? carried->excluded.size() : 0));
  } else {
    spdlog::info("etcd-v3 rendezvous '{}': joined generation {} under {}", options_.run_id,
                 choice.generation, run_prefix_);
  }
  co_return true;
}

// Shared with the deadline's handler, as EtcdKv's waits are.
struct EtcdRun::BeatWait {
  explicit BeatWait(const asio::any_io_executor& ex) : deadline(ex) {}
  std::unique_ptr<etcd::Watch> watch;  // null between two watches
  asio::steady_timer deadline;
  bool timed_out = false;
};

asio::awaitable<Result<bool>> EtcdRun::heartbeat_after(etcd::Revision revision) {
  auto wait = std::make_shared<BeatWait>(client_.executor());
  wait->deadline.expires_after(options_.liveness_wait);
  wait->deadline.async_wait([wait](const boost::system::error_code& ec) {
    if (!ec) {
      wait->timed_out = true;
      if (wait->watch) {
        wait->watch->cancel();
      }
    }
  });
  Result<bool> seen = false;
  etcd::Revision from = revision + 1;
  while (!wait->timed_out) {
    auto next = co_await watch_beats(*wait, from);
    if (!next) {
      seen = next.error();
      break;
    }
    if (*next == 0) {
      seen = true;
      break;
    }
    from = *next;  // etcd compacted `from`: every change since its oldest revision is after ours
  }
  wait->deadline.cancel();
  if (wait->watch) {
    wait->watch->cancel();
  }
  co_return seen;
}

// 0: a keep-alive was put; -1: the deadline, or etcd ended the watch for another reason (no
// keep-alive seen); otherwise the revision to watch from again (the start was compacted).
asio::awaitable<Result<etcd::Revision>> EtcdRun::watch_beats(BeatWait& wait, etcd::Revision from) {
  const std::string beats =
      etcd_generation_prefix(run_prefix_, generation_) + heartbeat_key(options_.run_id, "");
  // A named request: g++ 12 mishandles a braced temporary inside co_await (double destroy).
  etcd::WatchRequest request{beats, etcd::prefix_end(beats), from, false};
  auto watch = co_await client_.watch(std::move(request));
  if (!watch) {
    co_return watch.error();
  }
  wait.watch = std::move(*watch);
  while (!wait.timed_out) {
    auto m = co_await wait.watch->next();
    if (!m) {
      break;
    }
    if (std::any_of(m->events.begin(), m->events.end(), [](const etcd::WatchEvent& e) {
          return e.type == etcd::WatchEvent::Type::put;
        })) {
      co_return etcd::Revision{0};
    }
    if (m->canceled) {
      if (m->compact_revision > 0) {
        co_return m->compact_revision;
      }
      break;
    }
  }
  co_return etcd::Revision{-1};
}

}  // namespace ddprun::rdzv
