// Opcode tables and the incremental request decoder (spec §1.3, §1.4, §6.2).

#include "ddprun/store/protocol.hpp"

#include <fmt/format.h>

#include <array>

namespace ddprun::store {
namespace {

constexpr std::array k_d0_ops{Op::set,  Op::compare_set,  Op::get,       Op::add,       Op::check,
                              Op::wait, Op::get_num_keys, Op::watch_key, Op::delete_key};
constexpr std::array k_d1_ops{Op::set,    Op::compare_set, Op::get,          Op::add,
                              Op::check,  Op::wait,        Op::get_num_keys, Op::delete_key,
                              Op::append, Op::multi_get,   Op::multi_set,    Op::cancel_wait};
constexpr std::array k_d2_ops{Op::validate,    Op::set,       Op::compare_set, Op::get,
                              Op::add,         Op::check,     Op::wait,        Op::get_num_keys,
                              Op::delete_key,  Op::append,    Op::multi_get,   Op::multi_set,
                              Op::cancel_wait, Op::ping,      Op::queue_push,  Op::queue_pop,
                              Op::queue_len,   Op::list_keys, Op::barrier};

constexpr std::uint8_t k_legacy_watch_or_delete = 7;
constexpr std::uint8_t k_legacy_delete_or_append = 8;
constexpr std::uint8_t k_d1_only_first = 9;
constexpr std::uint8_t k_d1_only_last = 11;
constexpr std::size_t k_hello_bytes = 5;
constexpr std::size_t k_compact_threshold = 64 * 1024;

template <typename Table>
std::optional<Op> lookup(const Table& table, std::uint8_t byte) {
  if (byte >= table.size()) {
    return std::nullopt;
  }
  return table[byte];
}

template <typename Table>
std::optional<std::uint8_t> reverse_lookup(const Table& table, Op op) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i] == op) {
      return static_cast<std::uint8_t>(i);
    }
  }
  return std::nullopt;
}

/// Bounds-checked little-endian reader over the buffered bytes of one request.
class Reader {
 public:
  Reader(std::string_view data, const DecodeLimits& limits) : data_(data), limits_(limits) {}

  bool u8(std::uint8_t& v) {
    if (!have(1)) {
      return false;
    }
    v = static_cast<std::uint8_t>(data_[pos_++]);
    return true;
  }
  bool u32(std::uint32_t& v) {
    if (!have(4)) {
      return false;
    }
    v = get_u32(data_.substr(pos_, 4));
    pos_ += 4;
    return true;
  }
  bool u64(std::uint64_t& v) {
    if (!have(8)) {
      return false;
    }
    v = get_u64(data_.substr(pos_, 8));
    pos_ += 8;
    return true;
  }
  bool i64(std::int64_t& v) {
    std::uint64_t u = 0;
    if (!u64(u)) {
      return false;
    }
    v = static_cast<std::int64_t>(u);
    return true;
  }
  bool bytes(std::string& out, std::uint64_t limit, std::string_view what) {
    std::uint64_t n = 0;
    if (!u64(n)) {
      return false;
    }
    if (n > limit) {
      return bad(fmt::format("{} of {} bytes exceeds {}", what, n, limit));
    }
    if (!have(static_cast<std::size_t>(n))) {
      return false;
    }
    out.assign(data_.substr(pos_, static_cast<std::size_t>(n)));
    pos_ += static_cast<std::size_t>(n);
    return true;
  }
  bool key(std::string& out) { return bytes(out, limits_.max_key_bytes, "key"); }
  bool value(std::string& out) { return bytes(out, limits_.max_value_bytes, "value"); }
  bool count(std::uint64_t& n) {
    if (!u64(n)) {
      return false;
    }
    if (n > limits_.max_keys_per_request) {
      return bad(fmt::format("{} keys in one request exceeds {}", n, limits_.max_keys_per_request));
    }
    return true;
  }
  bool key_list(std::vector<std::string>& out) {
    std::uint64_t n = 0;
    if (!count(n)) {
      return false;
    }
    out.resize(static_cast<std::size_t>(n));
    for (auto& k : out) {
      if (!key(k)) {
        return false;
      }
    }
    return true;
  }
  bool bad(std::string message) {
    error_ = std::move(message);
    return false;
  }
  bool is_bad() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  std::size_t pos() const { return pos_; }
  std::size_t need() const { return need_; }
  std::size_t remaining() const { return data_.size() - pos_; }

