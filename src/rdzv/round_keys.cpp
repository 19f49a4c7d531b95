// The MASTER_ADDR/PORT exchange and the exit barrier of a formed round (round_keys.hpp).

#include "ddprun/rdzv/round_keys.hpp"

#include "ddprun/rdzv/waits.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::rdzv {
namespace {

constexpr const char* k_master_addr_key = "MASTER_ADDR";
constexpr const char* k_master_port_key = "MASTER_PORT";
constexpr const char* k_done_key = "done";
constexpr int k_max_port = 65535;

}  // namespace

asio::awaitable<Result<MasterEndpoint>> exchange_master(RoundStore& store,
                                                        const RdzvSettings& settings,
                                                        RoundResult round,
                                                        std::optional<MasterEndpoint> mine) {
  const std::string prefix = round_prefix(settings.run_id, round.round);
  if (round.group_rank() == 0) {
    if (!mine) {
      co_return make_error(ErrorCode::internal, "exchange_master: group rank 0 has no endpoint");
    }
    std::vector<std::pair<std::string, std::string>> pairs{
        {prefix + k_master_addr_key, mine->addr},
        {prefix + k_master_port_key, std::to_string(mine->port)}};
    auto set = co_await store.kv().multi_set(std::move(pairs));
    if (!set) {
      co_return set.error();
    }
  }
  auto port_text = co_await store.kv().get(prefix + k_master_port_key, settings.read_timeout);
  if (!port_text) {
    co_return port_text.error();
  }
  auto addr = co_await store.read_one(prefix + k_master_addr_key);
  if (!addr) {
    co_return addr.error();
  }
  auto port = util::parse_int_in(*port_text, 1, k_max_port);
  if (!port) {
    co_return make_error(ErrorCode::protocol,
                         prefix + k_master_port_key + ": " + port_text.value() + " is not a port");
  }
  co_return MasterEndpoint{*addr, static_cast<int>(*port)};
}

asio::awaitable<Result<void>> exit_barrier(RoundStore& store, const RdzvSettings& settings,
                                           RoundResult round, std::chrono::milliseconds timeout) {
  const auto& clock = store.clock();
  auto& kv = store.kv();
  const std::string key = round_prefix(settings.run_id, round.round) + k_done_key;
  const auto deadline = clock.now() + timeout;
  auto count = co_await kv.add(key, 1);
  while (true) {
    if (!count) {
      co_return count.error();
    }
    if (*count >= round.group_world_size()) {
      co_return Result<void>{};
    }
    if (clock.now() >= deadline) {
      co_return make_error(ErrorCode::timeout, "rendezvous " + settings.run_id +
                                                   ": exit barrier: " + std::to_string(*count) +
                                                   "/" + std::to_string(round.group_world_size()) +
                                                   " nodes done after " +
                                                   std::to_string(timeout.count()) + " ms");
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.now());
    std::vector<std::string> keys{key};
    co_await store.wait_for_others(std::move(keys),
                                   barrier_wait(settings, kv.watches_changes(), left));
    count = co_await kv.add(key, 0);
  }
}

}  // namespace ddprun::rdzv
