#include "json_fields.hpp"

#include "ddprun/etcd/codec.hpp"
#include "ddprun/util/strings.hpp"

namespace ddprun::etcd::detail {

std::int64_t int_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    return 0;
  }
  if (it->is_number_integer()) {
    return it->get<std::int64_t>();
  }
  if (!it->is_string()) {
    throw Malformed(std::string("field \"") + name + "\" is not an int64 string");
  }
  auto n = util::parse_int(it->get_ref<const std::string&>());
  if (!n) {
    throw Malformed(std::string("field \"") + name + "\": " + n.error().message);
  }
  return *n;
}

bool bool_field(const json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::string bytes_field(const json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    return {};
  }
  if (!it->is_string()) {
    throw Malformed(std::string("field \"") + name + "\" is not a base64 string");
  }
  auto bytes = base64_decode(it->get_ref<const std::string&>());
  if (!bytes) {
    throw Malformed(std::string("field \"") + name + "\": " + bytes.error().message);
  }
  return std::move(*bytes);
}

const json& object_field(const json& j, const char* name) {
  static const json k_empty = json::object();
  const auto it = j.find(name);
  if (it == j.end() || it->is_null()) {
    return k_empty;
  }
  if (!it->is_object()) {
    throw Malformed(std::string("field \"") + name + "\" is not an object");
  }
  return *it;
}

Revision header_revision(const json& reply) {
  return int_field(object_field(reply, "header"), "revision");
}

KeyValue parse_kv(const json& j) {
  return KeyValue{bytes_field(j, "key"),           bytes_field(j, "value"),
                  int_field(j, "create_revision"), int_field(j, "mod_revision"),
                  int_field(j, "version"),         int_field(j, "lease")};
}

}  // namespace ddprun::etcd::detail
