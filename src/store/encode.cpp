// Little-endian encoders for requests, replies and watch events (spec §1.1, §1.4, §2.7).

#include "ddprun/store/protocol.hpp"

#include <fmt/format.h>

namespace ddprun::store {
namespace {

constexpr unsigned k_bits_per_byte = 8;

template <typename U>
void put_le(std::string& out, U v) {
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    out.push_back(static_cast<char>(static_cast<std::uint8_t>(v >> (i * k_bits_per_byte))));
  }
}

template <typename U>
U get_le(std::string_view bytes) {
  U v = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    v |= static_cast<U>(static_cast<U>(static_cast<std::uint8_t>(bytes[i]))
                        << (i * k_bits_per_byte));
  }
  return v;
}

void put_body(std::string& out, const Request& req) {
  switch (req.op) {
    case Op::validate:
    case Op::ping:
      put_u32(out, req.word);
      break;
    case Op::set:
    case Op::append:
    case Op::queue_push:
      put_bytes(out, req.key);
      put_bytes(out, req.value);
      break;
    case Op::compare_set:
      put_bytes(out, req.key);
      put_bytes(out, req.value);
      put_bytes(out, req.desired);
      break;
    case Op::get:
    case Op::watch_key:
    case Op::delete_key:
    case Op::queue_pop:
    case Op::queue_len:
      put_bytes(out, req.key);
      break;
    case Op::add:
    case Op::barrier:
      put_bytes(out, req.key);
      put_i64(out, req.number);
      break;
    case Op::check:
    case Op::wait:
    case Op::multi_get:
      put_list(out, req.keys);
      break;
    case Op::multi_set:
      put_u64(out, req.pairs.size());
      for (const auto& [k, v] : req.pairs) {
        put_bytes(out, k);
        put_bytes(out, v);
      }
      break;
    case Op::get_num_keys:
    case Op::cancel_wait:
    case Op::list_keys:
      break;
  }
}

}  // namespace

void put_u8(std::string& out, std::uint8_t v) { out.push_back(static_cast<char>(v)); }
std::string one_byte(std::uint8_t v) { return std::string(1, static_cast<char>(v)); }
void put_u32(std::string& out, std::uint32_t v) { put_le(out, v); }
void put_u64(std::string& out, std::uint64_t v) { put_le(out, v); }
void put_i64(std::string& out, std::int64_t v) { put_le(out, static_cast<std::uint64_t>(v)); }

void put_bytes(std::string& out, std::string_view bytes) {
  put_u64(out, bytes.size());
  out.append(bytes);
}

void put_list(std::string& out, const std::vector<std::string>& items) {
  put_u64(out, items.size());
  for (const auto& item : items) {
    put_bytes(out, item);
  }
}

std::uint64_t get_u64(std::string_view eight_bytes) { return get_le<std::uint64_t>(eight_bytes); }
std::uint32_t get_u32(std::string_view four_bytes) { return get_le<std::uint32_t>(four_bytes); }

std::string encode_validate() {
  std::string out;
  put_u8(out, 0);
  put_u32(out, k_validation_magic);
  return out;
}

Result<std::string> encode_request(Dialect dialect, const Request& request) {
  const auto byte = byte_from_op(dialect, request.op);
  if (!byte) {
    return make_error(ErrorCode::usage, fmt::format("store: {} does not exist in dialect {}",
                                                    to_string(request.op), to_string(dialect)));
  }
  std::string out;
  put_u8(out, *byte);
  put_body(out, request);
  return out;
}

std::string encode_watch_event(std::uint8_t kind, std::string_view key, std::string_view old_value,
                               std::string_view new_value) {
  std::string out;
  put_u8(out, kind);
  put_bytes(out, key);
  put_bytes(out, old_value);
  put_bytes(out, new_value);
  return out;
}

std::string loggable_key(std::string_view key) {
  std::string out;
  for (char c : key.substr(0, k_log_key_chars)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      out += fmt::format("\\x{:02x}", u);
    }
  }
  if (key.size() > k_log_key_chars) {
    out += fmt::format("...({} bytes)", key.size());
  }
  return out;
}

}  // namespace ddprun::store
