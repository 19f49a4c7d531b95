// Golden tests of the ChildFailedError box against the boxes captured from torchrun
// (spec torchrun.md §6.3), in recent main's exitcode style.

#include "ddprun/errors/failure.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace ddprun::errors {
namespace {

constexpr std::int64_t k_t0 = 1795946178;
// Summary lines longer than a source line, named so that the expected tables below stay lists
// of one literal per line.
constexpr char k_traceback_line[] =
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html";
constexpr char k_oom_hint_line[] =
    "  hint      : SIGKILL while the kernel's OOM-kill counter rose; the worker likely ran out of "
    "memory";

std::string fake_time(std::int64_t epoch) {
  static const std::map<std::int64_t, std::string> k_times = {{k_t0, "2026-11-29_09:56:18"},
                                                              {k_t0 + 1, "2026-11-29_09:56:19"},
                                                              {k_t0 + 41, "2026-11-29_09:56:59"}};
  auto it = k_times.find(epoch);
  return it == k_times.end() ? "?" : it->second;
}

std::string lines(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    out += "\n" + p;
  }
  return out;
}

FailureInput input(int rank, int pid, int exit_code, std::int64_t now) {
  FailureInput in;
  in.local_rank = rank;
  in.rank = rank;
  in.pid = pid;
  in.exit_code = exit_code;
  in.now = now;
  return in;
}

FailureInput with_record(FailureInput in, const std::string& path, const std::string& json) {
  in.error_file = path;
  in.record = parse_error_file(json);
  return in;
}

std::string record_json(const std::string& msg, std::int64_t ts) {
  return R"({"message": {"message": ")" + msg +
         R"(", "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"w.py\", line 9, in main\n)" +
         msg + R"(\n", "timestamp": ")" + std::to_string(ts) + R"("}}})";
}

TEST(RenderSummary, MatchesCapturedExitCodeBox) {
  std::vector<ProcessFailure> failures = {make_failure(input(1, 9074, 3, k_t0))};
  EXPECT_EQ(
      render_summary("./fail.sh", "localhost", failures, fake_time),
      lines({"============================================================", "./fail.sh FAILED",
             "------------------------------------------------------------",
             "Failures:", "  <NO_OTHER_FAILURES>",
             "------------------------------------------------------------",
             "Root Cause (first observed failure):", "[0]:", "  time      : 2026-11-29_09:56:18",
             "  host      : localhost", "  rank      : 1 (local_rank: 1)",
             "  exitcode  : 3 (pid: 9074) ", "  error_file: <N/A>", k_traceback_line,
             "============================================================"}));
}

TEST(RenderSummary, MatchesCapturedSignalBoxWidth) {
  std::vector<ProcessFailure> failures = {make_failure(input(1, 10592, -11, k_t0 + 41))};
  EXPECT_EQ(
      render_summary("./sig.sh", "localhost", failures, fake_time),
      lines({"=======================================================", "./sig.sh FAILED",
             "-------------------------------------------------------", "Failures:",
             "  <NO_OTHER_FAILURES>", "-------------------------------------------------------",
             "Root Cause (first observed failure):", "[0]:", "  time      : 2026-11-29_09:56:59",
             "  host      : localhost", "  rank      : 1 (local_rank: 1)",
             "  exitcode  : -11 (pid: 10592)  (SIGSEGV)", "  error_file: <N/A>",
             "  traceback : Signal 11 (SIGSEGV) received by PID 10592",
             "======================================================="}));
}

TEST(RenderSummary, ListsOtherFailuresAndPicksEarliestAsRoot) {
  std::vector<ProcessFailure> failures = {
      make_failure(with_record(input(1, 101, 1, k_t0 + 1), "/l/1/error.json",
                               record_json("ValueError: boom from rank 1", k_t0))),
      make_failure(with_record(input(2, 102, 1, k_t0 + 1), "/l/2/error.json",
                               record_json("ValueError: boom from rank 2", k_t0))),
      make_failure(input(3, 103, 4, k_t0 + 1)),
  };
  EXPECT_EQ(root_cause_index(failures), 0U);
  EXPECT_EQ(render_summary("w.py", "h1", failures, fake_time),
            lines({"============================================================",
                   "w.py FAILED",
                   "------------------------------------------------------------",
                   "Failures:",
                   "[1]:",
                   "  time      : 2026-11-29_09:56:18",
                   "  host      : h1",
                   "  rank      : 2 (local_rank: 2)",
                   "  exitcode  : 1 (pid: 102) ",
                   "  error_file: /l/2/error.json",
                   "  traceback : Traceback (most recent call last):",
                   "    File \"w.py\", line 9, in main",
                   "  ValueError: boom from rank 2",
                   "  ",
                   "[2]:",
                   "  time      : 2026-11-29_09:56:19",
                   "  host      : h1",
                   "  rank      : 3 (local_rank: 3)",
                   "  exitcode  : 4 (pid: 103) ",
                   "  error_file: <N/A>",
                   k_traceback_line,
                   "------------------------------------------------------------",
                   "Root Cause (first observed failure):",
                   "[0]:",
                   "  time      : 2026-11-29_09:56:18",
                   "  host      : h1",
                   "  rank      : 1 (local_rank: 1)",
                   "  exitcode  : 1 (pid: 101) ",
                   "  error_file: /l/1/error.json",
                   "  traceback : Traceback (most recent call last):",
                   "    File \"w.py\", line 9, in main",
                   "  ValueError: boom from rank 1",
                   "  ",
                   "============================================================"}));
}

