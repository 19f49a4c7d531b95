#pragma once
// A multi-node backend's death notice (rdzv/death_notice.hpp): what it was built from, plus
// the round this agent runs in and its etcd lease, handed to the sink (the guardian) at once
// and again at every change.

#include "ddprun/rdzv/death_notice.hpp"

#include <functional>
#include <optional>
#include <utility>

namespace ddprun::app {

using NoticeSink = std::function<void(const rdzv::DeathNotice&)>;

class NoticeKeeper {
 public:
  void reset(rdzv::DeathNotice base) { notice_ = std::move(base); }
  void set_sink(NoticeSink sink) {
    sink_ = std::move(sink);
    send();
  }
  void set_round(std::optional<int> round) {
    notice_.round = round;
    send();
  }
  void set_lease(std::int64_t lease) {
    notice_.lease = lease;
    send();
  }

 private:
  void send() const {
    if (sink_) {
      sink_(notice_);
    }
  }
  rdzv::DeathNotice notice_;
  NoticeSink sink_;
};

}  // namespace ddprun::app
