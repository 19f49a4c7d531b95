// Reply bodies of 200 answers. Absent fields are their defaults (proto3 JSON mapping).

#include "ddprun/etcd/codec.hpp"

#include "json_fields.hpp"

namespace ddprun::etcd {
namespace {

using detail::bytes_field;
using detail::header_revision;
using detail::int_field;
using detail::json;
using detail::Malformed;
using detail::object_field;
using detail::read_reply;

const json& array_field(const json& j, const char* name) {
  static const json k_empty = json::array();
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    return k_empty;
  }
  if (!it->is_array()) {
    throw Malformed(std::string("field \"") + name + "\" is not an array");
  }
  return *it;
}

RangeResult read_range(const json& j, Revision revision) {
  RangeResult r{revision, {}, int_field(j, "count")};
  for (const json& kv : array_field(j, "kvs")) {
    r.kvs.push_back(detail::parse_kv(kv));
  }
  return r;
}

TxnOpResult read_op_result(const json& j, Revision revision) {
  if (j.contains("response_range")) {
    return {TxnOp::Kind::range, read_range(object_field(j, "response_range"), revision), 0};
  }
  if (j.contains("response_put")) {
    return {TxnOp::Kind::put, {}, 0};
  }
  if (j.contains("response_delete_range")) {
    return {TxnOp::Kind::delete_range,
            {},
            int_field(object_field(j, "response_delete_range"), "deleted")};
  }
  throw Malformed("a txn response that is not range, put or delete_range");
}

WatchEvent read_event(const json& j) {
  const auto type = j.value("type", std::string("PUT"));
  if (type != "PUT" && type != "DELETE") {
    throw Malformed("event type \"" + type + "\"");
  }
  WatchEvent e{type == "PUT" ? WatchEvent::Type::put : WatchEvent::Type::del,
               detail::parse_kv(object_field(j, "kv")), std::nullopt};
  if (j.contains("prev_kv")) {
    e.prev_kv = detail::parse_kv(object_field(j, "prev_kv"));
  }
  return e;
}

}  // namespace

Result<RangeResult> parse_range_reply(std::string_view body) {
  return read_reply<RangeResult>("kv/range", body,
                                 [](const json& j) { return read_range(j, header_revision(j)); });
}

Result<Revision> parse_put_reply(std::string_view body) {
  return read_reply<Revision>("kv/put", body, [](const json& j) { return header_revision(j); });
}

Result<DeleteResult> parse_delete_reply(std::string_view body) {
  return read_reply<DeleteResult>("kv/deleterange", body, [](const json& j) {
    return DeleteResult{header_revision(j), int_field(j, "deleted")};
  });
}

Result<TxnResult> parse_txn_reply(std::string_view body) {
  return read_reply<TxnResult>("kv/txn", body, [](const json& j) {
    TxnResult t{detail::bool_field(j, "succeeded"), header_revision(j), {}};
    for (const json& r : array_field(j, "responses")) {
      t.responses.push_back(read_op_result(r, t.revision));
    }
    return t;
  });
}

Result<Lease> parse_lease_grant_reply(std::string_view body) {
  return read_reply<Lease>("lease/grant", body, [](const json& j) {
    if (!j.value("error", std::string()).empty()) {
      throw Malformed(j.value("error", std::string()));
    }
    return Lease{int_field(j, "ID"), std::chrono::seconds(int_field(j, "TTL"))};
  });
}

Result<Lease> parse_keepalive_reply(std::string_view body) {
  return read_reply<Lease>("lease/keepalive", body, [](const json& j) {
    const json& r = object_field(j, "result");
    return Lease{int_field(r, "ID"), std::chrono::seconds(int_field(r, "TTL"))};
  });
}

Result<std::string> parse_authenticate_reply(std::string_view body) {
  return read_reply<std::string>("auth/authenticate", body, [](const json& j) {
    auto token = j.value("token", std::string());
    if (token.empty()) {
      throw Malformed("no token");
    }
    return token;
  });
}

Result<WatchMessage> parse_watch_message(std::string_view line) {
  return read_reply<WatchMessage>("watch", line, [](const json& j) -> Result<WatchMessage> {
    if (j.contains("error")) {
      // grpc-gateway's mid-stream error: {"error":{"grpc_code":14,"message":...}}
      const json& e = object_field(j, "error");
      return make_error(ErrorCode::protocol,
                        "etcd watch: stream error: " + e.value("message", std::string("?")) +
                            " (code " + std::to_string(e.value("grpc_code", 0)) + ")");
    }
    const json& r = object_field(j, "result");
    WatchMessage m{header_revision(r),
                   detail::bool_field(r, "created"),
                   detail::bool_field(r, "canceled"),
                   int_field(r, "compact_revision"),
                   r.value("cancel_reason", std::string()),
                   {}};
    for (const json& e : array_field(r, "events")) {
      m.events.push_back(read_event(e));
    }
    return m;
  });
}

}  // namespace ddprun::etcd
