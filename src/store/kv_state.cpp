// KvState: request semantics of spec §2 (superset behaviour of §6.2.5): the keys, parked
// waits and watchers, and apply()'s dispatch. The requests' own handlers are in kv_ops.cpp.

#include "ddprun/store/kv_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace ddprun::store {
namespace {

bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

template <typename T>
void erase_all(std::vector<T>& items, const T& item) {
  items.erase(std::remove(items.begin(), items.end(), item), items.end());
}

}  // namespace

std::optional<std::int64_t> parse_stoll_prefix(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && is_c_space(text[i])) {
    ++i;
  }
  std::string digits;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    if (text[i] == '-') {
      digits.push_back('-');
    }
    ++i;
  }
  const std::size_t first_digit = digits.size();
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    digits.push_back(text[i++]);
  }
  if (digits.size() == first_digit) {
    return std::nullopt;
  }
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc{} || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return v;
}

std::size_t KvState::parked_waits(ConnId conn) const {
  const auto it = conn_waits_.find(conn);
  return it == conn_waits_.end() ? 0 : it->second.size();
}

std::size_t KvState::watcher_count() const {
  std::size_t n = 0;
  for (const auto& [key, conns] : watchers_) {
    n += conns.size();
  }
  return n;
}

std::optional<std::string> KvState::value(std::string_view key) const {
  const auto it = map_.find(std::string(key));
  if (it == map_.end()) {
    return std::nullopt;
  }
  return it->second;
}

bool KvState::exists(const std::string& key) const {
  if (map_.count(key) != 0) {
    return true;
  }
  const auto q = queues_.find(key);
  return q != queues_.end() && !q->second.empty();
}

/// Inserts or replaces, keeping bytes_ (keys + values) current.
void KvState::put(const std::string& key, std::string value) {
  auto it = map_.find(key);
  if (it == map_.end()) {
    bytes_ += key.size() + value.size();
    map_.emplace(key, std::move(value));
    return;
  }
  bytes_ = bytes_ - it->second.size() + value.size();
  it->second = std::move(value);
}

void KvState::erase_key(std::unordered_map<std::string, std::string>::iterator it) {
  bytes_ -= it->first.size() + it->second.size();
  map_.erase(it);
}

void KvState::store(const std::string& key, std::string value, Effects& fx) {
  if (!watchers_.empty()) {
    const auto it = map_.find(key);
    if (it == map_.end()) {
      notify_watchers(key, reply::k_key_created, {}, value, fx);
    } else {
      notify_watchers(key, reply::k_key_updated, it->second, value, fx);
    }
  }
  put(key, std::move(value));
  wake_all(key, fx);
}

void KvState::notify_watchers(const std::string& key, std::uint8_t kind, std::string_view old_value,
                              std::string_view new_value, Effects& fx) {
  const auto it = watchers_.find(key);
  if (it == watchers_.end()) {
    return;
  }
  for (ConnId conn : it->second) {
    fx.deliveries.push_back({conn, encode_watch_event(kind, key, old_value, new_value)});
  }
}

void KvState::wake_all(const std::string& key, Effects& fx) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) {
    return;
  }
  const std::vector<WaitId> ids = std::move(it->second);
  waiters_.erase(it);
  for (WaitId id : ids) {
    release(id, fx);
  }
}

void KvState::wake_one(const std::string& key, Effects& fx) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) {
    return;
  }
  const WaitId id = it->second.front();
  it->second.erase(it->second.begin());
  if (it->second.empty()) {
    waiters_.erase(it);
  }
  release(id, fx);
}

/// One registration of wait `id` was satisfied; at zero the waiter gets STOP_WAITING.
void KvState::release(WaitId id, Effects& fx) {
  auto it = waits_.find(id);
  if (it == waits_.end() || --it->second.remaining > 0) {
    return;
  }
  const ConnId conn = it->second.conn;
  fx.deliveries.push_back({conn, one_byte(reply::k_stop_waiting)});
  waits_.erase(it);
  auto& ids = conn_waits_[conn];
  erase_all(ids, id);
  if (ids.empty()) {
    conn_waits_.erase(conn);
  }
}

