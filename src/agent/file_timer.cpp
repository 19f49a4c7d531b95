#include "ddprun/agent/file_timer.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <set>

namespace ddprun::agent {

namespace {

using Json = nlohmann::json;

/// SIGRTMAX on Linux; zero or negative means "do not signal" (torch's client contract).
constexpr long long k_max_signal = 64;

Error bad_request(const std::string& why) {
  return Error{ErrorCode::protocol, "file-timer request: " + why};
}

/// The integer field `name` of `j`, within [lo, hi].
Result<long long> int_field(const Json& j, const char* name, long long lo, long long hi) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer()) {
    return bad_request(std::string("\"") + name + "\" must be an integer");
  }
  auto value = it->get<long long>();
  if (value < lo || value > hi) {
    return bad_request(std::string("\"") + name + "\" is " + std::to_string(value) + ", expected " +
                       std::to_string(lo) + ".." + std::to_string(hi));
  }
  return value;
}

}  // namespace

Result<TimerRequest> parse_timer_request(std::string_view line) {
  if (line.size() > k_max_timer_request_bytes) {
    return bad_request("line of " + std::to_string(line.size()) + " bytes exceeds " +
                       std::to_string(k_max_timer_request_bytes));
  }
  Json j = Json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return bad_request("not a JSON object");
  }
  TimerRequest r;
  auto version = int_field(j, "version", 0, std::numeric_limits<int>::max());
  if (!version) {
    return version.error();
  }
  auto pid = int_field(j, "pid", 1, std::numeric_limits<pid_t>::max());
  if (!pid) {
    return pid.error();
  }
  auto signal = int_field(j, "signal", std::numeric_limits<int>::min(), k_max_signal);
  if (!signal) {
    return signal.error();
  }
  auto scope = j.find("scope_id");
  if (scope == j.end() || !scope->is_string()) {
    return bad_request("\"scope_id\" must be a string");
  }
  auto expiration = j.find("expiration_time");
  if (expiration == j.end() || !expiration->is_number() ||
      !std::isfinite(expiration->get<double>())) {
    return bad_request("\"expiration_time\" must be a number (epoch seconds)");
  }
  r.version = static_cast<int>(*version);
  r.pid = static_cast<pid_t>(*pid);
  r.signal = static_cast<int>(*signal);
  r.scope_id = scope->get<std::string>();
  r.expiration_time = expiration->get<double>();
  return r;
}

bool TimerTable::apply(const TimerRequest& request) {
  auto key = std::make_pair(request.pid, request.scope_id);
  if (request.is_release()) {
    timers_.erase(key);
    return true;
  }
  if (timers_.size() >= k_max_timers && timers_.count(key) == 0) {
    return false;
  }
  timers_[key] = Armed{request.expiration_time, request.signal};
  return true;
}

std::vector<TimerExpiry> TimerTable::expired(double now) {
  std::map<pid_t, TimerExpiry> chosen;  // per pid: the earliest expired timer with a signal
  std::map<pid_t, double> chosen_at;
  std::set<pid_t> reaped;
  for (const auto& [key, armed] : timers_) {
    if (armed.expiration_time > now) {
      continue;
    }
    reaped.insert(key.first);
    if (armed.signal <= 0) {
      continue;
    }
    auto at = chosen_at.find(key.first);
    if (at == chosen_at.end() || armed.expiration_time < at->second) {
      chosen[key.first] = TimerExpiry{key.first, armed.signal, key.second};
      chosen_at[key.first] = armed.expiration_time;
    }
  }
  for (pid_t pid : reaped) {
    drop_pid(pid);
  }
  std::vector<TimerExpiry> out;
  out.reserve(chosen.size());
  for (auto& [pid, expiry] : chosen) {
    out.push_back(std::move(expiry));
  }
  return out;
}

void TimerTable::drop_pid(pid_t pid) {
  auto it = timers_.lower_bound(std::make_pair(pid, std::string()));
  while (it != timers_.end() && it->first.first == pid) {
    it = timers_.erase(it);
  }
}

std::optional<double> TimerTable::next_expiration() const {
  std::optional<double> earliest;
  for (const auto& [key, armed] : timers_) {
    if (!earliest || armed.expiration_time < *earliest) {
      earliest = armed.expiration_time;
    }
  }
  return earliest;
}

}  // namespace ddprun::agent
