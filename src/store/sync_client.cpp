// SyncClient: runs the caller-less io_context until each Client operation completes.

#include "ddprun/store/client.hpp"

#include <exception>
#include <optional>

namespace ddprun::store {

SyncClient::SyncClient(ClientOptions options) : client_(io_, std::move(options)) {}

template <typename T>
Result<T> SyncClient::run(asio::awaitable<Result<T>> op) {
  std::optional<Result<T>> out;
  // Wrapped in an awaitable<void> because co_spawn's handler needs a default-constructible T.
  auto body = [&out, op = std::move(op)]() mutable -> asio::awaitable<void> {
    out.emplace(co_await std::move(op));
  };
  asio::co_spawn(io_, body(), [&out](const std::exception_ptr& e) {
    if (e && !out) {
      out.emplace(make_error(ErrorCode::internal, "store: operation threw"));
    }
  });
  io_.restart();
  io_.run();
  if (!out) {
    return make_error(ErrorCode::internal, "store: operation did not complete");
  }
  return std::move(*out);
}

Result<void> SyncClient::connect() { return run(client_.connect()); }
Result<void> SyncClient::set(const std::string& key, const std::string& value) {
  return run(client_.set(key, value));
}
Result<void> SyncClient::set_confirmed(const std::string& key, const std::string& value) {
  return run(client_.set_confirmed(key, value));
}
Result<std::string> SyncClient::get(const std::string& key) { return run(client_.get(key)); }
Result<std::int64_t> SyncClient::add(const std::string& key, std::int64_t delta) {
  return run(client_.add(key, delta));
}
Result<std::string> SyncClient::compare_set(const std::string& key, const std::string& expected,
                                            const std::string& desired) {
  return run(client_.compare_set(key, expected, desired));
}
Result<void> SyncClient::wait(const std::vector<std::string>& keys,
                              std::chrono::milliseconds timeout) {
  return run(client_.wait(keys, timeout));
}
Result<bool> SyncClient::check(const std::vector<std::string>& keys) {
  return run(client_.check(keys));
}
Result<bool> SyncClient::delete_key(const std::string& key) { return run(client_.delete_key(key)); }
Result<std::int64_t> SyncClient::num_keys() { return run(client_.num_keys()); }
Result<std::vector<std::string>> SyncClient::multi_get(const std::vector<std::string>& keys) {
  return run(client_.multi_get(keys));
}
Result<std::vector<std::string>> SyncClient::multi_get_now(const std::vector<std::string>& keys) {
  return run(client_.multi_get_now(keys));
}
Result<void> SyncClient::multi_set(const KeyValues& pairs) { return run(client_.multi_set(pairs)); }
Result<void> SyncClient::append(const std::string& key, const std::string& value) {
  return run(client_.append(key, value));
}
Result<std::vector<std::string>> SyncClient::list_keys() { return run(client_.list_keys()); }

}  // namespace ddprun::store
