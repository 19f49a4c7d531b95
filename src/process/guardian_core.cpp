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

std::optional<GuardMessage> decode_guard_message(const unsigned char* data, std::size_t size) {
  if (size != k_guard_message_size) {
    return std::nullopt;
  }
  std::int32_t op = 0;
  std::int32_t pgid = 0;
  std::memcpy(&op, data, sizeof op);
  std::memcpy(&pgid, data + sizeof op, sizeof pgid);
  bool known = op == static_cast<std::int32_t>(GuardMessage::Op::watch) ||
               op == static_cast<std::int32_t>(GuardMessage::Op::forget);
  if (!known || pgid <= 1) {
    return std::nullopt;
  }
  return GuardMessage{static_cast<GuardMessage::Op>(op), static_cast<pid_t>(pgid)};
}

bool GuardedGroups::contains(pid_t pgid) const noexcept {
  return std::find(begin(), end(), pgid) != end();
}

bool GuardedGroups::apply(const GuardMessage& message) noexcept {
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
