#pragma once
// A multi-node backend's death notice (rdzv/death_notice.hpp): what it was built from, plus
// the round this agent runs in and its etcd lease, handed to the sink (the guardian) at once
// and again at every change; nullopt once the agent's work is done (the exit barrier), when
// its death must not end the round its peers are finishing.

#include "ddprun/rdzv/death_notice.hpp"

#include <functional>
#include <optional>
#include <utility>

namespace ddprun::backend {

using NoticeSink = std::function<void(const std::optional<rdzv::DeathNotice>&)>;

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
  void set_done() {
    done_ = true;
    send();
  }

 private:
  void send() const {
    if (sink_) {
      sink_(done_ ? std::nullopt : std::optional<rdzv::DeathNotice>(notice_));
    }
  }
  rdzv::DeathNotice notice_;
  bool done_ = false;
  NoticeSink sink_;
};

}  // namespace ddprun::backend
