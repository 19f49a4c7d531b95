#pragma once
// Reading the gateway's proto3 JSON: int64 as strings, absent fields as their default.
// A malformed field throws Malformed, which each parse_* turns into one Error at its edge.

#include "ddprun/etcd/types.hpp"
#include "ddprun/util/result.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace ddprun::etcd::detail {

using nlohmann::json;

struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An int64 field sent as "123" (or, leniently, 123); 0 when absent.
std::int64_t int_field(const json& j, const char* name);
bool bool_field(const json& j, const char* name);
/// A base64 bytes field, decoded; empty when absent.
std::string bytes_field(const json& j, const char* name);
/// An object field, or an empty object when absent.
const json& object_field(const json& j, const char* name);
/// header.revision of a reply.
Revision header_revision(const json& reply);
KeyValue parse_kv(const json& j);

/// Parses `body` and runs `read` over it; JSON or field errors become one protocol Error
/// naming the call ("etcd kv/range: malformed reply: ...").
template <typename T, typename F>
Result<T> read_reply(std::string_view call, std::string_view body, F read) {
  try {
    const json j = json::parse(body);
    if (!j.is_object()) {
      throw Malformed("not a JSON object");
    }
    return read(j);
  } catch (const std::exception& e) {
    return make_error(ErrorCode::protocol,
                      std::string("etcd ") + std::string(call) + ": malformed reply: " + e.what());
  }
}

}  // namespace ddprun::etcd::detail
