#pragma once
// Stacks of hung workers (pure): the text that faulthandler, `py-spy dump`, gdb and eu-stack
// print, parsed into frames; ranks grouped by their innermost frames; the short report the
// agent prints on stderr, odd groups first:
//   rank 1: wait_for_data (train.py:12) <- next_batch (train.py:40)
//   ranks 0,2-7: all_reduce (distributed_c10d.py:1536) <- train_step (train.py:55)

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ddprun::errors {

/// Frames per rank in the short report.
inline constexpr std::size_t k_report_depth = 2;

struct Frame {
  std::string function;
  std::string file;  ///< may be empty (native frame without debug info)
  int line = 0;      ///< 0: unknown
  friend bool operator==(const Frame&, const Frame&) = default;
};

struct ThreadStack {
  std::string name;           ///< the tool's header for the thread
  std::vector<Frame> frames;  ///< innermost first
  bool main = false;          ///< the process's main thread, when the tool tells
};

/// One rank's capture: its threads, or a note when no frame could be had (the /proc state).
struct RankStack {
  int rank = 0;
  std::vector<ThreadStack> threads;
  std::string note;
};

/// A rank's threads from faulthandler's dump ("Thread 0x... (most recent call first):" then
/// `  File "x.py", line 12 in f`). The main thread is the last one listed.
std::vector<ThreadStack> parse_faulthandler(std::string_view text);
/// `py-spy dump` ("Thread 123 (idle): \"MainThread\"" then "    f (x.py:12)").
std::vector<ThreadStack> parse_py_spy(std::string_view text);
/// gdb's `thread apply all bt` ("Thread 1 (...):" then "#0  0x... in f (...) at x.c:5") and
/// eu-stack ("TID 123:" then "#0  0x... f"). gdb's Thread 1 and eu-stack's first TID are main.
std::vector<ThreadStack> parse_native(std::string_view text);

/// "S (sleeping), wchan do_wait" from /proc/<pid>/stat and /proc/<pid>/wchan.
std::string render_proc_state(std::string_view stat, std::string_view wchan);

/// "f (x.py:12) <- g (x.py:40)": at most `depth` frames of the thread that stands for a rank
/// (its main thread, else its first), or the note when there is no frame.
std::string render_innermost(const RankStack& stack, std::size_t depth);
/// "0,2-7" from ranks in any order.
std::string render_rank_list(std::vector<int> ranks);

struct StackGroup {
  std::vector<int> ranks;  ///< ascending
  std::string frames;      ///< render_rank_line of each member
  friend bool operator==(const StackGroup&, const StackGroup&) = default;
};

/// The report's order: smallest groups first, ties lowest rank first (ranks ascending).
void order_stack_groups(std::vector<StackGroup>& groups);
/// A frame of Python's own or an installed package (site-packages, dist-packages, the standard
/// library, <frozen ...>), or a native frame without a file: not the user's code.
bool is_library_frame(const Frame& f);
/// A rank's report line: its innermost frame, then the innermost frame of the user's own code
/// ("all_reduce (distributed_c10d.py:2811) <- train_step (train.py:55)"), skipping torch's
/// wrappers (torch 2.x's c10d_logger) and library frames; where the innermost frame is the
/// user's, or the stack has no user frame, its k_report_depth innermost frames.
std::string render_rank_line(const RankStack& stack);

/// Ranks sharing the same report line (render_rank_line), in order_stack_groups' order.
std::vector<StackGroup> group_stacks(const std::vector<RankStack>& stacks);
/// One line per group: "rank 1: f (x.py:12) <- g (x.py:40)", "ranks 0,2-7: ...".
std::vector<std::string> render_stack_report(const std::vector<StackGroup>& groups);

/// One node's answer to a job-wide stack request, as stored under the run's keys (its text:
/// node_stacks.hpp).
struct NodeStacks {
  std::string node;                ///< host name (or node id) of the agent that captured
  std::string method;              ///< "faulthandler", "py-spy", "/proc"...
  std::vector<StackGroup> groups;  ///< global ranks
  std::vector<std::string> files;  ///< where that node wrote the full stacks (its own disk)
  friend bool operator==(const NodeStacks&, const NodeStacks&) = default;
};

/// Every node's groups merged: the same frames on different nodes become one group (a rank
/// named twice counts once, groups without ranks are dropped); in order_stack_groups' order.
std::vector<StackGroup> merge_stack_groups(const std::vector<NodeStacks>& nodes);

}  // namespace ddprun::errors
