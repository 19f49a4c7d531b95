// Request bodies for POST /v3/...: bytes base64, int64 as strings, defaults left out.

#include "ddprun/etcd/codec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ddprun::etcd {
namespace {

using nlohmann::json;

json range_json(const RangeRequest& r) {
  json j{{"key", base64_encode(r.key)}};
  if (!r.range_end.empty()) {
    j["range_end"] = base64_encode(r.range_end);
  }
  if (r.limit > 0) {
    j["limit"] = std::to_string(r.limit);
  }
  if (r.revision > 0) {
    j["revision"] = std::to_string(r.revision);
  }
  if (r.keys_only) {
    j["keys_only"] = true;
  }
  if (r.count_only) {
    j["count_only"] = true;
  }
  return j;
}

json put_json(const PutRequest& p) {
  json j{{"key", base64_encode(p.key)}, {"value", base64_encode(p.value)}};
  if (p.lease != 0) {
    j["lease"] = std::to_string(p.lease);
  }
  return j;
}

json delete_json(const DeleteRequest& d) {
  json j{{"key", base64_encode(d.key)}};
  if (!d.range_end.empty()) {
    j["range_end"] = base64_encode(d.range_end);
  }
  return j;
}

const char* target_name(CompareTarget t) {
  switch (t) {
    case CompareTarget::version:
      return "VERSION";
    case CompareTarget::create_revision:
      return "CREATE";
    case CompareTarget::mod_revision:
      return "MOD";
    case CompareTarget::value:
      return "VALUE";
  }
  return "MOD";
}

const char* result_name(CompareResult r) {
  switch (r) {
    case CompareResult::equal:
      return "EQUAL";
    case CompareResult::greater:
      return "GREATER";
    case CompareResult::less:
      return "LESS";
    case CompareResult::not_equal:
      return "NOT_EQUAL";
  }
  return "EQUAL";
}

// The field holding the operand is named after the target (proto oneof target_union).
json compare_json(const Compare& c) {
  json j{{"key", base64_encode(c.key)},
         {"target", target_name(c.target)},
         {"result", result_name(c.result)}};
  switch (c.target) {
    case CompareTarget::version:
      j["version"] = std::to_string(c.number);
      break;
    case CompareTarget::create_revision:
      j["create_revision"] = std::to_string(c.number);
      break;
    case CompareTarget::mod_revision:
      j["mod_revision"] = std::to_string(c.number);
      break;
    case CompareTarget::value:
      j["value"] = base64_encode(c.value);
      break;
  }
  return j;
}

json op_json(const TxnOp& op) {
  switch (op.kind) {
    case TxnOp::Kind::range:
      return {{"request_range", range_json(op.range)}};
    case TxnOp::Kind::put:
      return {{"request_put", put_json(op.put)}};
    case TxnOp::Kind::delete_range:
      return {{"request_delete_range", delete_json(op.del)}};
  }
  return json::object();
}

json ops_json(const std::vector<TxnOp>& ops) {
  json a = json::array();
  for (const TxnOp& op : ops) {
    a.push_back(op_json(op));
  }
  return a;
}

}  // namespace

Compare key_absent(std::string key) {
  return Compare{std::move(key), CompareTarget::create_revision, CompareResult::equal, 0, {}};
}

Compare key_unchanged(std::string key, Revision mod_revision) {
  return Compare{
      std::move(key), CompareTarget::mod_revision, CompareResult::equal, mod_revision, {}};
}

Compare value_is(std::string key, std::string value) {
  return Compare{std::move(key), CompareTarget::value, CompareResult::equal, 0, std::move(value)};
}

bool is_read_only(const TxnRequest& t) {
  auto reads = [](const std::vector<TxnOp>& ops) {
    return std::all_of(ops.begin(), ops.end(),
                       [](const TxnOp& op) { return op.kind == TxnOp::Kind::range; });
  };
  return reads(t.success) && reads(t.failure);
}

std::string render_range(const RangeRequest& r) { return range_json(r).dump(); }
std::string render_put(const PutRequest& p) { return put_json(p).dump(); }
std::string render_delete(const DeleteRequest& d) { return delete_json(d).dump(); }

std::string render_txn(const TxnRequest& t) {
  json compare = json::array();
  for (const Compare& c : t.compare) {
    compare.push_back(compare_json(c));
  }
  return json{
      {"compare", compare}, {"success", ops_json(t.success)}, {"failure", ops_json(t.failure)}}
      .dump();
}

std::string render_lease_grant(std::chrono::seconds ttl, LeaseId id) {
  json j{{"TTL", std::to_string(ttl.count())}};
  if (id != 0) {
    j["ID"] = std::to_string(id);
  }
  return j.dump();
}

std::string render_lease_id(LeaseId id) { return json{{"ID", std::to_string(id)}}.dump(); }

std::string render_watch_create(const WatchRequest& w) {
  json c{{"key", base64_encode(w.key)}};
  if (!w.range_end.empty()) {
    c["range_end"] = base64_encode(w.range_end);
  }
  if (w.start_revision > 0) {
    c["start_revision"] = std::to_string(w.start_revision);
  }
  if (w.prev_kv) {
    c["prev_kv"] = true;
  }
  if (w.no_put) {
    c["filters"] = json::array({"NOPUT"});
  }
  return json{{"create_request", c}}.dump();
}

std::string render_authenticate(std::string_view name, std::string_view password) {
  // Not base64 on the wire: bytes that are not UTF-8 become U+FFFD instead of throwing.
  return json{{"name", name}, {"password", password}}.dump(-1, ' ', false,
                                                           json::error_handler_t::replace);
}

}  // namespace ddprun::etcd
