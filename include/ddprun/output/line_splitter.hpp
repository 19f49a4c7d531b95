#pragma once
// Bytes -> lines for the console copy of worker output, and the per-line prefix.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace ddprun::output {

/// Longest line passed on in one piece; longer lines are split, never dropped.
inline constexpr std::size_t k_max_line_bytes = 64 * 1024;
/// torchrun's tee prefix when TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE is unset.
inline constexpr std::string_view k_default_prefix_template = "[${role_name}${local_rank}]:";
inline constexpr std::string_view k_prefix_template_env = "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE";

/// Turns chunks into lines (without the '\n'). A line longer than max_line is handed on in
/// max_line pieces; finish() hands on a partial last line. Views are valid only during
/// the callback.
class LineSplitter {
 public:
  using OnLine = std::function<void(std::string_view)>;
  explicit LineSplitter(std::size_t max_line = k_max_line_bytes) : max_line_(max_line) {}

  void feed(std::string_view chunk, const OnLine& on_line);
  void finish(const OnLine& on_line);
  std::size_t pending_bytes() const { return partial_.size(); }

 private:
  void take_pending(std::string_view& chunk, const OnLine& on_line);
  std::size_t max_line_;
  std::string partial_;
};

/// Python string.Template(template).safe_substitute(role_name=, rank=, local_rank=, pid=):
/// $name and ${name} are replaced, $$ becomes $, anything else is left as written. `pid` is the
/// worker's (torch >= 2.9 knows ${pid}); 0: not known, ${pid} stays as written.
std::string render_prefix(std::string_view templ, std::string_view role, int rank, int local_rank,
                          int pid = 0);

}  // namespace ddprun::output
