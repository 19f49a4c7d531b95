#pragma once
// The guardian: a tiny process forked by the agent at start that kills the workers' process
// groups when the agent dies without stopping them (kill -9, OOM killer).
//
// Workers get PR_SET_PDEATHSIG, but their own children (DataLoader workers, a wrapper shell's
// program) do not, and after a SIGKILL of the agent nobody else would stop them. The agent tells
// the guardian every worker group it starts ("watch") and every group it has seen empty
// ("forget") over a socket; when the socket reaches end-of-file, because the agent is gone, the
// guardian sends SIGKILL to every group still watched and exits.
//
// Pure part: the message codec and GuardedGroups (fixed storage, no allocation, so the forked
// child may use them even when the agent had threads). I/O part: Guardian.

#include "ddprun/util/result.hpp"

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <optional>

namespace ddprun::process {

/// One message from the agent to the guardian.
struct GuardMessage {
  enum class Op : int { watch = 1, forget = 2 } op;
  pid_t pgid;
};

inline constexpr std::size_t k_guard_message_size = 8;
using GuardBytes = std::array<unsigned char, k_guard_message_size>;

GuardBytes encode_guard_message(const GuardMessage& message);
/// nullopt for a wrong length, an unknown op, or a pgid that is not a real group (<= 1).
std::optional<GuardMessage> decode_guard_message(const unsigned char* data, std::size_t size);

/// The set of watched process groups. More workers per node than this never happen; a watch
/// beyond it is refused (and the agent warns).
inline constexpr std::size_t k_max_guarded_groups = 1024;

class GuardedGroups {
 public:
  /// Applies a message. False only when a watch does not fit.
  bool apply(const GuardMessage& message) noexcept;
  std::size_t size() const noexcept { return size_; }
  bool contains(pid_t pgid) const noexcept;
  const pid_t* begin() const noexcept { return groups_.data(); }
  const pid_t* end() const noexcept { return groups_.data() + size_; }

 private:
  std::array<pid_t, k_max_guarded_groups> groups_{};
  std::size_t size_ = 0;
};

/// The agent's handle on its guardian. A default-constructed one is inactive: calls are no-ops.
class Guardian {
 public:
  /// Forks the guardian (an error names the failed call). It runs in its own process group (so a
  /// signal to the agent's group or the terminal's Ctrl-C does not take it down first) and ignores
  /// the catchable termination signals: only the agent's end of the socket decides when it acts.
  static Result<Guardian> start();
  Guardian() = default;
  Guardian(Guardian&& other) noexcept;
  Guardian& operator=(Guardian&& other) noexcept;
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;
  /// Closing the socket makes the guardian kill whatever is still watched and exit.
  ~Guardian();

  bool active() const { return fd_ >= 0; }
  pid_t pid() const { return pid_; }
  /// False when the guardian is not there to hear it.
  bool watch(pid_t pgid);
  bool forget(pid_t pgid);

 private:
  bool send(const GuardMessage& message);
  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace ddprun::process