 private:
  bool have(std::size_t n) {
    if (data_.size() - pos_ >= n) {
      return true;
    }
    need_ = pos_ + n;
    return false;
  }
  std::string_view data_;
  const DecodeLimits& limits_;
  std::size_t pos_ = 0;
  std::size_t need_ = 0;
  std::string error_;
};

bool decode_multi_set(Reader& r, Request& req) {
  std::uint64_t n = 0;
  if (!r.count(n)) {
    return false;
  }
  req.pairs.resize(static_cast<std::size_t>(n));
  for (auto& [k, v] : req.pairs) {
    if (!r.key(k) || !r.value(v)) {
      return false;
    }
  }
  return true;
}

bool decode_validate(Reader& r, Request& req) {
  if (!r.u32(req.word)) {
    return false;
  }
  if (req.word != k_validation_magic) {
    return r.bad(
        fmt::format("VALIDATE magic {:#010x}, expected {:#010x}", req.word, k_validation_magic));
  }
  return true;
}

/// The fields after the opcode byte (spec §1.4). False: short input or r.is_bad().
bool decode_body(Reader& r, Request& req) {
  switch (req.op) {
    case Op::validate:
      return decode_validate(r, req);
    case Op::ping:
      return r.u32(req.word);
    case Op::set:
    case Op::append:
    case Op::queue_push:
      return r.key(req.key) && r.value(req.value);
    case Op::compare_set:
      return r.key(req.key) && r.value(req.value) && r.value(req.desired);
    case Op::get:
    case Op::watch_key:
    case Op::delete_key:
    case Op::queue_pop:
    case Op::queue_len:
      return r.key(req.key);
    case Op::add:
    case Op::barrier:
      return r.key(req.key) && r.i64(req.number);
    case Op::check:
    case Op::wait:
    case Op::multi_get:
      return r.key_list(req.keys);
    case Op::multi_set:
      return decode_multi_set(r, req);
    case Op::get_num_keys:
    case Op::cancel_wait:
    case Op::list_keys:
      return true;
  }
  return r.bad("unhandled op");
}

}  // namespace

