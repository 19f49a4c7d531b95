#pragma once
// The etcd v3 JSON gateway's encoding, pure: request bodies out, replies in. Facts from
// ../shared/spec/etcd-v3.md: keys and values are base64, int64 fields are JSON strings, and
// fields at their proto3 default are omitted (a failed txn has no "succeeded", a PUT event no
// "type", an empty range no "kvs"), so absent always reads as the default.

#include "ddprun/etcd/types.hpp"
#include "ddprun/util/result.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::etcd {

// --- bytes ---
std::string base64_encode(std::string_view bytes);
Result<std::string> base64_decode(std::string_view text);
/// The range_end that makes [prefix, end) every key starting with `prefix`: its last byte
/// below 0xff incremented, the rest dropped; "\0" (every key) when there is none.
std::string prefix_end(std::string_view prefix);
/// Every key starting with `prefix` (at most `limit`, 0: all), and a delete of them all.
RangeRequest prefix_range(const std::string& prefix, std::int64_t limit = 0);
DeleteRequest prefix_delete(const std::string& prefix);

// --- request bodies (each the JSON of one POST /v3/...) ---
std::string render_range(const RangeRequest& r);
std::string render_put(const PutRequest& p);
std::string render_delete(const DeleteRequest& d);
std::string render_txn(const TxnRequest& t);
/// `id` 0: etcd chooses the lease's ID (the field is omitted).
std::string render_lease_grant(std::chrono::seconds ttl, LeaseId id);
std::string render_lease_id(LeaseId id);  // keepalive, revoke
std::string render_watch_create(const WatchRequest& w);
std::string render_authenticate(std::string_view name, std::string_view password);

// --- replies (bodies of 200 answers) ---
Result<RangeResult> parse_range_reply(std::string_view body);
Result<Revision> parse_put_reply(std::string_view body);
Result<DeleteResult> parse_delete_reply(std::string_view body);
Result<TxnResult> parse_txn_reply(std::string_view body);
Result<Lease> parse_lease_grant_reply(std::string_view body);
/// A keepalive stream's one message; a TTL of 0 means the lease is gone.
Result<Lease> parse_keepalive_reply(std::string_view body);
Result<std::string> parse_authenticate_reply(std::string_view body);
/// One message of a watch stream ({"result":{...}}, or {"error":{...}} mid-stream).
Result<WatchMessage> parse_watch_message(std::string_view line);

// --- errors ---
/// An error answer: {"error","message","code"} with its HTTP status.
struct ServerError {
  unsigned http_status = 0;
  int grpc_code = 0;  // 0 when the body was not etcd's JSON
  std::string message;
};
inline constexpr int k_grpc_deadline_exceeded = 4;
inline constexpr int k_grpc_not_found = 5;
inline constexpr int k_grpc_resource_exhausted = 8;
inline constexpr int k_grpc_unavailable = 14;
inline constexpr int k_grpc_unauthenticated = 16;

ServerError parse_server_error(unsigned http_status, std::string_view body);
/// Whether another member may answer what this one refused: unavailable, no leader, not
/// leader, timeouts, and HTTP 5xx without etcd's JSON (a proxy, a member shutting down).
bool should_fail_over(const ServerError& e);
/// Whether a call that got `e` may go to another member: should_fail_over(e), and for a call
/// that is not idempotent (a txn) only when etcd said it has no leader, so nothing was applied.
bool may_retry_elsewhere(const ServerError& e, bool idempotent);
/// Whether every op of both branches of `t` is a range: sending it twice changes nothing.
bool is_read_only(const TxnRequest& t);
/// Whether the auth token expired or is unknown to this member, so authenticating again and
/// retrying once is right.
bool is_stale_token(const ServerError& e);
/// Whether etcd refused the call because it is overloaded ("etcdserver: too many requests":
/// its applied index trails the committed one by more than 5,000 entries; or gRPC
/// RESOURCE_EXHAUSTED). Such a call was refused before it was proposed, so sending it again
/// after a pause is safe even for a txn.
bool is_overloaded(const ServerError& e);
/// How long to pause before the `attempt`-th resend (0-based) of a call etcd refused as
/// overloaded: util::backoff_pause from 100 ms.
std::chrono::milliseconds overload_pause(int attempt, double spread);
/// Resends of a call refused as overloaded before its refusal is returned (about 3 s of
/// pauses in all).
inline constexpr int k_max_overload_resends = 5;

// --- streams ---
/// Takes every complete newline-terminated message off the front of `buffer`, leaving a partial
/// one; blank lines are skipped.
std::vector<std::string> take_lines(std::string& buffer);

}  // namespace ddprun::etcd
