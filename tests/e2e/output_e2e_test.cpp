// End-to-end tests of worker output handling (spec torchrun.md §7): log directory layout,
// --redirects/--tee/--local-ranks-filter routing, line prefixes, partial and very long lines,
// and a worker that writes faster than the console reads.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "slow_console.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;
namespace fs = std::filesystem;

namespace {

constexpr auto k_run_timeout = std::chrono::seconds(60);

std::string worker(const std::string& name) { return source_path("tests/support/workers/" + name); }

/// ddprun with /usr/bin/python3 running tests/support/workers/chatter.py (no torch needed).
RunResult run_chatter(const std::vector<std::string>& launcher_args,
                      const std::vector<std::string>& chatter_args,
                      std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv{ddprun_bin()};
  argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
  argv.insert(argv.end(), {"--python", "/usr/bin/python3", worker("chatter.py")});
  argv.insert(argv.end(), chatter_args.begin(), chatter_args.end());
  return run(argv, RunOptions{std::move(env), {}, "", k_run_timeout});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(line);
  }
  return out;
}

/// What follows `prefix` on each line holding it, in order. Not only at line start: an
/// untee'd rank writes to the console directly, and its partial last line ("tail rank=1"
/// without newline) may run into a prefixed line, as with torchrun.
std::vector<std::string> with_prefix(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& line : lines_of(text)) {
    auto at = line.find(prefix);
    if (at != std::string::npos) {
      out.push_back(line.substr(at + prefix.size()));
    }
  }
  return out;
}

bool contains_line(const std::string& text, const std::string& wanted) {
  for (const auto& line : lines_of(text)) {
    if (line == wanted) {
      return true;
    }
  }
  return false;
}

/// The one `<run_id>_XXXXXXXX` directory ddprun created under `log_dir` (empty if not one).
std::string run_dir(const std::string& log_dir, const std::string& run_id) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(log_dir)) {
    found.push_back(entry.path());
  }
  if (found.size() != 1 ||
      !std::regex_match(found[0].filename().string(), std::regex(run_id + "_[A-Za-z0-9_]{8}"))) {
    return "";
  }
  return found[0].string();
}

std::string rank_file(const std::string& run, int attempt, int local_rank,
                      const std::string& name) {
  return run + "/attempt_" + std::to_string(attempt) + "/" + std::to_string(local_rank) + "/" +
         name;
}

std::vector<std::string> chatter_lines(const std::string& stream, int rank, int n) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    out.push_back(stream + " rank=" + std::to_string(rank) + " i=" + std::to_string(i));
  }
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) {
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST(OutputE2E, LogDirKeepsEveryAttemptOfACrashingJob) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto markers = make_temp_dir("ddprun-markers-");
  auto r = run_chatter({"--nproc_per_node", "2", "--log_dir", logs, "--rdzv_id", "myjob",
                        "--max_restarts", "2", "-t", "3"},
                       {"attempt", markers, "1", "3"});
  EXPECT_EQ(r.status, 1) << r.err;
  auto run = run_dir(logs, "myjob");
  ASSERT_FALSE(run.empty()) << "want one myjob_XXXXXXXX under " << logs;
  for (int attempt = 0; attempt <= 2; ++attempt) {
    for (int rank = 0; rank <= 1; ++rank) {
      auto tag = "attempt=" + std::to_string(attempt) + " rank=" + std::to_string(rank) + "\n";
      EXPECT_EQ(read_file(rank_file(run, attempt, rank, "stdout.log")), "out " + tag);
      EXPECT_EQ(read_file(rank_file(run, attempt, rank, "stderr.log")), "err " + tag);
    }
  }
  EXPECT_FALSE(fs::exists(run + "/attempt_3"));
}

TEST(OutputE2E, LogDirHasEmptyRankDirsWithoutRedirects) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run({ddprun_bin(), "--nproc_per_node", "2", "--log_dir", logs, "--rdzv_id", "myjob",
                "--no_python", "/bin/true"},
               RunOptions{{}, {}, "", k_run_timeout});
  ASSERT_EQ(r.status, 0) << r.err;
  auto run = run_dir(logs, "myjob");
  ASSERT_FALSE(run.empty());
  for (const char* rank : {"0", "1"}) {
    auto dir = run + "/attempt_0/" + rank;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    EXPECT_TRUE(fs::is_empty(dir)) << dir;
  }
}

TEST(OutputE2E, DevNullLogDirWritesNoFilesAndEmptiesErrorFile) {
  auto tmp = make_temp_dir("ddprun-tmp-");
  auto dumps = make_temp_dir("ddprun-env-");
  auto r = run({ddprun_bin(), "--nproc_per_node", "2", "--log_dir", "/dev/null", "-t", "3",
                "--no_python", worker("envdump.sh"), dumps},
               RunOptions{{{"TMPDIR", tmp}}, {}, "", k_run_timeout});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_empty(tmp)) << "ddprun created files under TMPDIR " << tmp;
  for (const char* rank : {"0", "1"}) {
    auto env = read_file(dumps + "/env_" + rank + ".txt");
    EXPECT_TRUE(contains_line(env, "TORCHELASTIC_ERROR_FILE=")) << env;
  }
}

