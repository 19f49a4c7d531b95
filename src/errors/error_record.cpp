#include "ddprun/errors/failure.hpp"
#include "ddprun/util/strings.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace ddprun::errors {
namespace {

using Json = nlohmann::json;

Error bad_file(const std::string& why) {
  return make_error(ErrorCode::protocol, "error file " + why);
}

// 2^63: doubles in [-2^63, 2^63) convert to int64 without overflow.
constexpr double k_int64_span = 9223372036854775808.0;
// Deeper JSON would only come from a broken worker, and printing it recurses once per level.
constexpr std::size_t k_max_nesting = 64;

// Python int() on the timestamp: a number or a decimal string. Anything else, and a number
// past int64, is dropped rather than crashing the agent the way torchrun does.
std::optional<std::int64_t> to_timestamp(const Json& value) {
  if (value.is_number_unsigned()) {
    auto u = value.get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(INT64_MAX) ? std::optional<std::int64_t>(u)
                                                      : std::nullopt;
  }
  if (value.is_number_integer()) {
    return value.get<std::int64_t>();
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    return d >= -k_int64_span && d < k_int64_span
               ? std::optional<std::int64_t>(static_cast<std::int64_t>(d))
               : std::nullopt;
  }
  if (value.is_string()) {
    auto parsed = util::parse_int(value.get<std::string>());
    if (parsed) {
      return *parsed;
    }
  }
  return std::nullopt;
}

std::string text_of(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// torchrun: extraInfo.py_callstack, falling back to the inner message, then <N/A>.
std::string dict_traceback(const Json& message) {
  auto extra = message.find("extraInfo");
  if (extra != message.end() && extra->is_object()) {
    auto stack = extra->find("py_callstack");
    if (stack != extra->end()) {
      return text_of(*stack);
    }
  }
  auto inner = message.find("message");
  return inner != message.end() ? text_of(*inner) : std::string(k_not_available);
}

std::optional<std::int64_t> dict_timestamp(const Json& message) {
  auto extra = message.find("extraInfo");
  if (extra == message.end() || !extra->is_object()) {
    return std::nullopt;
  }
  auto ts = extra->find("timestamp");
  return ts != extra->end() ? to_timestamp(*ts) : std::nullopt;
}

// The deepest nesting of arrays and objects in `json` (brackets inside strings do not count).
std::size_t nesting_depth(std::string_view json) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : json) {
    if (in_string) {
      in_string = escaped || c != '"';
      escaped = !escaped && c == '\\';
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<ErrorRecord> parse_error_file(std::string_view json) {
  if (util::trim(json).empty()) {
    return bad_file("is empty (the worker may have died while writing it)");
  }
  if (nesting_depth(json) > k_max_nesting) {
    return bad_file("nests arrays or objects deeper than " + std::to_string(k_max_nesting) +
                    " levels");
  }
  Json doc = Json::parse(json.begin(), json.end(), nullptr, false);
  if (doc.is_discarded()) {
    return bad_file("is not valid JSON (truncated or garbage, " + std::to_string(json.size()) +
                    " bytes)");
  }
  if (!doc.is_object()) {
    return bad_file("is not a JSON object");
  }
  auto message = doc.find("message");
  if (message == doc.end()) {
    return bad_file("has no \"message\" field");
  }
  ErrorRecord record;
  record.raw_json = std::string(json);
  if (message->is_object()) {
    record.message_is_dict = true;
    record.traceback = dict_traceback(*message);
    record.timestamp = dict_timestamp(*message);
    return record;
  }
  if (!message->is_string()) {
    return bad_file("has a \"message\" that is neither a string nor an object");
  }
  record.traceback = message->get<std::string>();
  auto ts = doc.find("timestamp");
  record.timestamp = ts != doc.end() ? to_timestamp(*ts) : std::nullopt;
  return record;
}

std::string signal_name(int signal_number) {
  // Linux numbering, names as Python's signal.Signals prints them.
  static constexpr std::array<std::string_view, 32> k_names = {
      "",          "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
      "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
      "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
      "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
  constexpr int k_sigrtmin = 34;
  constexpr int k_sigrtmax = 64;
  if (signal_number > 0 && signal_number < static_cast<int>(k_names.size())) {
    return std::string(k_names[static_cast<std::size_t>(signal_number)]);
  }
  if (signal_number == k_sigrtmin) {
    return "SIGRTMIN";
  }
  if (signal_number == k_sigrtmax) {
    return "SIGRTMAX";
  }
  return "";
}

}  // namespace ddprun::errors
