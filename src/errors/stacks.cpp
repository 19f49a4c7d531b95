#include "ddprun/errors/stacks.hpp"

#include "ddprun/util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <regex>

namespace ddprun::errors {

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    out.push_back(line);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  return out;
}

int to_int(std::string_view s) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && ptr == s.data() + s.size() ? v : 0;
}

/// "x.py:12" -> {x.py, 12}; "libc.so.6" -> {libc.so.6, 0}.
Frame file_and_line(std::string function, std::string_view where) {
  auto colon = where.rfind(':');
  if (colon != std::string_view::npos && to_int(where.substr(colon + 1)) > 0) {
    return Frame{std::move(function), std::string(where.substr(0, colon)),
                 to_int(where.substr(colon + 1))};
  }
  return Frame{std::move(function), std::string(where), 0};
}

ThreadStack& current(std::vector<ThreadStack>& threads) {
  if (threads.empty()) {
    threads.push_back({});
  }
  return threads.back();
}

/// `  File "x.py", line 12 in f`
bool parse_faulthandler_frame(std::string_view line, Frame& out) {
  constexpr std::string_view head = "File \"";
  line = util::trim(line);
  if (!line.starts_with(head)) {
    return false;
  }
  line.remove_prefix(head.size());
  auto quote = line.find("\", line ");
  if (quote == std::string_view::npos) {
    return false;
  }
  auto rest = line.substr(quote + 8);
  auto in = rest.find(" in ");
  out.file = std::string(line.substr(0, quote));
  out.line = to_int(rest.substr(0, in));
  out.function = in == std::string_view::npos ? "???" : std::string(rest.substr(in + 4));
  return true;
}

bool is_faulthandler_header(std::string_view line) {
  return line.ends_with("(most recent call first):");
}

/// "#3  0x000055d1 in f (a=1) at x.c:5", "#0  f () from /lib/libc.so.6", "#1  0x7f - 1 f".
Frame parse_native_frame(std::string_view line) {
  line = util::trim(line.substr(line.find_first_of(" \t")));
  if (line.starts_with("0x")) {
    auto sp = line.find(' ');
    line = sp == std::string_view::npos ? std::string_view{} : util::trim(line.substr(sp));
  }
  for (std::string_view skip : {"in ", "- 1"}) {  // gdb's "in", eu-stack's "- 1" (a return)
    if (line.starts_with(skip)) {
      line = util::trim(line.substr(skip.size()));
    }
  }
  auto paren = line.find(" (");
  std::string function(util::trim(line.substr(0, paren)));
  if (function.empty()) {
    function = "??";
  }
  if (auto at = line.rfind(") at ");
      at != std::string_view::npos && paren != std::string_view::npos) {
    return file_and_line(std::move(function), util::trim(line.substr(at + 5)));
  }
  return Frame{std::move(function), "", 0};
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string render_frame(const Frame& f) {
  if (f.file.empty()) {
    return f.function;
  }
  auto where = basename_of(f.file);
  if (f.line > 0) {
    where += ":" + std::to_string(f.line);
  }
  return f.function + " (" + where + ")";
}

const ThreadStack* representative(const RankStack& stack) {
  for (const auto& t : stack.threads) {
    if (t.main && !t.frames.empty()) {
      return &t;
    }
  }
  for (const auto& t : stack.threads) {
    if (!t.frames.empty()) {
      return &t;
    }
  }
  return nullptr;
}

std::string_view state_name(char state) {
  switch (state) {
    case 'R':
      return "running";
    case 'S':
      return "sleeping";
    case 'D':
      return "uninterruptible (disk) sleep";
    case 'T':
      return "stopped";
    case 't':
      return "stopped by a tracer";
    case 'Z':
      return "zombie";
    default:
      return "";
  }
}

}  // namespace

std::vector<ThreadStack> parse_faulthandler(std::string_view text) {
  std::vector<ThreadStack> threads;
  for (auto line : split_lines(text)) {
    Frame frame;
    if (is_faulthandler_header(line)) {
      threads.push_back({std::string(line.substr(0, line.find(" (most recent"))), {}, false});
    } else if (parse_faulthandler_frame(line, frame)) {
      current(threads).frames.push_back(std::move(frame));
    }
  }
  if (!threads.empty()) {
    threads.back().main = true;  // faulthandler lists the newest thread first
  }
  return threads;
}

