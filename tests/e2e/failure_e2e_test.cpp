// End-to-end tests of failure reporting (spec torchrun.md §6) and the --events-file stream:
// the summary box for @record errors, signals and plain exits, the launcher's own error file,
// and the JSON events of a run with one restart.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr auto k_python_timeout = std::chrono::seconds(120);
constexpr const char* k_no_torch = "/usr/bin/python3 cannot import torch (install python3-torch)";

std::string worker(const std::string& name) { return source_path("tests/support/workers/" + name); }

RunResult run_ddprun(const std::vector<std::string>& args,
                     std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv{ddprun_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, RunOptions{std::move(env), {}, "", k_python_timeout});
}

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

/// The text of the summary box: from the "<name> FAILED" title to the closing border.
std::string summary_of(const std::string& err) {
  auto title = err.find(" FAILED\n");
  return title == std::string::npos ? "" : err.substr(err.rfind('\n', title) + 1);
}

}  // namespace

TEST(FailureE2E, RecordedExceptionShowsTracebackAndCopiesRootCause) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  auto dir = make_temp_dir("ddprun-fail-");
  auto parent_error_file = dir + "/parent_error.json";
  auto r = run_ddprun(
      {"--nproc_per_node", "2", "--python", "/usr/bin/python3",
       source_path("examples/faults/record_error.py"), "--rank", "1", "--message", "bad batch"},
      {{"TORCHELASTIC_ERROR_FILE", parent_error_file}});
  EXPECT_EQ(r.status, 1) << r.err;
  auto box = summary_of(r.err);
  ASSERT_FALSE(box.empty()) << r.err;
  EXPECT_TRUE(has(box, "examples/faults/record_error.py FAILED")) << box;
  EXPECT_TRUE(has(box, "Root Cause (first observed failure):\n[0]:")) << box;
  EXPECT_TRUE(has(box, "  rank      : 1 (local_rank: 1)\n")) << box;
  EXPECT_TRUE(std::regex_search(box, std::regex("  exitcode  : 1 \\(pid: [0-9]+\\) \n"))) << box;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(box, m, std::regex("  error_file: (/\\S+/attempt_0/1/error\\.json)\n")))
      << box;
  EXPECT_TRUE(fs::exists(m[1].str())) << m[1].str();
  EXPECT_TRUE(has(box, "  traceback : Traceback (most recent call last):\n")) << box;
  EXPECT_TRUE(has(box, "  ValueError: bad batch (rank 1)\n")) << box;
  EXPECT_TRUE(has(box, "Failures:\n  <NO_OTHER_FAILURES>\n")) << box;

  auto parent = nlohmann::json::parse(read_file(parent_error_file), nullptr, false);
  ASSERT_FALSE(parent.is_discarded()) << read_file(parent_error_file);
  EXPECT_EQ(parent["message"]["errorCode"], 1) << parent.dump();
  EXPECT_EQ(parent["message"]["message"], "ValueError: bad batch (rank 1)") << parent.dump();
  EXPECT_TRUE(has(parent["message"]["extraInfo"]["py_callstack"].get<std::string>(), "Traceback"));
}

TEST(FailureE2E, SegfaultShowsSignalNameAndPid) {
  auto r = run_ddprun({"--nproc_per_node", "2", "--python", "/usr/bin/python3",
                       source_path("examples/faults/segfault.py"), "--rank", "1"});
  EXPECT_EQ(r.status, 1) << r.err;
  auto box = summary_of(r.err);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      box, m, std::regex("  exitcode  : -11 \\(pid: ([0-9]+)\\)  \\(SIGSEGV\\)\n")))
      << box;
  EXPECT_TRUE(has(box, "  error_file: <N/A>\n")) << box;
  EXPECT_TRUE(has(box, "  traceback : Signal 11 (SIGSEGV) received by PID " + m[1].str() + "\n"))
      << box;
  EXPECT_TRUE(has(box, "  rank      : 1 (local_rank: 1)\n")) << box;
}

