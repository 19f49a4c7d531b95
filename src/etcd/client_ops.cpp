// Each call: render the body, POST it through call() (failover, auth), parse the reply.

#include "ddprun/etcd/client.hpp"
#include "ddprun/etcd/codec.hpp"
#include "ddprun/util/random.hpp"

#include <fmt/format.h>

namespace ddprun::etcd {
namespace {

/// etcd's answer to a grant of an ID that a lease has (gRPC code 9).
constexpr std::string_view k_lease_exists = "etcdserver: lease already exists";

}  // namespace

asio::awaitable<Result<RangeResult>> Client::range(RangeRequest r) {
  auto body = co_await call("/v3/kv/range", render_range(r), true);
  if (!body) {
    co_return body.error();
  }
  co_return parse_range_reply(*body);
}

asio::awaitable<Result<std::optional<KeyValue>>> Client::get(std::string key) {
  // A named request: g++ 12 destroys a braced temporary argument of a coroutine call made
  // inside a coroutine twice (GCC bug 99576).
  RangeRequest request{std::move(key), {}, 0, 0, false};
  auto r = co_await range(std::move(request));
  if (!r) {
    co_return r.error();
  }
  if (r->kvs.empty()) {
    co_return std::optional<KeyValue>{};
  }
  co_return std::optional<KeyValue>{std::move(r->kvs.front())};
}

asio::awaitable<Result<Revision>> Client::put(PutRequest p) {
  auto body = co_await call("/v3/kv/put", render_put(p), true);
  if (!body) {
    co_return body.error();
  }
  co_return parse_put_reply(*body);
}

asio::awaitable<Result<DeleteResult>> Client::erase(DeleteRequest d) {
  auto body = co_await call("/v3/kv/deleterange", render_delete(d), true);
  if (!body) {
    co_return body.error();
  }
  co_return parse_delete_reply(*body);
}

asio::awaitable<Result<TxnResult>> Client::txn(TxnRequest t, bool resend_safe) {
  // A txn that only reads changes nothing however often it runs: it may go to another member
  // after a timeout, as a range does.
  auto body = co_await call("/v3/kv/txn", render_txn(t), resend_safe || is_read_only(t));
  if (!body) {
    co_return body.error();
  }
  co_return parse_txn_reply(*body);
}

LeaseId new_lease_id() {
  constexpr int k_unused_bits = 2;
  return static_cast<LeaseId>(util::random_u64() >> k_unused_bits) + 1;
}

asio::awaitable<Result<Lease>> Client::lease_grant(std::chrono::seconds ttl, LeaseId id) {
  auto body = co_await call("/v3/lease/grant", render_lease_grant(ttl, id), true);
  if (body) {
    co_return parse_lease_grant_reply(*body);
  }
  if (id == 0 || body.error().message.find(k_lease_exists) == std::string::npos) {
    co_return body.error();
  }
  // An earlier send made it: renewing it says how long it has left.
  auto renewed = co_await lease_keepalive_once(id);
  if (renewed && renewed->ttl.count() == 0) {
    co_return make_error(ErrorCode::io, fmt::format("etcd lease {} expired before its grant was "
                                                    "answered (for now: grant it again)",
                                                    id));
  }
  co_return renewed;
}

asio::awaitable<Result<Lease>> Client::lease_keepalive_once(LeaseId id) {
  auto body = co_await call("/v3/lease/keepalive", render_lease_id(id), true);
  if (!body) {
    co_return body.error();
  }
  // A stream of one message: the first line is the answer.
  auto lines = take_lines(*body);
  co_return parse_keepalive_reply(lines.empty() ? *body : lines.front());
}

asio::awaitable<Result<void>> Client::lease_revoke(LeaseId id) {
  auto body = co_await call("/v3/lease/revoke", render_lease_id(id), true);
  if (!body) {
    co_return body.error();
  }
  co_return Result<void>{};
}

}  // namespace ddprun::etcd
