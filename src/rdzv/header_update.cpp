// update_header (header_update.hpp): the header's compare-and-set loop.

#include "ddprun/rdzv/header_update.hpp"

#include <utility>
#include <vector>

namespace ddprun::rdzv {

asio::awaitable<Result<ReadHeader>> read_header(Kv& kv, const std::string& key) {
  std::vector<std::string> keys{key};
  auto got = co_await kv.multi_get_now(std::move(keys));
  if (!got) {
    co_return got.error();
  }
  std::string text = std::move(got->at(0));
  if (text.empty()) {
    co_return ReadHeader{RoundHeader{}, ""};
  }
  auto h = decode_header(text);
  if (!h) {
    co_return h.error();
  }
  co_return ReadHeader{std::move(*h), std::move(text)};
}

asio::awaitable<Result<HeaderUpdated>> update_header(Kv& kv, const std::string& key,
                                                     const HeaderChange& change,
                                                     const HeaderUpdate& how) {
  for (int lost = 0;; ++lost) {
    if (lost > 0) {
      co_await how.pause(lost);
    }
    auto cur = co_await read_header(kv, key);
    if (!cur) {
      co_return cur.error();
    }
    if (how.seen) {
      how.seen(cur->value);
    }
    if (how.give_up(lost)) {
      co_return make_error(ErrorCode::timeout, how.kept_changing);
    }
    auto next = change(cur->value);
    if (!next) {
      co_return HeaderUpdated{std::move(cur->value), false};
    }
    const std::string desired = encode_header(*next);
    auto stored = co_await kv.compare_set(key, cur->token, desired);
    if (!stored) {
      co_return stored.error();
    }
    if (*stored == desired) {
      co_return HeaderUpdated{std::move(*next), true};
    }
  }
}

}  // namespace ddprun::rdzv