TEST(FailureE2E, SummaryShowsLastStderrLinesWhenStderrIsCaptured) {
  auto markers = make_temp_dir("ddprun-markers-");
  for (const char* flag : {"-r", "-t"}) {
    auto r = run_ddprun({"--nproc_per_node", "2", flag, "2", "--python", "/usr/bin/python3",
                         worker("chatter.py"), "attempt", markers, "1", "5"});
    EXPECT_EQ(r.status, 1) << r.err;
    auto box = summary_of(r.err);
    EXPECT_TRUE(has(box, "  exitcode  : 5 (pid: ")) << box;
    EXPECT_TRUE(has(box, "  error_file: <N/A>\n")) << box;
    EXPECT_TRUE(has(box, "err attempt=0 rank=1")) << flag << "\n" << box;
    EXPECT_FALSE(has(box, "err attempt=0 rank=0")) << flag << "\n" << box;
    fs::remove(markers + "/done_0_0");
  }
  // Workers that write to ddprun's stderr themselves leave the agent nothing to show.
  auto plain = run_ddprun({"--nproc_per_node", "2", "--line-output", "off", "--python",
                           "/usr/bin/python3", worker("chatter.py"), "attempt", markers, "1", "5"});
  EXPECT_EQ(plain.status, 1) << plain.err;
  EXPECT_FALSE(has(summary_of(plain.err), "err attempt=0")) << "stderr was not captured:\n"
                                                            << plain.err;
  fs::remove(markers + "/done_0_0");
  // Into a pipe (not a terminal) the lines pass the agent by default, which keeps the tail.
  auto piped = run_ddprun({"--nproc_per_node", "2", "--python", "/usr/bin/python3",
                           worker("chatter.py"), "attempt", markers, "1", "5"});
  EXPECT_EQ(piped.status, 1) << piped.err;
  EXPECT_TRUE(has(summary_of(piped.err), "err attempt=0 rank=1")) << piped.err;
}

// torchrun writes nothing here (spec §6.4); ddprun writes a record of its own (an addition).
TEST(FailureE2E, PlainExitWritesOwnRecordToParentErrorFile) {
  auto dir = make_temp_dir("ddprun-fail-");
  auto parent_error_file = dir + "/parent_error.json";
  auto r =
      run_ddprun({"--nproc_per_node", "2", "--no_python", worker("attempts.sh"), dir, "1", "7"},
                 {{"TORCHELASTIC_ERROR_FILE", parent_error_file}});
  EXPECT_EQ(r.status, 1) << r.err;
  const std::string hint =
      "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html";
  EXPECT_TRUE(has(summary_of(r.err), "  traceback : " + hint)) << r.err;
  auto parent = nlohmann::json::parse(read_file(parent_error_file), nullptr, false);
  ASSERT_FALSE(parent.is_discarded()) << read_file(parent_error_file);
  EXPECT_EQ(parent["message"]["errorCode"], 7) << parent.dump();
  EXPECT_EQ(parent["message"]["message"], hint) << parent.dump();
}

TEST(FailureE2E, EventsFileRecordsOneRestartAsJsonLines) {
  auto dir = make_temp_dir("ddprun-events-");
  auto events = dir + "/events.jsonl";
  auto r = run_ddprun({"--nproc_per_node", "2", "--max_restarts", "1", "--events-file", events,
                       "--no_python", worker("attempts.sh"), dir, "1", "3"});
  EXPECT_EQ(r.status, 1) << r.err;
  std::istringstream in(read_file(events));
  std::string line;
  std::vector<std::string> names;
  std::vector<nlohmann::json> started;
  std::set<int> started_pids;
  while (std::getline(in, line)) {
    auto event = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(event.is_object()) << line;
    ASSERT_TRUE(event.contains("ts") && event["ts"].is_number()) << line;
    ASSERT_TRUE(event.contains("event") && event["event"].is_string()) << line;
    names.push_back(event["event"]);
    if (names.back() == "workers_started") {
      started.push_back(event);
      for (const auto& pid : event["pids"]) {
        started_pids.insert(pid.get<int>());
      }
    }
    if (names.back() == "worker_exit") {
      EXPECT_EQ(started_pids.count(event["pid"].get<int>()), 1u)
          << "exit of an unknown pid: " << line;
    }
  }
  auto first = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  auto size = static_cast<long>(names.size());
  ASSERT_LT(first("workers_started"), size) << read_file(events);
  EXPECT_LT(first("workers_started"), first("worker_exit"));
  EXPECT_LT(first("worker_exit"), first("restart"));
  EXPECT_LT(first("restart"), size);
  EXPECT_EQ(names.back(), "result") << read_file(events);
  ASSERT_EQ(started.size(), 2u) << read_file(events);
  for (const auto& event : started) {
    ASSERT_TRUE(event["pids"].is_array()) << event.dump();
    EXPECT_EQ(event["pids"].size(), 2u) << event.dump();
  }
}

