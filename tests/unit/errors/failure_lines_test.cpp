// The log lines of a failed attempt and the hint for a worker that could not import a module.

#include "ddprun/errors/failure_lines.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ddprun::errors {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProcessFailure failed(int rank, int pid, int exit_code, std::int64_t at) {
  ProcessFailure f;
  f.rank = rank;
  f.local_rank = rank % 2;
  f.pid = pid;
  f.exit_code = exit_code;
  f.timestamp = at;
  return f;
}

TEST(DescribeExit, NamesTheCodeOrTheSignal) {
  EXPECT_EQ(describe_exit(3), "exit code 3");
  EXPECT_EQ(describe_exit(-11), "killed by SIGSEGV (signal 11)");
  EXPECT_EQ(describe_exit(-40), "killed by signal 40");
}

TEST(FailedRanks, OneFailureSaysRankHowAndWhere) {
  EXPECT_EQ(render_failed_ranks({failed(1, 4242, 3, 10)}, "node7"),
            "rank 1 (local_rank 1, pid 4242) on node7: exit code 3");
}

TEST(FailedRanks, TheRootCauseComesFirstAndTheOthersFollow) {
  const auto line = render_failed_ranks(
      {failed(0, 100, -15, 12), failed(3, 103, -11, 10), failed(2, 102, 1, 11)}, "h");
  EXPECT_EQ(line,
            "rank 3 (local_rank 1, pid 103) on h: killed by SIGSEGV (signal 11); also rank 0 "
            "(local_rank 0, pid 100): killed by SIGTERM (signal 15), rank 2 (local_rank 0, pid "
            "102): exit code 1");
}

TEST(FailedRanks, ManyFailuresAreCountedNotListed) {
  constexpr int k_failed = 7;
  std::vector<ProcessFailure> all;
  all.reserve(k_failed);
  for (int r = 0; r < k_failed; ++r) {
    all.push_back(failed(r, 100 + r, 1, 10 + r));
  }
  const auto line = render_failed_ranks(all, "h");
  EXPECT_THAT(line, HasSubstr("rank 3 (local_rank 1, pid 103): exit code 1, and 3 more"));
  EXPECT_THAT(line, Not(HasSubstr("rank 4")));
}

TEST(FailedRanks, TheAgentsReasonIsNamed) {
  auto f = failed(0, 9, -9, 1);
  f.reason = "watchdog timer \"step\" expired";
  EXPECT_EQ(render_failed_ranks({f}, "h"),
            "rank 0 (local_rank 0, pid 9) on h: killed by SIGKILL (signal 9) (watchdog timer "
            "\"step\" expired)");
}

TEST(ImportError, TheLastImportLineAndItsModuleAreFound) {
  const auto m =
      find_import_error({"Traceback (most recent call last):", "  File \"t.py\"",
                         "    import torch", "ModuleNotFoundError: No module named 'torch'"});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->module, "torch");
  EXPECT_EQ(m->line, "ModuleNotFoundError: No module named 'torch'");
  const auto dotted = find_import_error({"ModuleNotFoundError: No module named 'torch.cuda'"});
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->module, "torch.cuda");
}

TEST(ImportError, AnImportErrorWithoutAModuleNameStillCounts) {
  const auto m = find_import_error(
      {"ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->module, "");
}

TEST(ImportError, OtherErrorsAreNotImportErrors) {
  EXPECT_FALSE(find_import_error({"RuntimeError: CUDA error", "ValueError: bad"}));
  EXPECT_FALSE(find_import_error({}));
}

TEST(ImportHint, PathDefaultSaysWhyAndHowToChooseAnother) {
  const Interpreter p{
      "python3", "default (python3 on PATH)", "/root/.pyenv/shims/python3", {"/usr/bin/python3"}};
  const auto lines =
      render_import_hint(p, {"torch", "ModuleNotFoundError: No module named 'torch'"});
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_EQ(lines[0],
            "The workers' Python could not import torch: they ran python3 "
            "(/root/.pyenv/shims/python3).");
  EXPECT_THAT(lines[1], HasSubstr("the first python3 on PATH"));
  EXPECT_THAT(lines[1], HasSubstr("neither --python nor PYTHON_EXEC"));
  EXPECT_THAT(lines[2], HasSubstr("--python /path/to/python3 or PYTHON_EXEC=/path/to/python3"));
  EXPECT_THAT(lines[2], HasSubstr("`import torch` works"));
  EXPECT_THAT(lines[2], HasSubstr("other python3 on PATH: /usr/bin/python3"));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind("  ", 0), 0U) << lines[i];
  }
}

TEST(ImportHint, EachOriginIsExplained) {
  const MissingModule m{"numpy", ""};
  EXPECT_THAT(render_import_hint({"/opt/py", "flag --python", "", {}}, m)[1],
              HasSubstr("given with --python"));
  EXPECT_THAT(render_import_hint({"/opt/py", "env PYTHON_EXEC", "", {}}, m)[1],
              HasSubstr("taken from PYTHON_EXEC"));
  EXPECT_THAT(
      render_import_hint(
          {"/v/bin/python3", "default (python3 beside the ddprun executable)", "", {}}, m)[1],
      HasSubstr("installed beside the ddprun executable"));
  EXPECT_EQ(render_import_hint({"/opt/py", "flag --python", "", {}}, m)[0],
            "The workers' Python could not import numpy: they ran /opt/py.");
}

}  // namespace
}  // namespace ddprun::errors
