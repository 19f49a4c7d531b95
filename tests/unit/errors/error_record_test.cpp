#include "ddprun/errors/failure.hpp"

#include <gtest/gtest.h>

namespace ddprun::errors {
namespace {

TEST(ParseErrorFile, ReadsRecordShape) {
  auto r = parse_error_file(
      R"({"message": {"message": "ValueError: boom", "extraInfo": {"py_callstack": "Traceback\nValueError: boom\n", "timestamp": "1795946171"}}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->message_is_dict);
  EXPECT_EQ(r->traceback, "Traceback\nValueError: boom\n");
  EXPECT_EQ(r->timestamp, 1795946171);
}

TEST(ParseErrorFile, FallsBackToInnerMessageWithoutCallstack) {
  auto r = parse_error_file(R"({"message": {"message": "boom", "extraInfo": {"timestamp": 7}}})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->traceback, "boom");
  EXPECT_EQ(r->timestamp, 7);
}

TEST(ParseErrorFile, ShowsNotAvailableForEmptyDict) {
  auto r = parse_error_file(R"({"message": {}})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->traceback, "<N/A>");
  EXPECT_FALSE(r->timestamp.has_value());
}

TEST(ParseErrorFile, ReadsNewStringShape) {
  auto r = parse_error_file(R"({"message": "plain text", "timestamp": 42})");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->message_is_dict);
  EXPECT_EQ(r->traceback, "plain text");
  EXPECT_EQ(r->timestamp, 42);
}

TEST(ParseErrorFile, DropsNonNumericTimestamp) {
  auto r =
      parse_error_file(R"({"message": {"message": "m", "extraInfo": {"timestamp": "yesterday"}}})");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->timestamp.has_value());
}

TEST(ParseErrorFile, RejectsBadFilesWithAReason) {
  struct Case {
    const char* text;
    const char* reason;
  };
  const Case cases[] = {
      {"", "is empty"},
      {"   \n", "is empty"},
      {R"({"message": {"message": "trunc)", "not valid JSON"},
      {"garbage", "not valid JSON"},
      {"[1,2]", "not a JSON object"},
      {R"({"msg": "x"})", "no \"message\" field"},
      {R"({"message": 5})", "neither a string nor an object"},
  };
  for (const auto& c : cases) {
    auto r = parse_error_file(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, ErrorCode::protocol);
    EXPECT_NE(r.error().message.find(c.reason), std::string::npos) << r.error().message;
  }
}

TEST(SignalName, NamesLinuxSignalsLikePython) {
  EXPECT_EQ(signal_name(11), "SIGSEGV");
  EXPECT_EQ(signal_name(9), "SIGKILL");
  EXPECT_EQ(signal_name(6), "SIGABRT");
  EXPECT_EQ(signal_name(31), "SIGSYS");
  EXPECT_EQ(signal_name(34), "SIGRTMIN");
  EXPECT_EQ(signal_name(64), "SIGRTMAX");
  EXPECT_EQ(signal_name(40), "");
  EXPECT_EQ(signal_name(0), "");
  EXPECT_EQ(signal_name(-3), "");
}

}  // namespace
}  // namespace ddprun::errors