/// Removes an unfinished wait from every key list (cancel or disconnect).
void KvState::drop_wait(WaitId id) {
  auto it = waits_.find(id);
  if (it == waits_.end()) {
    return;
  }
  for (const auto& key : it->second.keys) {
    auto w = waiters_.find(key);
    if (w == waiters_.end()) {
      continue;
    }
    erase_all(w->second, id);
    if (w->second.empty()) {
      waiters_.erase(w);
    }
  }
  waits_.erase(it);
}

void KvState::cancel_waits(ConnId conn) {
  auto it = conn_waits_.find(conn);
  if (it == conn_waits_.end()) {
    return;
  }
  for (WaitId id : it->second) {
    drop_wait(id);
  }
  conn_waits_.erase(it);
}

bool KvState::park(ConnId conn, std::vector<std::string> missing, Effects& fx) {
  if (waits_.size() >= limits_.max_parked_waits) {
    fx.close_reason =
        fmt::format("parked waits at the server's cap of {}", limits_.max_parked_waits);
    return false;
  }
  auto& ids = conn_waits_[conn];
  if (ids.size() >= limits_.max_parked_waits_per_connection) {
    fx.close_reason = fmt::format("more than {} parked waits on one connection",
                                  limits_.max_parked_waits_per_connection);
    if (ids.empty()) {
      conn_waits_.erase(conn);
    }
    return false;
  }
  const WaitId id = next_wait_id_++;
  for (const auto& key : missing) {
    waiters_[key].push_back(id);
  }
  ids.push_back(id);
  const std::size_t n = missing.size();
  waits_.emplace(id, Wait{conn, n, std::move(missing)});
  return true;
}

void KvState::disconnect(ConnId conn) {
  cancel_waits(conn);
  auto it = conn_watches_.find(conn);
  if (it == conn_watches_.end()) {
    return;
  }
  for (const auto& key : it->second) {
    auto w = watchers_.find(key);
    if (w == watchers_.end()) {
      continue;
    }
    erase_all(w->second, conn);
    if (w->second.empty()) {
      watchers_.erase(w);
    }
  }
  conn_watches_.erase(it);
}

Effects KvState::apply(ConnId conn, const Request& req, std::string_view hidden_prefix) {
  Effects fx;
  switch (req.op) {
    case Op::validate:
      break;
    case Op::ping:
      put_u32(fx.reply, req.word);
      break;
    case Op::set:
      store(req.key, req.value, fx);
      break;
    case Op::compare_set:
      do_compare_set(req, fx);
      break;
    case Op::get: {
      const auto it = map_.find(req.key);
      put_bytes(fx.reply, it == map_.end() ? std::string_view() : std::string_view(it->second));
      break;
    }
    case Op::add:
      do_add(req, fx);
      break;
    case Op::check:
      do_check(req, fx);
      break;
    case Op::wait:
      do_wait(conn, req, fx);
      break;
    case Op::get_num_keys:
      put_i64(fx.reply, count_keys(hidden_prefix));
      break;
    case Op::watch_key:
      do_watch(conn, req, fx);
      break;
    case Op::delete_key:
      do_delete(req, fx);
      break;
    case Op::append:
      do_append(req, fx);
      break;
    case Op::multi_get:
      do_multi_get(req, fx);
      break;
    case Op::multi_set:
      for (const auto& [k, v] : req.pairs) {
        store(k, v, fx);
      }
      break;
    case Op::cancel_wait:
      cancel_waits(conn);
      fx.reply = one_byte(reply::k_wait_canceled);
      break;
    case Op::queue_push:
      queues_[req.key].push_back(req.value);
      bytes_ += req.value.size();
      wake_one(req.key, fx);
      break;
    case Op::queue_pop:
      do_queue_pop(req, fx);
      break;
    case Op::queue_len: {
      const auto q = queues_.find(req.key);
      put_i64(fx.reply, q == queues_.end() ? 0 : static_cast<std::int64_t>(q->second.size()));
      break;
    }
    case Op::list_keys:
      do_list_keys(fx, hidden_prefix);
      break;
    case Op::barrier:
      do_barrier(conn, req, fx);
      break;
  }
  return fx;
}

}  // namespace ddprun::store