TEST(OutputE2E, TeeAllPrefixesEachStreamAndWritesFiles) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run_chatter({"--nproc_per_node", "2", "--log_dir", logs, "-t", "3"}, {"lines", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto run = run_dir(logs, "none");
  ASSERT_FALSE(run.empty());
  for (int rank = 0; rank <= 1; ++rank) {
    auto prefix = "[default" + std::to_string(rank) + "]:";
    auto want_out = chatter_lines("out", rank, 3);
    want_out.push_back("tail rank=" + std::to_string(rank));  // partial last line, flushed
    EXPECT_EQ(with_prefix(r.out, prefix), want_out) << r.out;
    EXPECT_EQ(with_prefix(r.err, prefix), chatter_lines("err", rank, 3)) << r.err;
    EXPECT_EQ(read_file(rank_file(run, 0, rank, "stdout.log")),
              joined(chatter_lines("out", rank, 3)) + "tail rank=" + std::to_string(rank));
    EXPECT_EQ(read_file(rank_file(run, 0, rank, "stderr.log")),
              joined(chatter_lines("err", rank, 3)));
  }
}

TEST(OutputE2E, RedirectStdoutOnlyKeepsStderrOnConsoleUnprefixed) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run_chatter({"--nproc_per_node", "2", "--log_dir", logs, "-r", "1"}, {"lines", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto run = run_dir(logs, "none");
  ASSERT_FALSE(run.empty());
  EXPECT_EQ(r.out, "");
  for (int rank = 0; rank <= 1; ++rank) {
    for (const auto& line : chatter_lines("err", rank, 3)) {
      EXPECT_TRUE(contains_line(r.err, line)) << line << " missing from\n" << r.err;
    }
    EXPECT_EQ(read_file(rank_file(run, 0, rank, "stdout.log")),
              joined(chatter_lines("out", rank, 3)) + "tail rank=" + std::to_string(rank));
    EXPECT_FALSE(fs::exists(rank_file(run, 0, rank, "stderr.log")));
  }
  EXPECT_EQ(r.err.find("[default"), std::string::npos) << r.err;
}

TEST(OutputE2E, PerRankTeeMapAppliesToEachRank) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r =
      run_chatter({"--nproc_per_node", "2", "--log_dir", logs, "-t", "0:1,1:2"}, {"lines", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto run = run_dir(logs, "none");
  ASSERT_FALSE(run.empty());
  // rank 0: stdout tee'd (prefixed + file), stderr plain on the console
  auto out0 = chatter_lines("out", 0, 2);
  out0.push_back("tail rank=0");
  EXPECT_EQ(with_prefix(r.out, "[default0]:"), out0) << r.out;
  EXPECT_TRUE(contains_line(r.err, "err rank=0 i=1")) << r.err;
  EXPECT_TRUE(fs::exists(rank_file(run, 0, 0, "stdout.log")));
  EXPECT_FALSE(fs::exists(rank_file(run, 0, 0, "stderr.log")));
  // rank 1: stderr tee'd, stdout plain
  EXPECT_EQ(with_prefix(r.err, "[default1]:"), chatter_lines("err", 1, 2)) << r.err;
  EXPECT_TRUE(contains_line(r.out, "out rank=1 i=1")) << r.out;
  EXPECT_NE(r.out.find("tail rank=1"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(rank_file(run, 0, 1, "stderr.log")), joined(chatter_lines("err", 1, 2)));
  EXPECT_FALSE(fs::exists(rank_file(run, 0, 1, "stdout.log")));
}

TEST(OutputE2E, LocalRanksFilterHidesRankButKeepsItsFiles) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run_chatter(
      {"--nproc_per_node", "2", "--log_dir", logs, "-t", "3", "--local_ranks_filter", "0"},
      {"lines", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto run = run_dir(logs, "none");
  ASSERT_FALSE(run.empty());
  EXPECT_EQ(with_prefix(r.err, "[default0]:"), chatter_lines("err", 0, 2)) << r.err;
  EXPECT_EQ((r.out + r.err).find("rank=1"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(read_file(rank_file(run, 0, 1, "stdout.log")),
            joined(chatter_lines("out", 1, 2)) + "tail rank=1");
  EXPECT_EQ(read_file(rank_file(run, 0, 1, "stderr.log")), joined(chatter_lines("err", 1, 2)));
}

// Issue #24: without -r/-t the filter used to send the hidden ranks to /dev/null, so their
// output, crash tracebacks included, was nowhere. The exact command line of the issue.
TEST(OutputE2E, LocalRanksFilterWithoutTeeKeepsTheHiddenRanksOutputInTheirFiles) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run({ddprun_bin(), "--log_dir", logs, "--nproc_per_node", "2", "--local-ranks-filter",
                "0", "--no_python", "/bin/sh", "-c", "echo out $RANK; echo err $RANK >&2"},
               RunOptions{{}, {}, "", k_run_timeout});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out 0\n");
  EXPECT_NE(r.err.find("err 0"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("err 1"), std::string::npos) << r.err;
  auto run_path = run_dir(logs, "none");
  ASSERT_FALSE(run_path.empty());
  EXPECT_EQ(read_file(rank_file(run_path, 0, 1, "stdout.log")), "out 1\n");
  EXPECT_EQ(read_file(rank_file(run_path, 0, 1, "stderr.log")), "err 1\n");
}

TEST(OutputE2E, AFilteredRanksFailureShowsItsStderrInTheSummary) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run({ddprun_bin(), "--log_dir", logs, "--nproc_per_node", "2", "--local-ranks-filter",
                "0", "--no_python", "/bin/sh", "-c", "echo boom $RANK >&2; exit $RANK"},
               RunOptions{{}, {}, "", k_run_timeout});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("boom 1"), std::string::npos) << "the failed rank's stderr tail\n" << r.err;
}

TEST(OutputE2E, PrefixTemplateFromEnvironment) {
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run_chatter({"--nproc_per_node", "2", "--log_dir", logs, "-t", "3"}, {"lines", "1"},
                       {{"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "[${rank}]: "}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(with_prefix(r.out, "[1]: "),
            (std::vector<std::string>{"out rank=1 i=0", "tail rank=1"}));
  EXPECT_EQ(with_prefix(r.err, "[0]: "), chatter_lines("err", 0, 1)) << r.err;
  EXPECT_EQ(r.out.find("[default"), std::string::npos) << r.out;
}

TEST(OutputE2E, LongLineIsCompleteInFileAndSplitOnConsole) {
  constexpr int k_length = 200000;  // > 64 KiB, ddprun's console line limit
  auto logs = make_temp_dir("ddprun-logs-");
  auto r = run_chatter({"--nproc_per_node", "1", "--log_dir", logs, "-t", "1"},
                       {"long", std::to_string(k_length)});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string digits;
  for (int i = 0; i < k_length; ++i) {
    digits.push_back(static_cast<char>('0' + i % 10));
  }
  auto run = run_dir(logs, "none");
  ASSERT_FALSE(run.empty());
  EXPECT_EQ(read_file(rank_file(run, 0, 0, "stdout.log")), digits + "\nafter long\n");
  auto pieces = with_prefix(r.out, "[default0]:");
  ASSERT_GE(pieces.size(), 3u) << "the long line should be split on the console";
  EXPECT_EQ(pieces.back(), "after long");
  pieces.pop_back();
  std::string rejoined;
  for (const auto& piece : pieces) {
    rejoined += piece;
  }
  EXPECT_EQ(rejoined.size(), digits.size());
  EXPECT_TRUE(rejoined == digits) << "console pieces do not rebuild the line";
}

TEST(OutputE2E, FloodingWorkerEndsWithCompleteFileAndReportsDrops) {
  constexpr std::uintmax_t k_bytes = 100'000'000;
  auto logs = make_temp_dir("ddprun-logs-");
  auto file_size = [&] {
    for (const auto& entry : fs::recursive_directory_iterator(logs)) {
      if (entry.path().filename() == "stdout.log") {
        return fs::file_size(entry.path());
      }
    }
    return std::uintmax_t{0};
  };
  auto r = run_with_slow_console(
      // Its own fork/exec, so no PET_MASTER_PORT from the test helpers: a free port, not
      // torchrun's 29500, which any other ddprun on the machine may hold.
      {ddprun_bin(), "--nproc_per_node", "1", "--master_port", std::to_string(free_port()),
       "--log_dir", logs, "-t", "1", "--python", "/usr/bin/python3", worker("chatter.py"), "flood",
       std::to_string(k_bytes)},
      [&] { return file_size() >= k_bytes; });
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(file_size(), k_bytes);
  // Each 100-byte line gains the 11-byte "[default0]:" prefix on the console.
  constexpr std::uint64_t k_console_if_complete = k_bytes / 100 * 111;
  if (r.console_bytes < k_console_if_complete) {
    EXPECT_TRUE(r.console_mentions_drop || r.err.find("dropped") != std::string::npos)
        << "console got " << r.console_bytes << " of " << k_console_if_complete
        << " bytes but ddprun reported no dropped output; stderr:\n"
        << r.err;
  }
  fs::remove_all(logs);  // 100 MB
}
