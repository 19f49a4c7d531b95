#include "ddprun/errors/failure.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

// Regression: a float timestamp past int64 was converted with undefined behaviour.
TEST(ParseErrorFile, DropsTimestampsPastInt64) {
  for (const char* ts : {"1e300", "-1e19", "9223372036854775808.0", "18446744073709551615"}) {
    auto r = parse_error_file(std::string(R"({"message": "m", "timestamp": )") + ts + "}");
    ASSERT_TRUE(r) << ts;
    EXPECT_FALSE(r->timestamp.has_value()) << ts;
  }
  auto edge = parse_error_file(R"({"message": "m", "timestamp": 9223372036854775807})");
  ASSERT_TRUE(edge);
  EXPECT_EQ(edge->timestamp, INT64_MAX);
  auto negative = parse_error_file(R"({"message": "m", "timestamp": -1.5e3})");
  ASSERT_TRUE(negative);
  EXPECT_EQ(negative->timestamp, -1500);
}

// Printing JSON recurses once per level: a file nested a million deep would overflow the
// agent's stack when its traceback or the parent error file is rendered.
TEST(ParseErrorFile, RefusesDeepNesting) {
  const std::size_t depth = 1'000'000;
  auto deep =
      R"({"message": {"message": )" + std::string(depth, '[') + std::string(depth, ']') + "}}";
  auto r = parse_error_file(deep);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "error file nests arrays or objects deeper than 64 levels");
  // Brackets inside strings (after an escaped quote too) are text, not nesting.
  auto text = parse_error_file(R"({"message": ")" + std::string(100, '[') + R"(\"[["})");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text->traceback, std::string(100, '[') + "\"[[");
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
