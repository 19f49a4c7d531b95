// KvState's request handlers (do_*): what each request does to the keys and replies, spec §2.
// The state they share (keys, parked waits, watchers) and the dispatch are in kv_state.cpp.

#include "ddprun/store/kv_state.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ddprun::store {

void KvState::do_compare_set(const Request& req, Effects& fx) {
  const auto it = map_.find(req.key);
  if (it == map_.end()) {
    if (req.value.empty()) {
      store(req.key, req.desired, fx);
      put_bytes(fx.reply, req.desired);
    } else {
      put_bytes(fx.reply, req.value);  // nothing stored; PyTorch echoes `expected`
    }
    return;
  }
  if (it->second == req.value) {
    store(req.key, req.desired, fx);
  }
  put_bytes(fx.reply, map_.at(req.key));
}

void KvState::do_add(const Request& req, Effects& fx) {
  std::int64_t current = 0;
  if (const auto it = map_.find(req.key); it != map_.end()) {
    const auto parsed = parse_stoll_prefix(it->second);
    if (!parsed) {
      fx.close_reason = fmt::format("ADD on non-integer value of key '{}'", loggable_key(req.key));
      return;
    }
    current = *parsed;
  }
  std::int64_t sum = 0;
  if (__builtin_add_overflow(current, req.number, &sum)) {
    fx.close_reason = fmt::format("ADD {} overflows key '{}'", req.number, loggable_key(req.key));
    return;
  }
  store(req.key, std::to_string(sum), fx);
  put_i64(fx.reply, sum);
}

void KvState::do_check(const Request& req, Effects& fx) const {
  const bool ready = std::all_of(req.keys.begin(), req.keys.end(),
                                 [this](const std::string& k) { return exists(k); });
  fx.reply = one_byte(ready ? reply::k_ready : reply::k_not_ready);
}

void KvState::do_wait(ConnId conn, const Request& req, Effects& fx) {
  std::vector<std::string> missing;
  for (const auto& key : req.keys) {
    if (!exists(key)) {
      missing.push_back(key);
    }
  }
  if (missing.empty()) {
    fx.reply = one_byte(reply::k_stop_waiting);
    return;
  }
  park(conn, std::move(missing), fx);
}

void KvState::do_delete(const Request& req, Effects& fx) {
  const auto it = map_.find(req.key);
  if (it == map_.end()) {
    put_i64(fx.reply, 0);
    return;
  }
  notify_watchers(req.key, reply::k_key_deleted, it->second, {}, fx);
  erase_key(it);
  put_i64(fx.reply, 1);
}

void KvState::do_append(const Request& req, Effects& fx) {
  const auto it = map_.find(req.key);
  std::string value = it == map_.end() ? std::string() : it->second;
  value += req.value;
  store(req.key, std::move(value), fx);
}

void KvState::do_watch(ConnId conn, const Request& req, Effects& fx) {
  watchers_[req.key].push_back(conn);
  conn_watches_[conn].push_back(req.key);
  fx.reply = one_byte(reply::k_callback_registered);
}

void KvState::do_multi_get(const Request& req, Effects& fx) const {
  std::size_t total = 0;
  for (const auto& key : req.keys) {
    const auto it = map_.find(key);
    total += sizeof(std::uint64_t) + (it == map_.end() ? 0 : it->second.size());
  }
  if (total > limits_.max_reply_bytes) {
    fx.close_reason =
        fmt::format("MULTI_GET reply of {} bytes exceeds {}", total, limits_.max_reply_bytes);
    return;
  }
  for (const auto& key : req.keys) {
    const auto it = map_.find(key);
    put_bytes(fx.reply, it == map_.end() ? std::string_view() : std::string_view(it->second));
  }
}

void KvState::do_queue_pop(const Request& req, Effects& fx) {
  const auto it = queues_.find(req.key);
  if (it == queues_.end() || it->second.empty()) {
    put_i64(fx.reply, 0);
    return;
  }
  put_i64(fx.reply, static_cast<std::int64_t>(it->second.size()));
  put_bytes(fx.reply, it->second.front());
  bytes_ -= it->second.front().size();
  it->second.pop_front();
  if (it->second.empty()) {
    queues_.erase(it);
  }
}

namespace {
bool is_hidden(std::string_view key, std::string_view hidden_prefix) {
  return !hidden_prefix.empty() && key.substr(0, hidden_prefix.size()) == hidden_prefix;
}
}  // namespace

std::int64_t KvState::count_keys(std::string_view hidden_prefix) const {
  std::int64_t n = 0;
  for (const auto& [key, v] : map_) {
    n += is_hidden(key, hidden_prefix) ? 0 : 1;
  }
  return n;
}

void KvState::do_list_keys(Effects& fx, std::string_view hidden_prefix) const {
  std::size_t total = sizeof(std::uint64_t);
  for (const auto& [key, v] : map_) {
    total += is_hidden(key, hidden_prefix) ? 0 : sizeof(std::uint64_t) + key.size();
  }
  if (total > limits_.max_reply_bytes) {
    fx.close_reason =
        fmt::format("LIST_KEYS reply of {} bytes exceeds {}", total, limits_.max_reply_bytes);
    return;
  }
  put_i64(fx.reply, count_keys(hidden_prefix));
  for (const auto& [key, v] : map_) {
    if (!is_hidden(key, hidden_prefix)) {
      put_bytes(fx.reply, key);
    }
  }
}

void KvState::do_barrier(ConnId conn, const Request& req, Effects& fx) {
  std::int64_t count = 0;
  if (const auto it = map_.find(req.key); it != map_.end()) {
    count = parse_stoll_prefix(it->second).value_or(0);
  }
  if (__builtin_add_overflow(count, 1, &count)) {
    fx.close_reason = fmt::format("BARRIER overflows key '{}'", loggable_key(req.key));
    return;
  }
  const std::string text = std::to_string(count);
  if (count < req.number) {
    put(req.key, text);  // below the target: record progress without waking anyone
    park(conn, {req.key}, fx);
    return;
  }
  store(req.key, text, fx);
  fx.reply = one_byte(reply::k_stop_waiting);
}

std::size_t KvState::erase_prefix(std::string_view prefix) {
  std::size_t erased = 0;
  for (auto it = map_.begin(); it != map_.end();) {
    if (std::string_view(it->first).substr(0, prefix.size()) == prefix) {
      bytes_ -= it->first.size() + it->second.size();
      it = map_.erase(it);
      ++erased;
    } else {
      ++it;
    }
  }
  return erased;
}

}  // namespace ddprun::store
