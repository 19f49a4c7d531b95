// Pure part of the guardian: the message codec and the set of watched groups.

#include "ddprun/process/guardian.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ddprun::process {

GuardBytes encode_guard_message(const GuardMessage& message) {
  GuardBytes out{};
  auto op = static_cast<std::int32_t>(message.op);
  auto pgid = static_cast<std::int32_t>(message.pgid);
  std::memcpy(out.data(), &op, sizeof op);
  std::memcpy(out.data() + sizeof op, &pgid, sizeof pgid);
  return out;
}

namespace {

std::optional<GuardMessage> decode_group_message(GuardMessage::Op op, const unsigned char* data,
                                                 std::size_t size) {
  if (size != k_guard_message_size) {
    return std::nullopt;
  }
  std::int32_t pgid = 0;
  std::memcpy(&pgid, data + k_guard_op_size, sizeof pgid);
  if (pgid <= 1) {
    return std::nullopt;
  }
  return GuardMessage{op, static_cast<pid_t>(pgid)};
}

}  // namespace

std::optional<GuardMessage> decode_guard_message(const unsigned char* data, std::size_t size) {
  if (size < k_guard_op_size || size > k_max_guard_message) {
    return std::nullopt;
  }
  std::int32_t op = 0;
  std::memcpy(&op, data, sizeof op);
  switch (static_cast<GuardMessage::Op>(op)) {
    case GuardMessage::Op::watch:
    case GuardMessage::Op::forget:
      return decode_group_message(static_cast<GuardMessage::Op>(op), data, size);
    case GuardMessage::Op::notice:
      if (size == k_guard_op_size) {
        return std::nullopt;
      }
      return GuardMessage{GuardMessage::Op::notice, 0, data + k_guard_op_size,
                          size - k_guard_op_size};
    case GuardMessage::Op::clear_notice:
      if (size != k_guard_op_size) {
        return std::nullopt;
      }
      return GuardMessage{GuardMessage::Op::clear_notice};
  }
  return std::nullopt;
}

bool GuardedGroups::contains(pid_t pgid) const noexcept {
  return std::find(begin(), end(), pgid) != end();
}

bool GuardedGroups::apply(const GuardMessage& message) noexcept {
  if (message.op != GuardMessage::Op::watch && message.op != GuardMessage::Op::forget) {
    return true;  // a notice: HeldNotice's
  }
  auto* last = groups_.data() + size_;
  auto* found = std::find(groups_.data(), last, message.pgid);
  if (message.op == GuardMessage::Op::forget) {
    if (found != last) {
      *found = *(last - 1);  // order does not matter: swap with the last and shrink
      --size_;
    }
    return true;
  }
  if (found != last) {
    return true;
  }
  if (size_ == groups_.size()) {
    return false;
  }
  groups_[size_++] = message.pgid;
  return true;
}

}  // namespace ddprun::process
