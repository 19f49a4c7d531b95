// Pure part of the guardian's notice: the payload it holds, in fixed storage.

#include "ddprun/process/guardian_notice.hpp"

#include <cstring>

namespace ddprun::process {

void HeldNotice::apply(const GuardMessage& message) noexcept {
  if (message.op == GuardMessage::Op::clear_notice) {
    size_ = 0;
    return;
  }
  if (message.op != GuardMessage::Op::notice || message.payload_size > bytes_.size()) {
    return;
  }
  std::memcpy(bytes_.data(), message.payload, message.payload_size);
  size_ = message.payload_size;
}

}  // namespace ddprun::process