TEST(RenderSummary, AddsHintAndStderrBelowTorchrunLinesWithoutWidening) {
  auto in = input(0, 77, -9, k_t0);
  in.oom_hint = true;
  in.stderr_tail = {"allocating 64 GiB", "still allocating"};
  std::vector<ProcessFailure> failures = {make_failure(in)};
  EXPECT_EQ(
      render_summary("t", "h", failures, fake_time),
      lines({"===================================================", "t FAILED",
             "---------------------------------------------------", "Failures:",
             "  <NO_OTHER_FAILURES>", "---------------------------------------------------",
             "Root Cause (first observed failure):", "[0]:", "  time      : 2026-11-29_09:56:18",
             "  host      : h", "  rank      : 0 (local_rank: 0)",
             "  exitcode  : -9 (pid: 77)  (SIGKILL)", "  error_file: <N/A>",
             "  traceback : Signal 9 (SIGKILL) received by PID 77", k_oom_hint_line,
             "  stderr    : allocating 64 GiB", "              still allocating",
             "==================================================="}));
}

TEST(RenderSummary, WatchdogReasonEndsTheGeneratedTraceback) {
  auto in = input(0, 77, -9, k_t0);
  in.reason = "watchdog timer \"step\" expired";
  auto f = make_failure(in);
  EXPECT_EQ(f.message, "Signal 9 (SIGKILL) received by PID 77: watchdog timer \"step\" expired");
  auto text = render_summary("t", "h", {f}, fake_time);
  EXPECT_NE(text.find("  traceback : Signal 9 (SIGKILL) received by PID 77: watchdog timer "
                      "\"step\" expired\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("  reason    :"), std::string::npos) << text;  // said once
}

TEST(RenderSummary, WatchdogReasonGetsItsOwnLineAfterAWorkerRecord) {
  auto in = with_record(input(0, 77, -15, k_t0), "/l/0/error.json", R"({"message": "stopped"})");
  in.reason = "watchdog timer \"step\" expired";
  auto text = render_summary("t", "h", {make_failure(in)}, fake_time);
  EXPECT_NE(text.find("  traceback : stopped\n  reason    : watchdog timer \"step\" expired\n"),
            std::string::npos)
      << text;
}

TEST(RenderSummary, NotesAGarbageErrorFileAndKeepsItsPath) {
  auto in = with_record(input(1, 5, 2, k_t0), "/l/1/error.json", "{\"message\": {\"mes");
  auto f = make_failure(in);
  EXPECT_EQ(f.error_file, "/l/1/error.json");
  EXPECT_EQ(f.message, k_no_traceback_message);
  EXPECT_EQ(f.timestamp, k_t0);
  auto text = render_summary("t", "h", {f}, fake_time);
  EXPECT_NE(text.find("  error_file: /l/1/error.json\n  traceback : To enable traceback see: "
                      "https://pytorch.org/docs/stable/elastic/errors.html\n"
                      "  note      : error file is not valid JSON"),
            std::string::npos)
      << text;
}

TEST(RenderSummary, CapsWidthAtSixtyEvenForLongTitles) {
  std::string name(70, 'x');
  auto text = render_summary(name, "h", {make_failure(input(0, 1, -11, k_t0))}, fake_time);
  EXPECT_EQ(text.substr(0, 62), "\n" + std::string(60, '=') + "\n");
  EXPECT_NE(text.find(name + " FAILED\n"), std::string::npos);
}

TEST(RenderSummary, CountsCodePointsNotBytesForWidth) {
  std::string accents;
  for (int i = 0; i < 40; ++i) {
    accents += "\u00e9";
  }
  auto in = with_record(input(0, 1, 1, k_t0), "/e",
                        R"({"message": ")" + accents + R"(", "timestamp": 1})");
  auto f = make_failure(in);
  // "  traceback : " + 40 code points (80 bytes) is the widest line: 54.
  auto text = render_summary("n", "h", {f}, fake_time);
  EXPECT_EQ(text.substr(0, 56), "\n" + std::string(54, '=') + "\n") << text;
}

TEST(MakeFailure, UsesRecordTimestampAndDropsStderrTail) {
  auto in = with_record(input(0, 1, 1, k_t0 + 5), "/e", record_json("E: x", k_t0));
  in.stderr_tail = {"noise"};
  auto f = make_failure(in);
  EXPECT_EQ(f.timestamp, k_t0);
  EXPECT_TRUE(f.stderr_tail.empty());
  EXPECT_FALSE(f.record_json.empty());
}

TEST(MakeFailure, StringMessageIsNotIndented) {
  auto f = make_failure(with_record(input(0, 1, 1, 0), "/e", R"({"message": "a\nb"})"));
  EXPECT_EQ(f.message, "a\nb");
  EXPECT_EQ(f.timestamp, 0);
}

TEST(MakeFailure, UnknownSignalIsNotAvailable) {
  auto f = make_failure(input(0, 12, -40, 0));
  EXPECT_EQ(f.message, "Signal 40 (<N/A>) received by PID 12");
  auto text = render_summary("n", "h", {f}, fake_time);
  EXPECT_NE(text.find("  exitcode  : -40 (pid: 12) \n"), std::string::npos);
}

TEST(RootCauseIndex, BreaksTiesByInsertionOrder) {
  std::vector<ProcessFailure> failures(3);
  failures[0].timestamp = 9;
  failures[1].timestamp = 5;
  failures[2].timestamp = 5;
  EXPECT_EQ(root_cause_index(failures), 1U);
}

TEST(FormatLocalTime, UsesIsoFormatWithUnderscore) {
  auto text = format_local_time(k_t0);
  ASSERT_EQ(text.size(), 19U);
  EXPECT_EQ(text[10], '_');
  EXPECT_EQ(text[4], '-');
  EXPECT_EQ(text[13], ':');
}

}  // namespace
}  // namespace ddprun::errors
