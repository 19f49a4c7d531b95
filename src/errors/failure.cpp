#include "ddprun/errors/failure.hpp"

#include <time.h>

#include <algorithm>
#include <string>
#include <utility>

namespace ddprun::errors {
namespace {

// The label column of a failure block: "  traceback : " and friends are 14 characters.
constexpr std::string_view k_continuation = "              ";
constexpr std::string_view k_oom_hint =
    "SIGKILL while the kernel's OOM-kill counter rose; the worker likely ran out of memory";

std::string indent_newlines(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') {
      out += "  ";
    }
  }
  return out;
}

std::string generated_message(int exit_code, int pid) {
  if (exit_code >= 0) {
    return std::string(k_no_traceback_message);
  }
  auto name = signal_name(-exit_code);
  return "Signal " + std::to_string(-exit_code) + " (" +
         (name.empty() ? std::string(k_not_available) : name) + ") received by PID " +
         std::to_string(pid);
}

// Python's len(): code points, so UTF-8 continuation bytes do not count.
std::size_t display_width(std::string_view line) {
  return static_cast<std::size_t>(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
  }));
}

std::size_t widest_line(std::string_view text) {
  std::size_t width = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    width = std::max(width, display_width(text.substr(start, end - start)));
    start = end + 1;
  }
  return width;
}

std::string exitcode_suffix(int exit_code) {
  if (exit_code >= 0) {
    return "";
  }
  auto name = signal_name(-exit_code);
  return name.empty() ? "" : " (" + name + ")";
}

// The lines torchrun prints; they alone decide the box width.
std::string compat_block(std::size_t idx, const ProcessFailure& f, std::string_view host,
                         const TimeFormatter& format_time) {
  std::string out = "[" + std::to_string(idx) + "]:\n";
  out += "  time      : " + format_time(f.timestamp) + "\n";
  out += "  host      : " + std::string(host) + "\n";
  out += "  rank      : " + std::to_string(f.rank) +
         " (local_rank: " + std::to_string(f.local_rank) + ")\n";
  out += "  exitcode  : " + std::to_string(f.exit_code) + " (pid: " + std::to_string(f.pid) + ") " +
         exitcode_suffix(f.exit_code) + "\n";
  out += "  error_file: " + (f.error_file.empty() ? std::string(k_not_available) : f.error_file) +
         "\n";
  out += "  traceback : " + f.message;
  return out;
}

std::string labelled_lines(std::string_view label, const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += "\n";
    out += i == 0 ? std::string(label) : std::string(k_continuation);
    out += lines[i];
  }
  return out;
}

std::string ddprun_additions(const ProcessFailure& f) {
  std::string out;
  if (!f.error_file_note.empty()) {
    out += labelled_lines("  note      : ", {f.error_file_note});
  }
  if (!f.reason.empty()) {
    out += labelled_lines("  reason    : ", {f.reason});
  }
  if (f.oom_hint) {
    out += labelled_lines("  hint      : ", {std::string(k_oom_hint)});
  }
  return out + labelled_lines("  stderr    : ", f.stderr_tail);
}

}  // namespace

ProcessFailure make_failure(FailureInput input) {
  ProcessFailure f;
  f.local_rank = input.local_rank;
  f.rank = input.rank;
  f.pid = input.pid;
  f.exit_code = input.exit_code;
  f.oom_hint = input.oom_hint;
  f.timestamp = input.now;
  if (input.record.has_value()) {
    f.error_file = input.error_file;
    const auto& record = *input.record;
    if (record) {
      f.message = record->message_is_dict ? indent_newlines(record->traceback) : record->traceback;
      f.timestamp = record->timestamp.value_or(input.now);
      f.record_json = record->raw_json;
    } else {
      f.error_file_note = record.error().message;
    }
  }
  if (f.message.empty()) {
    f.message = generated_message(f.exit_code, f.pid);
    if (!input.reason.empty()) {
      f.message += ": " + input.reason;
    }
  } else {
    f.reason = std::move(input.reason);
  }
  if (f.record_json.empty()) {
    f.stderr_tail = std::move(input.stderr_tail);
  }
  return f;
}

std::size_t root_cause_index(const std::vector<ProcessFailure>& failures) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < failures.size(); ++i) {
    if (failures[i].timestamp < failures[best].timestamp) {
      best = i;
    }
  }
  return best;
}

std::string format_local_time(std::int64_t epoch_seconds) {
  auto t = static_cast<time_t>(epoch_seconds);
  struct tm parts {};
  localtime_r(&t, &parts);
  char buf[32];
  auto n = strftime(buf, sizeof buf, "%Y-%m-%d_%H:%M:%S", &parts);
  return std::string(buf, n);
}

std::string render_summary(std::string_view name, std::string_view host,
                           const std::vector<ProcessFailure>& failures,
                           const TimeFormatter& format_time) {
  const std::string title = std::string(name) + " FAILED";
  const std::size_t root = root_cause_index(failures);
  std::size_t width = display_width(title);
  std::string root_block;
  std::string others;
  for (std::size_t i = 0; i < failures.size(); ++i) {
    auto block = compat_block(i, failures[i], host, format_time);
    width = std::max(width, widest_line(block));
    block += ddprun_additions(failures[i]);
    if (i == root) {
      root_block = std::move(block);
    } else {
      others += (others.empty() ? "" : "\n") + block;
    }
  }
  width = std::min(width, k_max_summary_width);
  const std::string border(width, '=');
  const std::string section(width, '-');
  return "\n" + border + "\n" + title + "\n" + section + "\nFailures:\n" +
         (others.empty() ? std::string("  <NO_OTHER_FAILURES>") : others) + "\n" + section +
         "\nRoot Cause (first observed failure):\n" + root_block + "\n" + border;
}

}  // namespace ddprun::errors
