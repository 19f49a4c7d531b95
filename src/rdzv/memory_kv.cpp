#include "ddprun/rdzv/kv.hpp"
#include "ddprun/util/strings.hpp"

#include <algorithm>

namespace ddprun::rdzv {

asio::awaitable<Result<std::string>> MemoryKv::compare_set(std::string key, std::string expected,
                                                           std::string desired) {
  if (auto e = fault("compare_set", key)) {
    co_return *e;
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
  if (auto e = fault("set", key)) {
    co_return *e;
  }
  store(key, std::move(value));
  co_return Result<void>{};
}

asio::awaitable<Result<std::vector<std::string>>> MemoryKv::multi_get_now(
    std::vector<std::string> keys) {
  if (auto e = fault("multi_get", keys.empty() ? "" : keys.front())) {
    co_return *e;
  }
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) {
    auto it = data_.find(k);
    out.push_back(it == data_.end() ? std::string() : it->second);
  }
  co_return out;
}

asio::awaitable<Result<void>> MemoryKv::multi_set(
    std::vector<std::pair<std::string, std::string>> pairs) {
  if (auto e = fault("multi_set", pairs.empty() ? "" : pairs.front().first)) {
    co_return *e;
  }
  for (auto& [k, v] : pairs) {
    store(k, std::move(v));
  }
  co_return Result<void>{};
}

asio::awaitable<Result<std::int64_t>> MemoryKv::add(std::string key, std::int64_t delta) {
  if (auto e = fault("add", key)) {
    co_return *e;
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
  return get_unless(std::move(key), timeout, interrupts_);
}

asio::awaitable<Result<std::string>> MemoryKv::get_unless(std::string key,
                                                          std::chrono::milliseconds timeout,
                                                          const int& interrupts_now) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const int interrupts = interrupts_now;
  while (true) {
    if (auto e = fault("get", key)) {
      co_return *e;
    }
    if (interrupts != interrupts_now) {
      co_return make_error(ErrorCode::closed, "memory store: get " + key + ": interrupted");
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

void MemoryKv::interrupt_waits() {
  ++interrupts_;
  wake_all();
}

void MemoryKv::wake_all() {
  for (auto& [key, timers] : waiters_) {
    for (auto& w : timers) {
      if (auto timer = w.lock()) {
        timer->cancel();
      }
    }
  }
  waiters_.clear();
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

std::optional<Error> MemoryKv::fault(const std::string& op, const std::string& key) {
  bool for_now = false;  // one of fail_next's calls: a transient failure
  if (calls_before_failing_ > 0) {
    --calls_before_failing_;
  } else if (!failing_ && failing_calls_ > 0) {
    --failing_calls_;
    for_now = true;
  }
  if (!failing_ && !for_now) {
    return std::nullopt;
  }
  return make_error(ErrorCode::io,
                    "memory store: " + op + " " + key + ": connection lost" +
                        (for_now ? " " + std::string(k_transient_mark) : std::string()));
}

}  // namespace ddprun::rdzv
