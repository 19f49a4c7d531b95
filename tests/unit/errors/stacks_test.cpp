// Golden text from faulthandler (Python 3.11), py-spy 0.3, gdb 13 and eu-stack 0.188.

#include "ddprun/errors/stacks.hpp"

#include <gtest/gtest.h>

namespace ddprun::errors {
namespace {

constexpr std::string_view k_faulthandler = R"x(Fatal Python error: Aborted

Thread 0x00007fb7224e16c0 (most recent call first):
  File "/tmp/fh.py", line 3 in helper
  File "/usr/lib/python3.11/threading.py", line 975 in run
  File "/usr/lib/python3.11/threading.py", line 1038 in _bootstrap_inner

Current thread 0x00007fb72279c040 (most recent call first):
  File "/tmp/train.py", line 12 in wait_for_data
  File "/tmp/train.py", line 40 in next_batch
  File "/tmp/train.py", line 55 in <module>
)x";

constexpr std::string_view k_py_spy = R"x(Process 4242: /usr/bin/python3 train.py
Python v3.11.2 (/usr/bin/python3.11)

Thread 4250 (idle): "Thread-1 (helper)"
    helper (fh.py:3)
    run (threading.py:975)
Thread 4242 (active): "MainThread"
    all_reduce (torch/distributed/distributed_c10d.py:1536)
        Arguments:
            tensor: <Tensor at 0x7f>
    train_step (train.py:55)
    epoll_wait (libc.so.6)
)x";

constexpr std::string_view k_gdb = R"x([New LWP 6200]
Thread 2 (Thread 0x7fd7 (LWP 6200) "python3"):
#0  0x00007fd7 in __futex_abstimed_wait_common (futex_word=0x5, expected=0) at ./nptl/futex-internal.c:57

Thread 1 (Thread 0x7fd72083e740 (LWP 6199) "sleep"):
#0  __GI___clock_nanosleep (clock_id=clock_id@entry=0, req=0x7ffc) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:71
#1  0x00007ff25b5d5e53 in __GI___nanosleep (req=<optimized out>) at ../sysdeps/unix/sysv/linux/nanosleep.c:25
#2  0x00005630ffdbe4af in ?? ()
#3  0x00007ff25b52 in epoll_wait () from /lib/x86_64-linux-gnu/libc.so.6
)x";

constexpr std::string_view k_eu_stack = R"x(PID 6199 - process
TID 6199:
#0  0x00007f2b1e0e5b21 __GI___clock_nanosleep
#1  0x00007f2b1e0ea4a3 - 1 __nanosleep
#2  0x000055e9e3f0a1b2 - 1
TID 6200:
#0  0x00007f2b1e0e5b21 __futex_abstimed_wait_common
)x";

TEST(Stacks, ParsesFaulthandlerThreadsWithTheMainThreadLast) {
  auto threads = parse_faulthandler(k_faulthandler);
  ASSERT_EQ(threads.size(), 2U);
  EXPECT_EQ(threads[0].name, "Thread 0x00007fb7224e16c0");
  EXPECT_FALSE(threads[0].main);
  EXPECT_TRUE(threads[1].main);
  ASSERT_EQ(threads[1].frames.size(), 3U);
  EXPECT_EQ(threads[1].frames[0], (Frame{"wait_for_data", "/tmp/train.py", 12}));
  EXPECT_EQ(threads[1].frames[2], (Frame{"<module>", "/tmp/train.py", 55}));
  EXPECT_EQ(render_innermost(RankStack{1, threads, ""}, 2),
            "wait_for_data (train.py:12) <- next_batch (train.py:40)");
}

TEST(Stacks, ParsesPySpyFramesAndSkipsArguments) {
  auto threads = parse_py_spy(k_py_spy);
  ASSERT_EQ(threads.size(), 2U);
  EXPECT_FALSE(threads[0].main);
  EXPECT_TRUE(threads[1].main);
  ASSERT_EQ(threads[1].frames.size(), 3U);
  EXPECT_EQ(threads[1].frames[1], (Frame{"train_step", "train.py", 55}));
  EXPECT_EQ(threads[1].frames[2], (Frame{"epoll_wait", "libc.so.6", 0}));
  EXPECT_EQ(render_innermost(RankStack{0, threads, ""}, 3),
            "all_reduce (distributed_c10d.py:1536) <- train_step (train.py:55) <- epoll_wait "
            "(libc.so.6)");
}

TEST(Stacks, ParsesGdbBacktracesWithThreadOneAsMain) {
  auto threads = parse_native(k_gdb);
  ASSERT_EQ(threads.size(), 2U);
  EXPECT_FALSE(threads[0].main);
  EXPECT_TRUE(threads[1].main);
  ASSERT_EQ(threads[1].frames.size(), 4U);
  EXPECT_EQ(threads[1].frames[0].function, "__GI___clock_nanosleep");
  EXPECT_EQ(threads[1].frames[0].line, 71);
  EXPECT_EQ(threads[1].frames[2], (Frame{"??", "", 0}));
  EXPECT_EQ(threads[1].frames[3], (Frame{"epoll_wait", "", 0}));
  EXPECT_EQ(render_innermost(RankStack{0, threads, ""}, 2),
            "__GI___clock_nanosleep (clock_nanosleep.c:71) <- __GI___nanosleep (nanosleep.c:25)");
}

