// A box rendered by torch 1.13's own ChildFailedError (TZ=UTC, getfqdn patched to "node1")
// from an error file written by torch 1.13's @record, with the two exitcode lines changed
// to recent main's template ("(pid: N) " + " (SIGNAME)").

#include "ddprun/errors/failure.hpp"

#include <gtest/gtest.h>

#include <time.h>

#include <string>

namespace ddprun::errors {
namespace {

constexpr const char* k_record_file =
    R"({"message": {"message": "ValueError: boom from rank 1", "extraInfo": {"py_callstack": "Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 346, in wrapper\n    return f(*args, **kwargs)\n           ^^^^^^^^^^^^^^^^^^\n  File \"/tmp/rec.py\", line 4, in main\n    raise ValueError(\"boom from rank 1\")\nValueError: boom from rank 1\n", "timestamp": "1795950119"}}})";

constexpr const char* k_torch_box =
    "\n============================================================\ntrain.py FAILED\n"
    "------------------------------------------------------------\nFailures:\n[1]:\n"
    "  time      : 2026-11-29_11:02:00\n  host      : node1\n"
    "  rank      : 0 (local_rank: 0)\n  exitcode  : -15 (pid: 4241)  (SIGTERM)\n"
    "  error_file: <N/A>\n  traceback : Signal 15 (SIGTERM) received by PID 4241\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-29_11:01:59\n"
    "  host      : node1\n  rank      : 1 (local_rank: 1)\n  exitcode  : 1 (pid: 4242) \n"
    "  error_file: /tmp/real_err.json\n  traceback : Traceback (most recent call last):\n"
    "    File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/"
    "errors/__init__.py\", line 346, in wrapper\n      return f(*args, **kwargs)\n"
    "             ^^^^^^^^^^^^^^^^^^\n    File \"/tmp/rec.py\", line 4, in main\n"
    "      raise ValueError(\"boom from rank 1\")\n  ValueError: boom from rank 1\n  \n"
    "============================================================";

std::string utc_time(std::int64_t epoch) {
  auto t = static_cast<time_t>(epoch);
  struct tm parts {};
  gmtime_r(&t, &parts);
  char buf[32];
  return std::string(buf, strftime(buf, sizeof buf, "%Y-%m-%d_%H:%M:%S", &parts));
}

TEST(TorchGolden, MatchesTorchRenderingOfARealRecordFile) {
  FailureInput rank1;
  rank1.local_rank = 1;
  rank1.rank = 1;
  rank1.pid = 4242;
  rank1.exit_code = 1;
  rank1.error_file = "/tmp/real_err.json";
  rank1.record = parse_error_file(k_record_file);
  rank1.now = 1795950125;
  FailureInput rank0;
  rank0.pid = 4241;
  rank0.exit_code = -15;
  rank0.now = 1795950120;
  std::vector<ProcessFailure> failures = {make_failure(rank1), make_failure(rank0)};
  EXPECT_EQ(render_summary("train.py", "node1", failures, utc_time), k_torch_box);
}

}  // namespace
}  // namespace ddprun::errors
