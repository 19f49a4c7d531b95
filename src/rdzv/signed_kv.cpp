#include "ddprun/rdzv/signed_kv.hpp"

#include "ddprun/util/crypto.hpp"
#include "ddprun/util/strings.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ddprun::rdzv {
namespace {

constexpr std::size_t k_mac_chars = 2 * util::k_sha256_bytes;

std::string mac_of(std::string_view token, std::string_view key, std::string_view nonce,
                   std::string_view value) {
  std::string message;
  message.reserve(key.size() + nonce.size() + value.size() + 2);
  message.append(key).append("\n").append(nonce).append("\n").append(value);
  return util::to_hex(util::hmac_sha256(token, message));
}

Error unsigned_entry(std::string_view key) {
  return make_error(ErrorCode::config,
                    fmt::format("rendezvous entry \"{}\" is not signed with this job's token: an "
                                "agent with another token_file (or none) wrote it",
                                key));
}

}  // namespace

std::string sign_entry(std::string_view token, std::string_view key, std::string_view nonce,
                       std::string_view value) {
  return mac_of(token, key, nonce, value) + ":" + std::string(nonce) + ":" + std::string(value);
}

Result<std::string> open_entry(std::string_view token, std::string_view key,
                               std::string_view stored) {
  if (stored.size() < k_mac_chars + 2 || stored[k_mac_chars] != ':') {
    return unsigned_entry(key);
  }
  const auto rest = stored.substr(k_mac_chars + 1);
  const auto colon = rest.find(':');
  if (colon == std::string_view::npos) {
    return unsigned_entry(key);
  }
  const auto nonce = rest.substr(0, colon);
  const auto value = rest.substr(colon + 1);
  if (!util::constant_time_equal(stored.substr(0, k_mac_chars), mac_of(token, key, nonce, value))) {
    return unsigned_entry(key);
  }
  return std::string(value);
}

bool is_signed_entry(std::string_view stored) {
  if (stored.size() < k_mac_chars + 2 || stored[k_mac_chars] != ':') {
    return false;
  }
  const auto mac = stored.substr(0, k_mac_chars);
  const bool hex = std::all_of(mac.begin(), mac.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  return hex && stored.find(':', k_mac_chars + 1) != std::string_view::npos;
}

SignedKv::SignedKv(Kv& inner, std::string token) : inner_(inner), token_(std::move(token)) {}

asio::awaitable<Result<std::string>> SignedKv::compare_set(std::string key, std::string expected,
                                                           std::string desired) {
  const std::string signed_expected = expected.empty() ? "" : sign_entry(token_, key, "", expected);
  auto r = co_await inner_.compare_set(key, signed_expected, sign_entry(token_, key, "", desired));
  if (!r) {
    co_return r.error();
  }
  if (!expected.empty() && *r == signed_expected) {
    co_return expected;  // stored, or missing with a non-empty expected (TCPStore's answer)
  }
  co_return open_entry(token_, key, *r);
}

asio::awaitable<Result<void>> SignedKv::set(std::string key, std::string value) {
  auto entry = sign_entry(token_, key, "", value);
  co_return co_await inner_.set(std::move(key), std::move(entry));
}

asio::awaitable<Result<std::int64_t>> SignedKv::add(std::string key, std::int64_t delta) {
  if (inner_.add_counts_keys()) {
    // Nothing to sign: the count is of keys whose values say nothing. Someone without the
    // token who can write them can only make a counter skip numbers (slots nobody holds), as
    // with the unsigned generation and alive keys: disturb a job, never join it.
    co_return co_await inner_.add(std::move(key), delta);
  }
  for (;;) {
    std::vector<std::string> keys{key};
    auto now = co_await inner_.multi_get_now(std::move(keys));
    if (!now) {
      co_return now.error();
    }
    const std::string raw = now->front();
    std::int64_t n = 0;
    if (!raw.empty()) {
      auto value = open_entry(token_, key, raw);
      if (!value) {
        co_return value.error();
      }
      auto parsed = util::parse_int(*value);
      if (!parsed) {
        co_return make_error(ErrorCode::protocol, fmt::format("add on \"{}\": {} is not an integer",
                                                              key, util::quoted(*value)));
      }
      n = *parsed;
    }
    const std::int64_t next = n + delta;
    const std::string nonce = fmt::format("{:016x}", rng_());
    const std::string desired = sign_entry(token_, key, nonce, std::to_string(next));
    auto r = co_await inner_.compare_set(key, raw, desired);
    if (!r) {
      co_return r.error();
    }
    if (*r == desired) {
      co_return next;
    }
  }
}

asio::awaitable<Result<std::string>> SignedKv::get(std::string key,
                                                   std::chrono::milliseconds timeout) {
  auto r = co_await inner_.get(key, timeout);
  if (!r) {
    co_return r.error();
  }
  co_return open_entry(token_, key, *r);
}

asio::awaitable<Result<std::vector<std::string>>> SignedKv::multi_get_now(
    std::vector<std::string> keys) {
  auto r = co_await inner_.multi_get_now(keys);
  if (!r) {
    co_return r.error();
  }
  for (std::size_t i = 0; i < r->size(); ++i) {
    if ((*r)[i].empty()) {
      continue;
    }
    auto value = open_entry(token_, keys[i], (*r)[i]);
    if (!value) {
      co_return value.error();
    }
    (*r)[i] = std::move(*value);
  }
  co_return r;
}

asio::awaitable<Result<void>> SignedKv::multi_set(
    std::vector<std::pair<std::string, std::string>> pairs) {
  for (auto& [key, value] : pairs) {
    value = sign_entry(token_, key, "", value);
  }
  co_return co_await inner_.multi_set(std::move(pairs));
}

}  // namespace ddprun::rdzv