std::optional<Op> op_from_byte(Dialect dialect, std::uint8_t byte) {
  switch (dialect) {
    case Dialect::d0:
      return lookup(k_d0_ops, byte);
    case Dialect::d1:
      return lookup(k_d1_ops, byte);
    case Dialect::d2:
      return lookup(k_d2_ops, byte);
    case Dialect::legacy_auto:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::uint8_t> byte_from_op(Dialect dialect, Op op) {
  switch (dialect) {
    case Dialect::d0:
      return reverse_lookup(k_d0_ops, op);
    case Dialect::d1:
      return reverse_lookup(k_d1_ops, op);
    case Dialect::d2:
      return reverse_lookup(k_d2_ops, op);
    case Dialect::legacy_auto:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string_view to_string(Op op) {
  constexpr std::array<std::string_view, 20> k_names{
      "VALIDATE",   "SET",       "COMPARE_SET", "GET",         "ADD",
      "CHECK",      "WAIT",      "GETNUMKEYS",  "WATCH_KEY",   "DELETE_KEY",
      "APPEND",     "MULTI_GET", "MULTI_SET",   "CANCEL_WAIT", "PING",
      "QUEUE_PUSH", "QUEUE_POP", "QUEUE_LEN",   "LIST_KEYS",   "BARRIER"};
  return k_names[static_cast<std::size_t>(op)];
}

std::string_view to_string(Dialect dialect) {
  switch (dialect) {
    case Dialect::legacy_auto:
      return "legacy";
    case Dialect::d0:
      return "D0";
    case Dialect::d1:
      return "D1";
    case Dialect::d2:
      return "D2";
  }
  return "?";
}

Decoder::Decoder(DecodeLimits limits, Dialect forced_legacy, HelloPolicy hello)
    : limits_(limits),
      dialect_(forced_legacy),
      hello_(hello),
      hello_checked_(hello == HelloPolicy::legacy_only) {}

void Decoder::feed(std::string_view bytes) {
  if (start_ > k_compact_threshold && start_ * 2 > buf_.size()) {
    buf_.erase(0, start_);  // need_total_ is relative to start_, so it stays valid
    start_ = 0;
  }
  buf_.append(bytes);
}

void Decoder::resolve_silence() { silence_ = true; }

void Decoder::consumed(std::size_t n) {
  start_ += n;
  need_total_ = 0;
  ++decoded_;
  if (start_ == buf_.size()) {
    buf_.clear();  // everything consumed: reuse the buffer from its start
    start_ = 0;
    if (buf_.capacity() > k_idle_buffer_keep_bytes) {
      std::string().swap(buf_);  // an idle connection does not keep a large request's buffer
    }
  }
}

DecodeResult Decoder::fail(std::string message) {
  failed_ = true;
  return DecodeResult{DecodeStatus::error, {}, std::move(message)};
}

bool Decoder::detect_hello() {
  const std::string_view view(buf_.data() + start_, buffered());
  if (view[0] == '\0' && view.size() < k_hello_bytes) {
    return false;
  }
  hello_checked_ = true;
  if (view.substr(0, k_hello_bytes) == encode_validate()) {
    dialect_ = Dialect::d2;
    start_ += k_hello_bytes;
  }
  return true;
}

std::optional<Op> Decoder::resolve_op(std::uint8_t byte, std::string& error) {
  if (dialect_ != Dialect::legacy_auto) {
    auto op = op_from_byte(dialect_, byte);
    if (!op) {
      error = fmt::format("unknown opcode {:#04x} in dialect {}", byte, to_string(dialect_));
    }
    return op;
  }
  if (byte < k_legacy_watch_or_delete) {
    return op_from_byte(Dialect::d0, byte);
  }
  if (byte == k_legacy_watch_or_delete) {
    dialect_ = decoded_ == 0 ? Dialect::d0 : Dialect::d1;
    return op_from_byte(dialect_, byte);
  }
  if (byte >= k_d1_only_first && byte <= k_d1_only_last) {
    dialect_ = Dialect::d1;
    return op_from_byte(dialect_, byte);
  }
  if (byte == k_legacy_delete_or_append) {
    return Op::delete_key;  // provisional; next() decides DELETE_KEY vs APPEND
  }
  error = fmt::format("unknown opcode {:#04x} in legacy dialect", byte);
  return std::nullopt;
}

DecodeResult Decoder::next() {
  if (failed_) {
    return DecodeResult{DecodeStatus::error, {}, "decoder already failed"};
  }
  if (buffered() == 0 || buffered() < need_total_) {
    return {};
  }
  if (!hello_checked_ && !detect_hello()) {
    return {};
  }
  if (hello_ == HelloPolicy::validate_only && dialect_ != Dialect::d2) {
    failed_ = true;
    return DecodeResult{DecodeStatus::unvalidated, {}, "first message is not VALIDATE"};
  }
  if (buffered() == 0) {
    return {};
  }

  Reader r(std::string_view(buf_.data() + start_, buffered()), limits_);
  std::uint8_t byte = 0;
  (void)r.u8(byte);
  const bool ambiguous8 = dialect_ == Dialect::legacy_auto && byte == k_legacy_delete_or_append;
  std::string error;
  auto op = resolve_op(byte, error);
  if (!op) {
    return fail(error);
  }

  DecodeResult result{DecodeStatus::request, Request{*op}, {}};
  if (ambiguous8) {
    if (!r.key(result.request.key)) {
      if (r.is_bad()) {
        return fail(r.error());
      }
      need_total_ = r.need();
      return {};
    }
    if (r.remaining() == 0 && !silence_) {
      return DecodeResult{DecodeStatus::ambiguous, {}, {}};
    }
    dialect_ = r.remaining() == 0 ? Dialect::d0 : Dialect::d1;
    silence_ = false;
    if (dialect_ == Dialect::d0) {
      consumed(r.pos());
      return result;
    }
    // D1 APPEND: re-parse from the opcode with the table now fixed.
    return next();
  }
  if (!decode_body(r, result.request)) {
    if (r.is_bad()) {
      return fail(r.error());
    }
    if (r.need() > limits_.max_request_bytes) {
      return fail(fmt::format("{} of {} bytes exceeds {}", to_string(*op), r.need(),
                              limits_.max_request_bytes));
    }
    need_total_ = r.need();
    return {};
  }
  consumed(r.pos());
  return result;
}

}  // namespace ddprun::store
