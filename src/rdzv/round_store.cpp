// RoundStore: the rendezvous's reads and waits (round_store.hpp).

#include "ddprun/rdzv/round_store.hpp"

#include "ddprun/rdzv/members.hpp"
#include "ddprun/util/batches.hpp"

#include <algorithm>
#include <iterator>

namespace ddprun::rdzv {

RoundStore::RoundStore(asio::io_context& ctx, Kv& kv, std::string run_id, const util::Clock& clock)
    : ctx_(ctx), kv_(kv), run_id_(std::move(run_id)), clock_(clock) {}

WallMs RoundStore::wall_now() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.wall_now().time_since_epoch())
      .count();
}

asio::awaitable<Result<std::string>> RoundStore::read_one(std::string key) {
  std::vector<std::string> keys{std::move(key)};
  auto got = co_await kv_.multi_get_now(std::move(keys));
  if (!got) {
    co_return got.error();
  }
  co_return std::move(got->at(0));
}

asio::awaitable<Result<std::vector<std::string>>> RoundStore::read_many(
    std::vector<std::string> keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (auto& batch : util::batches(std::move(keys), k_keys_per_request)) {
    auto part = co_await kv_.multi_get_now(std::move(batch));
    if (!part) {
      co_return part.error();
    }
    std::move(part->begin(), part->end(), std::back_inserter(out));
  }
  co_return out;
}

asio::awaitable<void> RoundStore::sleep(std::chrono::milliseconds d) {
  asio::steady_timer timer(ctx_, d);
  boost::system::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<bool> RoundStore::wait_for_others(std::vector<std::string> keys,
                                                  std::chrono::milliseconds d) {
  asio::steady_timer timer(ctx_, d);
  // Named: g++ 12 destroys a braced temporary argument of a coroutine call made inside a
  // coroutine twice (GCC bug 99576).
  WatchSet set{std::move(keys), {}};
  co_return co_await kv_.wait_for_change(std::move(set), timer);
}

asio::awaitable<void> RoundStore::fill_missing(const std::vector<std::string>& keys,
                                               std::vector<std::string>& texts,
                                               std::chrono::milliseconds grace) {
  const WallMs until = wall_now() + grace.count();
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (!texts[i].empty()) {
      continue;
    }
    const auto left = std::chrono::milliseconds(std::max<WallMs>(1, until - wall_now()));
    if (auto got = co_await kv_.get(keys[i], left); got) {
      texts[i] = std::move(*got);
    }
  }
}

asio::awaitable<Arrivals> RoundStore::arrivals(int round) {
  auto slots = co_await kv_.add(slots_key(run_id_, round), 0);
  auto gone = co_await kv_.add(gone_key(run_id_, round), 0);
  if (!slots || !gone) {
    co_return Arrivals{};
  }
  Arrivals out;
  out.live = static_cast<int>(std::max<std::int64_t>(0, *slots - *gone));
  out.taken = static_cast<int>(*slots);
  auto keys = slot_keys(run_id_, round, std::min(out.taken, static_cast<int>(k_max_named_ids)));
  if (auto texts = co_await read_many(std::move(keys)); texts) {
    for (const auto& t : *texts) {
      if (auto n = decode_slot(t)) {
        (is_withdrawn(t) ? out.withdrawn : out.live_named).push_back(std::move(*n));
      }
    }
  }
  std::sort(out.live_named.begin(), out.live_named.end(), rank_before);
  co_return out;
}

asio::awaitable<std::vector<NodeDesc>> RoundStore::round_members(int round,
                                                                 std::optional<RoundResult> known) {
  if (known && known->round == round && !known->members.empty()) {
    co_return std::move(known->members);
  }
  MembersReader reader(run_id_, round);
  for (;;) {
    auto texts = co_await kv_.multi_get_now(reader.next_keys());
    auto whole = texts ? reader.take(*texts) : Result<bool>(texts.error());
    if (!whole) {
      co_return std::vector<NodeDesc>{};
    }
    if (*whole) {
      co_return reader.take_list();
    }
  }
}

}  // namespace ddprun::rdzv