// The file-timer watchdog (spec §8.3) with torch's own FileTimerClient in the worker.
namespace {

std::map<std::string, std::string> watchdog_env(const std::string& timer_file) {
  std::map<std::string, std::string> env{{"TORCHELASTIC_ENABLE_FILE_TIMER", "1"}};
  if (!timer_file.empty()) {
    env["TORCHELASTIC_TIMER_FILE"] = timer_file;
  }
  return env;
}

}  // namespace

TEST(FailureE2E, WatchdogKillsAnOverrunningWorkerAndTheGroupRestarts) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  auto dir = make_temp_dir("ddprun-timer-");
  auto events = dir + "/events.jsonl";
  auto r = run_ddprun({"--nproc_per_node", "1", "--max_restarts", "1", "--events-file", events,
                       "--python", "/usr/bin/python3", worker("file_timer.py"), dir, "hang"},
                      watchdog_env(dir + "/timer"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/rank_0.log"), "attempt=0 rank=0\nattempt=1 rank=0\n");
  EXPECT_TRUE(has(r.err, "watchdog timer \"step\" expired for local_rank 0")) << r.err;
  auto log = read_file(events);
  EXPECT_TRUE(has(log, R"("event":"watchdog_expired")")) << log;
  EXPECT_TRUE(has(log, R"("scope_id":"step","signal":"SIGKILL")")) << log;
  EXPECT_TRUE(has(log, R"("exit_code":-9)")) << log;
  EXPECT_FALSE(fs::exists(dir + "/timer")) << "the FIFO outlived the run";
}

TEST(FailureE2E, WatchdogFailureIsNamedInTheSummaryAndParentErrorFile) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  auto dir = make_temp_dir("ddprun-timer-");
  auto env = watchdog_env(dir + "/timer");
  env["TORCHELASTIC_ERROR_FILE"] = dir + "/parent_error.json";
  auto r = run_ddprun({"--nproc_per_node", "1", "--python", "/usr/bin/python3",
                       worker("file_timer.py"), dir, "hang"},
                      env);
  EXPECT_EQ(r.status, 1) << r.err;
  auto box = summary_of(r.err);
  EXPECT_TRUE(has(box, "  exitcode  : -9 (pid: ")) << box;
  EXPECT_TRUE(std::regex_search(
      box, std::regex("  traceback : Signal 9 \\(SIGKILL\\) received by PID [0-9]+: "
                      "watchdog timer \"step\" expired\n")))
      << box;
  auto parent = nlohmann::json::parse(read_file(dir + "/parent_error.json"), nullptr, false);
  ASSERT_FALSE(parent.is_discarded()) << read_file(dir + "/parent_error.json");
  EXPECT_TRUE(has(parent["message"]["message"].get<std::string>(), "watchdog timer \"step\""))
      << parent.dump();
}

TEST(FailureE2E, ReleasedFileTimerNeverFires) {
  if (!have_torch()) {
    GTEST_SKIP() << k_no_torch;
  }
  auto dir = make_temp_dir("ddprun-timer-");
  auto tmp = make_temp_dir("ddprun-timer-tmp-");
  auto env = watchdog_env("");  // a fresh FIFO under TMPDIR
  env["TMPDIR"] = tmp;
  auto r = run_ddprun({"--nproc_per_node", "2", "--log-level", "info", "--python",
                       "/usr/bin/python3", worker("file_timer.py"), dir, "release"},
                      env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.err, "watchdog timer")) << r.err;
  EXPECT_TRUE(has(r.err, "file-timer watchdog listening on " + tmp + "/watchdog_timer_")) << r.err;
  for (const auto& entry : fs::directory_iterator(tmp)) {
    EXPECT_NE(entry.path().filename().string().rfind("watchdog_timer_", 0), 0U)
        << "the FIFO outlived the run: " << entry.path();
  }
}
