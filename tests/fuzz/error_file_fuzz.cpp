// libFuzzer entry point for the worker error-file reader: any bytes through parse_error_file,
// and the result through everything the agent does with it (the failure, the summary box and
// the parent error file, which falls back on the worker's stderr when the file is no record).
// A parse gives a record or a one-line error; the parent error file is always a parsable
// record, of the worker file's shape when that one parsed.

#include "ddprun/errors/error_file.hpp"
#include "ddprun/errors/failure.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

constexpr std::int64_t k_now = 1'700'000'000;
constexpr int k_pid = 4242;

std::string fixed_time(std::int64_t epoch_seconds) { return std::to_string(epoch_seconds); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ddprun::errors;
  if (size < 1) {
    return 0;
  }
  // The first byte is the worker's exit status: 0..127, or a signal as a negative code (the
  // byte read as two's complement, -128..-1).
  const int exit_code = data[0] < 128 ? data[0] : data[0] - 256;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto record = parse_error_file(text);
  if (!record && record.error().message.find_first_of("\r\n") != std::string::npos) {
    std::abort();
  }
  FailureInput input;
  input.exit_code = exit_code;
  input.pid = k_pid;
  input.now = k_now;
  input.error_file = "/tmp/error.json";
  input.record = record;
  input.stderr_tail = {std::string(text)};  // used when the file is no record
  auto failure = make_failure(std::move(input));
  (void)render_summary("train.py", "host", {failure}, fixed_time);
  auto parent = render_parent_error_file(failure);
  auto reread = parse_error_file(parent);
  if (!reread) {
    std::abort();
  }
  if (record && reread->message_is_dict != record->message_is_dict) {
    std::abort();
  }
  return 0;
}
