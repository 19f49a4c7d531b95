#include "ddprun/process/exit_info.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <csignal>
#include <string>

using namespace ddprun::process;

TEST(DecodeWaitStatus, ExitCodes) {
  auto ok = decode_wait_status(W_EXITCODE(0, 0));
  EXPECT_TRUE(ok.success());
  auto three = decode_wait_status(W_EXITCODE(3, 0));
  EXPECT_FALSE(three.success());
  EXPECT_EQ(three.code(), 3);
  EXPECT_FALSE(three.signaled);
}

TEST(DecodeWaitStatus, SignalsAreNegativeLikeTorchrun) {
  auto segv = decode_wait_status(W_EXITCODE(0, SIGSEGV));
  EXPECT_TRUE(segv.signaled);
  EXPECT_EQ(segv.signal, SIGSEGV);
  EXPECT_EQ(segv.code(), -11);
  auto core = decode_wait_status(W_EXITCODE(0, SIGABRT) | 0x80);
  EXPECT_TRUE(core.core_dumped);
  EXPECT_EQ(core.code(), -6);
}

TEST(SignalName, NamesKnownAndUnknown) {
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(signal_name(77), "signal 77");
}

TEST(ParseSignal, AcceptsNamesShortNamesAndNumbers) {
  EXPECT_EQ(*parse_signal("SIGTERM"), SIGTERM);
  EXPECT_EQ(*parse_signal("usr1"), SIGUSR1);
  EXPECT_EQ(*parse_signal(" 2 "), SIGINT);
  auto bad = parse_signal("SIGFOO");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'SIGFOO'"), std::string::npos);
  EXPECT_FALSE(parse_signal("0"));
  EXPECT_FALSE(parse_signal("999"));
}

TEST(ParseSignalList, DefaultListAndRejections) {
  auto list = parse_signal_list("SIGTERM,SIGINT,SIGHUP,SIGQUIT");
  EXPECT_EQ(list.signals, (std::vector<int>{SIGTERM, SIGINT, SIGHUP, SIGQUIT}));
  EXPECT_TRUE(list.ignored.empty());
  // torchrun logs and ignores what it cannot use; so does ddprun (the caller warns).
  auto mixed = parse_signal_list("SIGTERM, SIGKILL,SIGFOO,SIGUSR1,SIGCHLD");
  EXPECT_EQ(mixed.signals, (std::vector<int>{SIGTERM, SIGUSR1}));
  ASSERT_EQ(mixed.ignored.size(), 3u);
  EXPECT_EQ(mixed.ignored[0].text, "SIGKILL");
  EXPECT_NE(mixed.ignored[0].reason.find("cannot be handled"), std::string::npos);
  EXPECT_EQ(mixed.ignored[1].text, "SIGFOO");
  EXPECT_NE(mixed.ignored[1].reason.find("unknown signal"), std::string::npos);
  EXPECT_EQ(mixed.ignored[2].text, "SIGCHLD");
  EXPECT_TRUE(parse_signal_list("").signals.empty());
}

TEST(StopPlan, ContTermGraceThenKill) {
  auto plan = make_stop_plan(SIGINT, std::chrono::seconds(30));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].signal, SIGCONT);
  EXPECT_EQ(plan[0].wait.count(), 0);
  EXPECT_EQ(plan[1].signal, SIGINT);
  EXPECT_EQ(plan[1].wait, std::chrono::seconds(30));
  EXPECT_EQ(plan[2].signal, SIGKILL);
  EXPECT_EQ(plan[2].wait, k_kill_wait);
}

TEST(SignalEndsProcess, ReadsTheCaughtAndIgnoredMasks) {
  // SIGUSR1 (10) caught, SIGINT (2) caught, SIGPIPE (13) ignored: a Python worker's masks.
  const std::string status =
      "Name:\tpython3\nSigQ:\t0/63443\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
      "SigBlk:\t0000000000000000\nSigIgn:\t0000000000001000\nSigCgt:\t0000000000000202\n";
  EXPECT_FALSE(signal_ends_process(status, SIGUSR1));
  EXPECT_FALSE(signal_ends_process(status, SIGINT));
  EXPECT_FALSE(signal_ends_process(status, SIGPIPE));
  EXPECT_TRUE(signal_ends_process(status, SIGTERM));
  EXPECT_TRUE(signal_ends_process(status, SIGKILL));
}

TEST(SignalEndsProcess, SignalsThatDoNotTerminateByDefault) {
  EXPECT_FALSE(signal_ends_process("", SIGCHLD));
  EXPECT_FALSE(signal_ends_process("", SIGCONT));
  EXPECT_FALSE(signal_ends_process("", SIGWINCH));
  EXPECT_FALSE(signal_ends_process("", SIGTSTP));
  EXPECT_TRUE(signal_ends_process("", SIGUSR2));  // unreadable masks: not caught
  EXPECT_TRUE(signal_ends_process("SigCgt:\tzz\n", SIGTERM));
  EXPECT_TRUE(signal_ends_process("", SIGKILL));
}

TEST(ProcessState, TheStateLetterFollowsTheCommandsLastParenthesis) {
  EXPECT_EQ(parse_stat_state("4242 (python3) D 1 4242 4242 0 -1"), 'D');
  EXPECT_EQ(parse_stat_state("7 (a) b (c)) R 1 7"), 'R') << "a command holding ') '";
  EXPECT_EQ(parse_stat_state(""), '?');
  EXPECT_EQ(parse_stat_state("7 (cut"), '?');
  EXPECT_EQ(describe_state('D'), "D (uninterruptible sleep)");
  EXPECT_EQ(describe_state('Z'), "Z (zombie)");
  EXPECT_EQ(describe_state('?'), "? (unknown)");
}
