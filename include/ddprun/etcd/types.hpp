#pragma once
// The values the etcd v3 KV, lease and watch calls take and return, as C++ values: keys and
// values are raw bytes (the codec does the base64), revisions and lease ids are int64.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddprun::etcd {

using Revision = std::int64_t;
using LeaseId = std::int64_t;

/// A stored key; fields etcd omitted (proto3 defaults) are 0 or empty.
struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = 0;
  Revision mod_revision = 0;
  std::int64_t version = 0;
  LeaseId lease = 0;
};

/// One key (range_end empty) or [key, range_end); see prefix_end() for a prefix.
struct RangeRequest {
  std::string key;
  std::string range_end;
  std::int64_t limit = 0;
  Revision revision = 0;  // 0: the newest
  bool keys_only = false;
  /// Only `count` is returned. etcd counts every key of the range here: it ignores the
  /// min/max create and mod revision filters when counting (measured on 3.4).
  bool count_only = false;
};

struct RangeResult {
  Revision revision = 0;  // the store's revision when read (header.revision)
  std::vector<KeyValue> kvs;
  std::int64_t count = 0;
};

struct PutRequest {
  std::string key;
  std::string value;
  LeaseId lease = 0;
};

struct DeleteRequest {
  std::string key;
  std::string range_end;
};

/// What a txn compares, and how.
enum class CompareTarget { version, create_revision, mod_revision, value };
enum class CompareResult { equal, greater, less, not_equal };

struct Compare {
  std::string key;
  CompareTarget target = CompareTarget::mod_revision;
  CompareResult result = CompareResult::equal;
  std::int64_t number = 0;  // for version, create_revision, mod_revision
  std::string value;        // for value
};

/// "The key does not exist": create_revision == 0.
Compare key_absent(std::string key);
/// "Unchanged since read": mod_revision == `mod_revision`.
Compare key_unchanged(std::string key, Revision mod_revision);
/// value == `value`.
Compare value_is(std::string key, std::string value);

/// One operation of a txn branch.
struct TxnOp {
  enum class Kind { range, put, delete_range };
  Kind kind = Kind::range;
  RangeRequest range;
  PutRequest put;
  DeleteRequest del;
  static TxnOp get(RangeRequest r) { return {Kind::range, std::move(r), {}, {}}; }
  static TxnOp set(PutRequest p) { return {Kind::put, {}, std::move(p), {}}; }
  static TxnOp erase(DeleteRequest d) { return {Kind::delete_range, {}, {}, std::move(d)}; }
};

struct TxnRequest {
  std::vector<Compare> compare;
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
};

/// One response per op of the branch taken, in order.
struct TxnOpResult {
  TxnOp::Kind kind = TxnOp::Kind::range;
  RangeResult range;         // kind == range (its revision is the txn's)
  std::int64_t deleted = 0;  // kind == delete_range
};

struct TxnResult {
  bool succeeded = false;
  Revision revision = 0;
  std::vector<TxnOpResult> responses;
};

struct DeleteResult {
  Revision revision = 0;
  std::int64_t deleted = 0;
};

struct Lease {
  LeaseId id = 0;
  std::chrono::seconds ttl{0};
};

/// A watch: one key, or [key, range_end); events after `start_revision` (0: from now).
struct WatchRequest {
  std::string key;
  std::string range_end;
  Revision start_revision = 0;
  bool prev_kv = false;
  bool no_put = false;  ///< etcd's NOPUT filter: deletes alone are sent
};

struct WatchEvent {
  enum class Type { put, del };
  Type type = Type::put;
  KeyValue kv;  // a delete carries the key and its mod_revision only
  std::optional<KeyValue> prev_kv;
};

/// One message of a watch stream.
struct WatchMessage {
  Revision revision = 0;  // header.revision (absent on a cancel reply)
  bool created = false;
  bool canceled = false;
  Revision compact_revision = 0;  // set when the start revision was compacted away
  std::string cancel_reason;
  std::vector<WatchEvent> events;
};

}  // namespace ddprun::etcd
