#include "ddprun/rdzv/kv.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::rdzv {

asio::awaitable<Result<std::optional<std::string>>> MemoryKv::get_now(std::string key) {
  if (failing_) {
    co_return failure("get", key);
  }
  co_return peek(key);
}

asio::awaitable<Result<std::string>> MemoryKv::compare_set(std::string key, std::string expected,
                                                           std::string desired) {
  if (failing_) {
    co_return failure("compare_set", key);
  }
  auto it = data_.find(key);
  if (it == data_.end()) {
    if (!expected.empty()) {
      co_return expected;
    }
    store(key, desired);
    co_return desired;
  }
  if (it->second == expected) {
    store(key, desired);
    co_return desired;
  }
  co_return it->second;
}

asio::awaitable<Result<void>> MemoryKv::set(std::string key, std::string value) {
  if (failing_) {
    co_return failure("set", key);
  }
  store(key, std::move(value));
  co_return Result<void>{};
}

asio::awaitable<Result<std::int64_t>> MemoryKv::add(std::string key, std::int64_t delta) {
  if (failing_) {
    co_return failure("add", key);
  }
  std::int64_t now = 0;
  if (auto it = data_.find(key); it != data_.end()) {
    auto parsed = util::parse_int(it->second);
    if (!parsed) {
      co_return make_error(
          ErrorCode::protocol,
          "add " + key + ": value " + util::quoted(it->second) + " is not an integer");
    }
    now = *parsed;
  }
  now += delta;
  store(key, std::to_string(now));
  co_return now;
}

asio::awaitable<Result<std::string>> MemoryKv::get(std::string key,
                                                   std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (failing_) {
      co_return failure("get", key);
    }
    if (auto v = peek(key)) {
      co_return *v;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      co_return make_error(ErrorCode::timeout, "get " + key + ": not set within " +
                                                   std::to_string(timeout.count()) + " ms");
    }
    auto timer = std::make_shared<asio::steady_timer>(ctx_, deadline);
    waiters_[key].push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

std::optional<std::string> MemoryKv::peek(const std::string& key) const {
  auto it = data_.find(key);
  if (it == data_.end()) {
    return std::nullopt;
  }
  return it->second;
}

void MemoryKv::poke(const std::string& key, std::string value) { store(key, std::move(value)); }

void MemoryKv::store(const std::string& key, std::string value) {
  data_[key] = std::move(value);
  auto it = waiters_.find(key);
  if (it == waiters_.end()) {
    return;
  }
  for (auto& w : it->second) {
    if (auto timer = w.lock()) {
      timer->cancel();
    }
  }
  waiters_.erase(it);
}

Error MemoryKv::failure(const std::string& op, const std::string& key) const {
  return make_error(ErrorCode::io, "memory store: " + op + " " + key + ": connection lost");
}

}  // namespace ddprun::rdzv
