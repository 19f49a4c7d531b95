#include "ddprun/errors/error_file.hpp"
#include "ddprun/errors/event_log.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ddprun::errors {
namespace {

namespace fs = std::filesystem;

class FixedClock final : public util::Clock {
 public:
  util::SteadyTime now() const override { return {}; }
  std::chrono::system_clock::time_point wall_now() const override {
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(1795946171250));
  }
};

class ErrorFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ddprun_errors_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_;
};

TEST_F(ErrorFilesTest, MissingFileIsNotAnError) {
  EXPECT_FALSE(read_error_file(dir_ + "/none.json").has_value());
  EXPECT_FALSE(read_error_file("").has_value());
}

TEST_F(ErrorFilesTest, GarbageFileGivesAnErrorNamingThePath) {
  auto path = dir_ + "/error.json";
  std::ofstream(path) << "{\"message\": {\"message\": \"ValueError";
  auto r = read_error_file(path);
  ASSERT_TRUE(r.has_value());
  ASSERT_FALSE(*r);
  EXPECT_NE(r->error().message.find(path), std::string::npos);
  EXPECT_NE(r->error().message.find("not valid JSON"), std::string::npos);
}

TEST_F(ErrorFilesTest, ParentFileGetsChildRecordWithErrorCode) {
  auto child = dir_ + "/child.json";
  std::ofstream(child)
      << R"({"message": {"message": "E: x", "extraInfo": {"py_callstack": "tb", "timestamp": "9"}}})";
  FailureInput in;
  in.exit_code = -11;
  in.error_file = child;
  in.record = read_error_file(child);
  auto parent = dir_ + "/parent.json";
  std::ofstream(parent) << "stale";
  ASSERT_TRUE(write_parent_error_file(parent, make_failure(in)));
  auto doc = nlohmann::json::parse(slurp(parent));
  EXPECT_EQ(doc["message"]["errorCode"], -11);
  EXPECT_EQ(doc["message"]["extraInfo"]["py_callstack"], "tb");
}

TEST_F(ErrorFilesTest, WriteFailureNamesThePath) {
  auto r = write_error_file(dir_ + "/no/such/dir/e.json", "{}");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/no/such/dir/e.json"), std::string::npos);
}

TEST_F(ErrorFilesTest, EventLogWritesOneJsonObjectPerLine) {
  FixedClock clock;
  auto path = dir_ + "/events.jsonl";
  {
    auto log = EventLog::open(path, clock);
    ASSERT_TRUE(log) << log.error().message;
    log->rendezvous(1, 0, 2);
    log->workers_started(0, {101, 102});
    log->watchdog_expired(1, 1, 102, "step", 9);
    log->worker_exit(1, 1, 102, -9);
    log->restart(1, 2, "worker failure");
    log->stop("signal SIGTERM");
    log->result("FAILED", 1);
    EXPECT_EQ(log->write_errors(), 0U);
  }
  std::istringstream lines(slurp(path));
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(lines, line);) {
    events.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(events.size(), 7U);
  EXPECT_EQ(events[0]["event"], "rendezvous");
  EXPECT_DOUBLE_EQ(events[0]["ts"].get<double>(), 1795946171.25);
  EXPECT_EQ(events[1]["pids"], nlohmann::json::array({101, 102}));
  EXPECT_EQ(events[2]["event"], "watchdog_expired");
  EXPECT_EQ(events[2]["scope_id"], "step");
  EXPECT_EQ(events[2]["signal"], "SIGKILL");
  EXPECT_EQ(events[3]["signal"], "SIGKILL");
  EXPECT_EQ(events[3]["exit_code"], -9);
  EXPECT_EQ(events[4]["restarts_left"], 2);
  EXPECT_EQ(events[5]["reason"], "signal SIGTERM");
  EXPECT_EQ(events[6]["state"], "FAILED");
}

TEST_F(ErrorFilesTest, EventLogOpenFailureIsClear) {
  FixedClock clock;
  auto log = EventLog::open(dir_ + "/missing/events.jsonl", clock);
  ASSERT_FALSE(log);
  EXPECT_NE(log.error().message.find("'" + dir_ + "/missing/events.jsonl'"), std::string::npos);
  EXPECT_NE(log.error().message.find("expected a file that can be appended to"), std::string::npos);
  EXPECT_NE(log.error().message.find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace ddprun::errors