std::vector<ThreadStack> parse_py_spy(std::string_view text) {
  std::vector<ThreadStack> threads;
  for (auto line : split_lines(text)) {
    if (line.starts_with("Thread ")) {
      threads.push_back({std::string(line), {}, line.find("\"MainThread\"") != line.npos});
      continue;
    }
    // Frames are indented by 4; "Arguments:", "Locals:" and their values by more.
    if (threads.empty() || !line.starts_with("    ") || line.starts_with("     ")) {
      continue;
    }
    line = util::trim(line);
    auto open = line.rfind(" (");
    if (open == std::string_view::npos || !line.ends_with(')')) {
      threads.back().frames.push_back(Frame{std::string(line), "", 0});
      continue;
    }
    auto where = line.substr(open + 2, line.size() - open - 3);
    threads.back().frames.push_back(file_and_line(std::string(line.substr(0, open)), where));
  }
  return threads;
}

std::vector<ThreadStack> parse_native(std::string_view text) {
  std::vector<ThreadStack> threads;
  bool seen_tid = false;
  for (auto line : split_lines(text)) {
    if (line.starts_with("Thread ") && line.ends_with(":")) {
      threads.push_back({std::string(line), {}, line.starts_with("Thread 1 ")});
    } else if (line.starts_with("TID ") && line.ends_with(":")) {
      threads.push_back({std::string(line.substr(0, line.size() - 1)), {}, !seen_tid});
      seen_tid = true;
    } else if (line.starts_with("#") && line.size() > 1 && line[1] >= '0' && line[1] <= '9') {
      current(threads).frames.push_back(parse_native_frame(line));
    }
  }
  return threads;
}

std::string render_proc_state(std::string_view stat, std::string_view wchan) {
  std::string out = "no stack";
  auto close = stat.rfind(')');
  if (close != std::string_view::npos && close + 2 < stat.size()) {
    const char state = stat[close + 2];
    out = std::string("state ") + state;
    if (auto name = state_name(state); !name.empty()) {
      out += " (" + std::string(name) + ")";
    }
  }
  wchan = util::trim(wchan);
  if (!wchan.empty() && wchan != "0") {
    out += ", wchan " + std::string(wchan);
  }
  return out;
}

std::string render_innermost(const RankStack& stack, std::size_t depth) {
  const ThreadStack* thread = representative(stack);
  if (thread == nullptr) {
    return stack.note.empty() ? "no stack" : stack.note;
  }
  std::string out;
  const auto n = std::min(depth, thread->frames.size());
  for (std::size_t i = 0; i < n; ++i) {
    out += (i == 0 ? "" : " <- ") + render_frame(thread->frames[i]);
  }
  return out;
}

bool is_library_frame(const Frame& f) {
  static const std::regex k_stdlib(R"(/lib/python3(\.\d+)?/)");
  return f.file.empty() || f.file.front() == '<' ||
         f.file.find("/site-packages/") != std::string::npos ||
         f.file.find("/dist-packages/") != std::string::npos || std::regex_search(f.file, k_stdlib);
}

std::string render_rank_line(const RankStack& stack) {
  const ThreadStack* thread = representative(stack);
  if (thread == nullptr) {
    return stack.note.empty() ? "no stack" : stack.note;
  }
  const auto& frames = thread->frames;
  auto user = std::find_if(frames.begin() + 1, frames.end(),
                           [](const Frame& f) { return !is_library_frame(f); });
  if (user == frames.end() || !is_library_frame(frames.front())) {
    return render_innermost(stack, k_report_depth);  // no user frame, or the innermost is one
  }
  return render_frame(frames.front()) + " <- " + render_frame(*user);
}

std::string render_rank_list(std::vector<int> ranks) {
  return util::render_ranges(std::move(ranks));
}

std::vector<StackGroup> group_stacks(const std::vector<RankStack>& stacks) {
  std::map<std::string, std::vector<int>> by_frames;
  for (const auto& s : stacks) {
    by_frames[render_rank_line(s)].push_back(s.rank);
  }
  std::vector<StackGroup> groups;
  for (auto& [frames, ranks] : by_frames) {
    std::sort(ranks.begin(), ranks.end());
    groups.push_back(StackGroup{std::move(ranks), frames});
  }
  order_stack_groups(groups);
  return groups;
}

void order_stack_groups(std::vector<StackGroup>& groups) {
  std::sort(groups.begin(), groups.end(), [](const StackGroup& a, const StackGroup& b) {
    if (a.ranks.size() != b.ranks.size()) {
      return a.ranks.size() < b.ranks.size();
    }
    const int first_a = a.ranks.empty() ? -1 : a.ranks.front();
    const int first_b = b.ranks.empty() ? -1 : b.ranks.front();
    return first_a < first_b;
  });
}

std::vector<std::string> render_stack_report(const std::vector<StackGroup>& groups) {
  std::vector<std::string> lines;
  lines.reserve(groups.size());
  for (const auto& g : groups) {
    lines.push_back((g.ranks.size() == 1 ? "rank " : "ranks ") + render_rank_list(g.ranks) + ": " +
                    g.frames);
  }
  return lines;
}

}  // namespace ddprun::errors
