#pragma once
// The guardian's notice: what the agent wants told to the other nodes if it dies (an opaque
// payload; the rendezvous' one is rdzv/death_notice.hpp). The agent replaces it whenever it
// changes (each round, a new etcd lease) and clears it before it ends in order. When the
// guardian sees the agent's socket close, it kills the worker groups as before and then, when
// a notice is held, runs this same executable as `ddprun __agent-died <agent pid>` with the
// payload on its stdin: a fresh single-threaded process that may use the store and etcd clients,
// which the forked guardian may not (it only makes syscalls). It waits for it, bounded.
//
// Pure part: HeldNotice (fixed storage, no allocation). I/O part: deliver_notice.

#include "ddprun/process/guardian.hpp"

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstddef>

namespace ddprun::process {

/// The hidden subcommand (not in --help, the man page or the completions).
inline constexpr const char* k_agent_died_command = "__agent-died";
/// How long the guardian waits for it before SIGKILL.
inline constexpr std::chrono::milliseconds k_notice_wait{10000};

/// The notice the guardian holds.
class HeldNotice {
 public:
  /// notice: replaces the payload; clear_notice: drops it; other messages: nothing.
  void apply(const GuardMessage& message) noexcept;
  bool empty() const noexcept { return size_ == 0; }
  const unsigned char* data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return size_; }

 private:
  std::array<unsigned char, k_max_notice_bytes> bytes_{};
  std::size_t size_ = 0;
};

/// In the guardian (syscalls only): runs `ddprun __agent-died <agent>` (/proc/self/exe, else
/// `exe`, the path read at the guardian's start) with the notice on its stdin and its stdout on
/// stderr, waits for it at most k_notice_wait, then SIGKILLs it. Says on stderr only what went
/// wrong here; the command says what it did.
void deliver_notice(const char* exe, pid_t agent, const HeldNotice& notice) noexcept;

}  // namespace ddprun::process