TEST(Stacks, ParsesEuStackWithTheFirstTidAsMain) {
  auto threads = parse_native(k_eu_stack);
  ASSERT_EQ(threads.size(), 2U);
  EXPECT_TRUE(threads[0].main);
  EXPECT_EQ(threads[0].name, "TID 6199");
  ASSERT_EQ(threads[0].frames.size(), 3U);
  EXPECT_EQ(threads[0].frames[1], (Frame{"__nanosleep", "", 0}));
  EXPECT_EQ(threads[0].frames[2], (Frame{"??", "", 0}));
}

TEST(Stacks, GarbageGivesNoThreads) {
  EXPECT_TRUE(parse_faulthandler("hello\nFile x\n").empty());
  EXPECT_TRUE(parse_py_spy("    f (x.py:1)\n").empty());
  EXPECT_TRUE(parse_native("").empty());
  EXPECT_EQ(render_innermost(RankStack{3, {}, ""}, 2), "no stack");
}

TEST(Stacks, RendersTheProcStateWhenThereIsNoFrame) {
  EXPECT_EQ(render_proc_state("77 (sh (x)) S 1 77 77 0", "do_wait\n"),
            "state S (sleeping), wchan do_wait");
  EXPECT_EQ(render_proc_state("77 (a) D 1", "0"), "state D (uninterruptible (disk) sleep)");
  EXPECT_EQ(render_proc_state("", ""), "no stack");
}

TEST(Stacks, RendersRankListsAsRanges) {
  EXPECT_EQ(render_rank_list({7, 0, 2, 3, 4, 5, 6}), "0,2-7");
  EXPECT_EQ(render_rank_list({1}), "1");
  EXPECT_EQ(render_rank_list({3, 1, 1, 5}), "1,3,5");
  EXPECT_EQ(render_rank_list({}), "");
}

RankStack one_frame(int rank, const std::string& fn, int line) {
  return RankStack{rank, {ThreadStack{"t", {Frame{fn, "train.py", line}}, true}}, ""};
}

TEST(Stacks, GroupsRanksOddOnesFirst) {
  std::vector<RankStack> stacks;
  for (int r : {0, 2, 3, 4, 5, 6, 7}) {
    stacks.push_back(one_frame(r, "all_reduce", 55));
  }
  stacks.push_back(one_frame(1, "wait_for_data", 12));
  stacks.push_back(RankStack{9, {}, "state S (sleeping), wchan do_wait"});
  auto lines = render_stack_report(group_stacks(stacks));
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "rank 1: wait_for_data (train.py:12)",
                       "rank 9: state S (sleeping), wchan do_wait",
                       "ranks 0,2-7: all_reduce (train.py:55)",
                   }));
}

constexpr const char* k_c10d =
    "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py";

// torch 2.6 wraps every collective in c10d_logger.py's `wrapper`: the line skips it (and the
// standard library) and names the training script's frame.
TEST(Stacks, ALineNamesTheInnermostFrameAndTheUsersOwn) {
  const ThreadStack torch26{
      "t",
      {Frame{"all_reduce", k_c10d, 2811},
       Frame{"wrapper",
             "/usr/lib/python3/dist-packages/torch/distributed/"
             "c10d_logger.py",
             81},
       Frame{"_run", "/usr/lib/python3.13/contextlib.py", 81},
       Frame{"train_step", "/home/u/train.py", 55}, Frame{"<module>", "/home/u/train.py", 90}},
      true};
  EXPECT_EQ(render_rank_line(RankStack{0, {torch26}, ""}),
            "all_reduce (distributed_c10d.py:2811) <- train_step (train.py:55)");
  const ThreadStack torch113{
      "t", {Frame{"all_reduce", k_c10d, 1536}, Frame{"train_step", "/home/u/train.py", 55}}, true};
  EXPECT_EQ(render_rank_line(RankStack{1, {torch113}, ""}),
            "all_reduce (distributed_c10d.py:1536) <- train_step (train.py:55)");
}

TEST(Stacks, AUserInnermostFrameOrNoUserFrameKeepsTheTwoInnermost) {
  const ThreadStack user{
      "t", {Frame{"wait_for_data", "train.py", 12}, Frame{"next_batch", "train.py", 40}}, true};
  EXPECT_EQ(render_rank_line(RankStack{0, {user}, ""}),
            "wait_for_data (train.py:12) <- next_batch (train.py:40)");
  const ThreadStack native{"t", {Frame{"epoll_wait", "", 0}, Frame{"??", "", 0}}, true};
  EXPECT_EQ(render_rank_line(RankStack{0, {native}, ""}), "epoll_wait <- ??");
}

TEST(Stacks, LibraryFramesAreSitePackagesDistPackagesTheStdlibAndFrozen) {
  for (const char* file :
       {"/venv/lib/python3.12/site-packages/torch/x.py", k_c10d, "/usr/lib/python3.11/threading.py",
        "<frozen importlib._bootstrap>", ""}) {
    EXPECT_TRUE(is_library_frame(Frame{"f", file, 1})) << file;
  }
  for (const char* file : {"train.py", "/home/u/proj/lib/model.py", "/opt/python3/train.py"}) {
    EXPECT_FALSE(is_library_frame(Frame{"f", file, 1})) << file;
  }
}

}  // namespace
}  // namespace ddprun::errors
