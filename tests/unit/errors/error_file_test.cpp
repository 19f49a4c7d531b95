#include "ddprun/errors/error_file.hpp"

#include "ddprun/errors/event_log.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ddprun::errors {
namespace {

ProcessFailure failure_with_record(int exit_code, const std::string& json) {
  FailureInput in;
  in.exit_code = exit_code;
  in.pid = 3;
  in.error_file = "/e";
  in.record = parse_error_file(json);
  return make_failure(in);
}

TEST(RenderParentErrorFile, CopiesRecordWithErrorCodeInserted) {
  auto f = failure_with_record(
      1,
      R"({"message": {"message": "E: x", "extraInfo": {"py_callstack": "tb", "timestamp": "5"}}})");
  EXPECT_EQ(
      render_parent_error_file(f),
      R"({"message":{"message":"E: x","extraInfo":{"py_callstack":"tb","timestamp":"5"},"errorCode":1}})");
}

TEST(RenderParentErrorFile, LeavesStringMessageAndZeroCodeUnchanged) {
  auto text = R"({"message": "plain", "timestamp": 5})";
  EXPECT_EQ(render_parent_error_file(failure_with_record(1, text)),
            R"({"message":"plain","timestamp":5})");
  auto dict = R"({"message": {"message": "m"}})";
  EXPECT_EQ(render_parent_error_file(failure_with_record(0, dict)),
            R"({"message":{"message":"m"}})");
}

TEST(RenderParentErrorFile, WritesOwnRecordWithoutWorkerFile) {
  FailureInput in;
  in.exit_code = -11;
  in.pid = 42;
  in.now = 100;
  in.stderr_tail = {"a", "b"};
  auto doc = nlohmann::json::parse(render_parent_error_file(make_failure(in)));
  EXPECT_EQ(doc["message"]["message"], "Signal 11 (SIGSEGV) received by PID 42");
  EXPECT_EQ(doc["message"]["extraInfo"]["py_callstack"], "a\nb\n");
  EXPECT_EQ(doc["message"]["extraInfo"]["timestamp"], "100");
  EXPECT_EQ(doc["message"]["errorCode"], -11);
  // What we write must read back as a valid record.
  EXPECT_TRUE(parse_error_file(doc.dump()));
}

TEST(RenderParentErrorFile, CarriesTheWatchdogReason) {
  FailureInput in;
  in.exit_code = -9;
  in.pid = 42;
  in.reason = "watchdog timer \"step\" expired";
  auto doc = nlohmann::json::parse(render_parent_error_file(make_failure(in)));
  EXPECT_EQ(doc["message"]["message"],
            "Signal 9 (SIGKILL) received by PID 42: watchdog timer \"step\" expired");
}

// Regression: a worker's stderr that is not UTF-8 made the JSON dump throw.
TEST(RenderParentErrorFile, ReplacesInvalidUtf8FromStderr) {
  FailureInput in;
  in.exit_code = 1;
  in.stderr_tail = {"caf\xc3\xa9", "bad \xff\xfe bytes"};
  std::string text;
  ASSERT_NO_THROW(text = render_parent_error_file(make_failure(in)));
  auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["message"]["extraInfo"]["py_callstack"],
            "caf\xc3\xa9\nbad \xef\xbf\xbd\xef\xbf\xbd bytes\n");
}

TEST(AddExtraInfo, GoesIntoTheMessageObjectOrTheTopLevel) {
  EXPECT_EQ(add_extra_info(R"({"message":{"message":"m","extraInfo":{"timestamp":"5"}}})", "stacks",
                           "rank 1: f"),
            R"({"message":{"message":"m","extraInfo":{"timestamp":"5","stacks":"rank 1: f"}}})");
  EXPECT_EQ(add_extra_info(R"({"message":"plain"})", "stacks", "s"),
            R"({"message":"plain","stacks":"s"})");
  EXPECT_EQ(add_extra_info("not json", "stacks", "s"), "not json");
}

TEST(RenderErrorRecord, OmitsZeroErrorCode) {
  EXPECT_EQ(
      render_error_record("SignalException: got 15", "tb", 7, 0),
      R"({"message":{"message":"SignalException: got 15","extraInfo":{"py_callstack":"tb","timestamp":"7"}}})");
}

TEST(RenderEvent, PutsTsAndEventFirst) {
  EventFields fields = {{"local_rank", 1}, {"signal", "SIGKILL"}};
  EXPECT_EQ(render_event(12.5, "worker_exit", fields),
            "{\"ts\":12.5,\"event\":\"worker_exit\",\"local_rank\":1,\"signal\":\"SIGKILL\"}\n");
  EXPECT_EQ(render_event(1, "stop", EventFields::object()), "{\"ts\":1.0,\"event\":\"stop\"}\n");
}

}  // namespace
}  // namespace ddprun::errors
