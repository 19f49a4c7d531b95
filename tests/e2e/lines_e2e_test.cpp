// End-to-end tests of --line-output (issue 41 §1): when ddprun's stdout or stderr is not a
// terminal, the workers' lines pass the agent and are written whole; ranks' lines never cut
// into each other, nothing is dropped for a slow console, and a terminal stays the workers'.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "slow_console.hpp"
#include "support/subprocess.hpp"

using namespace ddprun::test;

namespace {

constexpr auto k_run_timeout = std::chrono::seconds(120);
constexpr int k_ranks = 4;
constexpr int k_lines = 3000;

std::vector<std::string> chatter(const std::vector<std::string>& launcher_args,
                                 const std::vector<std::string>& chatter_args) {
  std::vector<std::string> argv{ddprun_bin(), "--standalone"};
  argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
  argv.insert(argv.end(),
              {"--python", "/usr/bin/python3", source_path("tests/support/workers/chatter.py")});
  argv.insert(argv.end(), chatter_args.begin(), chatter_args.end());
  return argv;
}

std::vector<std::string> print_job() {
  return chatter({"--nproc_per_node", std::to_string(k_ranks)},
                 {"prints", std::to_string(k_lines)});
}

struct LineCount {
  int whole = 0;                    ///< lines exactly as a worker printed them
  int out_of_order = 0;             ///< whole lines whose i is not the rank's next
  std::vector<std::string> broken;  ///< the first few others
};

/// Counts the printed lines of `text` that arrived whole and in order per rank.
LineCount count_lines(const std::string& text) {
  static const std::regex k_line("line rank=([0-9]+) i=([0-9]+) x{60}");
  LineCount c;
  std::map<int, int> next;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, k_line)) {
      ++c.whole;
      int rank = std::stoi(m[1]);
      c.out_of_order += std::stoi(m[2]) == next[rank] ? 0 : 1;
      next[rank] = std::stoi(m[2]) + 1;
    } else if (line.find("line rank=") != std::string::npos && c.broken.size() < 5) {
      c.broken.push_back(line);
    }
  }
  return c;
}

std::string show(const LineCount& c) {
  std::string out = std::to_string(c.whole) + " whole, " + std::to_string(c.out_of_order) +
                    " out of order; broken lines:";
  for (const auto& line : c.broken) {
    out += "\n  " + line;
  }
  return out;
}

}  // namespace

TEST(LinesE2E, FourRanksPrintLinesStayWholeInAPipe) {
  auto r = run(print_job(), RunOptions{{}, {}, "", k_run_timeout});
  ASSERT_EQ(r.status, 0) << r.err;
  auto c = count_lines(r.out);
  EXPECT_EQ(c.whole, k_ranks * k_lines) << show(c);
  EXPECT_EQ(c.out_of_order, 0) << show(c);
}

TEST(LinesE2E, FourRanksPrintLinesStayWholeInAFile) {
  auto bg = start(print_job(), RunOptions{{}, {}, "", k_run_timeout});
  ASSERT_EQ(wait_for(bg.pid, k_run_timeout), 0) << read_file(bg.err_path);
  auto c = count_lines(read_file(bg.out_path));
  EXPECT_EQ(c.whole, k_ranks * k_lines) << show(c);
  EXPECT_EQ(c.out_of_order, 0) << show(c);
}

// The console is the stream's only copy: a console that does not read holds the workers back
// (as a full pipe does when they write to it themselves) instead of losing lines.
TEST(LinesE2E, ASlowPipeLosesNoLine) {
  constexpr std::uint64_t k_bytes = 16 * 1000 * 1000;
  auto began = std::chrono::steady_clock::now();
  auto r = run_with_slow_console(
      chatter({"--nproc_per_node", "1"}, {"flood", std::to_string(k_bytes)}),
      [&] { return std::chrono::steady_clock::now() - began > std::chrono::seconds(2); });
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.console_bytes, k_bytes) << r.err;
  EXPECT_FALSE(r.console_mentions_drop) << r.err;
  EXPECT_EQ(r.err.find("could not keep up"), std::string::npos) << r.err;
}

// A line without its newline (a prompt, a progress dot) is not held until the worker ends it:
// it is written once it has waited its moment (250 ms).
TEST(LinesE2E, APartialLineIsWrittenWhileTheWorkerStillRuns) {
  auto dir = make_temp_dir("ddprun-prompt-");
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  pid_t pid =
      spawn_with_stdout(chatter({"--nproc_per_node", "1"}, {"prompt", dir}), fds[1], dir + "/err");
  close(fds[1]);
  const auto shown = read_until(fds[0], "waiting>", std::chrono::seconds(30));
  EXPECT_NE(shown.find("waiting>"), std::string::npos) << "shown before the newline: " << shown;
  std::ofstream(dir + "/go") << "";
  EXPECT_EQ(wait_for(pid, std::chrono::seconds(60)), 0) << read_file(dir + "/err");
  close(fds[0]);
}

// --line-output off: the worker writes to ddprun's own pipe, as under torchrun.
TEST(LinesE2E, OffLeavesTheWorkersOnDdprunsOwnStreams) {
  auto always = [] { return true; };
  auto routed = run_with_slow_console(chatter({"--nproc_per_node", "1"}, {"whereis"}), always);
  ASSERT_EQ(routed.status, 0) << routed.err;
  EXPECT_NE(routed.console_head.find("fd1=pipe:["), std::string::npos) << routed.console_head;
  EXPECT_EQ(routed.console_head.find("fd1=" + routed.console_pipe), std::string::npos)
      << routed.console_head;
  auto direct = run_with_slow_console(
      chatter({"--nproc_per_node", "1", "--line-output", "off"}, {"whereis"}), always);
  ASSERT_EQ(direct.status, 0) << direct.err;
  EXPECT_NE(direct.console_head.find("fd1=" + direct.console_pipe + "\n"), std::string::npos)
      << direct.console_head << " (ddprun's stdout: " << direct.console_pipe << ")";
}

// auto: a terminal stays the workers' own (progress bars, colours); the stderr file next to
// it is not a terminal, so that stream passes the agent.
TEST(LinesE2E, ATerminalStaysTheWorkers) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string tty = ptsname(master);
  int slave = open(tty.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  ASSERT_GE(slave, 0);
  auto dir = make_temp_dir("ddprun-tty-");
  pid_t pid =
      spawn_with_stdout(chatter({"--nproc_per_node", "1"}, {"whereis"}), slave, dir + "/err");
  close(slave);
  const auto shown = read_until(master, "fd1=", std::chrono::seconds(60));
  EXPECT_EQ(wait_for(pid, std::chrono::seconds(60)), 0) << read_file(dir + "/err");
  close(master);
  EXPECT_NE(shown.find("fd1=" + tty), std::string::npos) << shown;
  EXPECT_NE(read_file(dir + "/err").find("fd2=pipe:["), std::string::npos)
      << read_file(dir + "/err");
}
