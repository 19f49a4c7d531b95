#pragma once
// The guardian: a tiny process forked by the agent at start that kills the workers' process
// groups when the agent dies without stopping them (kill -9, OOM killer).
//
// Workers get PR_SET_PDEATHSIG, but their own children (DataLoader workers, a wrapper shell's
// program) do not, and after a SIGKILL of the agent nobody else would stop them. The agent tells
// the guardian every worker group it starts ("watch") and every group it has seen empty
// ("forget") over a socket; when the socket reaches end-of-file, because the agent is gone, the
// guardian sends SIGKILL to every group still watched and exits. The agent may also leave a
// "notice" with it (an opaque payload, guardian_notice.hpp): what to tell the other nodes when
// the agent dies; the guardian hands it to `ddprun __agent-died` after killing the groups.
//
// Pure part: the message codec and GuardedGroups (fixed storage, no allocation, so the forked
// child may use them even when the agent had threads). I/O part: Guardian.

#include "ddprun/util/result.hpp"

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace ddprun::process {

/// One message from the agent to the guardian. watch/forget carry a group (8 bytes on the
/// wire), notice an opaque payload (4 + its size), clear_notice nothing (4).
struct GuardMessage {
  enum class Op : int { watch = 1, forget = 2, notice = 3, clear_notice = 4 } op;
  pid_t pgid = 0;
  const unsigned char* payload = nullptr;  ///< notice: into the decoded buffer
  std::size_t payload_size = 0;
};

inline constexpr std::size_t k_guard_message_size = 8;
inline constexpr std::size_t k_guard_op_size = 4;
/// The largest notice payload the guardian holds (its fixed storage).
inline constexpr std::size_t k_max_notice_bytes = 16384;
/// The largest message on the socket: a notice of k_max_notice_bytes.
inline constexpr std::size_t k_max_guard_message = k_guard_op_size + k_max_notice_bytes;
using GuardBytes = std::array<unsigned char, k_guard_message_size>;

/// watch and forget.
GuardBytes encode_guard_message(const GuardMessage& message);
/// nullopt for a wrong length, an unknown op, a pgid that is not a real group (<= 1), or a
/// notice that is empty or larger than k_max_notice_bytes. A notice's payload points into `data`.
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
  /// Replaces the notice the guardian holds (1..k_max_notice_bytes bytes; false beyond).
  bool notice(std::string_view payload);
  /// The agent ends in order: nothing is to be told.
  bool clear_notice();

 private:
  bool send(const GuardMessage& message);
  bool send_bytes(const unsigned char* data, std::size_t size);
  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace ddprun::process
