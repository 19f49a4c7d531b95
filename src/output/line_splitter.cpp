#include "ddprun/output/line_splitter.hpp"

#include <cctype>
#include <map>

namespace ddprun::output {
namespace {

bool is_ident_start(char c) { return c == '_' || std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_ident_char(char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)) != 0; }

}  // namespace

// Completes the pending partial line from the front of `chunk`, if there is one.
void LineSplitter::take_pending(std::string_view& chunk, const OnLine& on_line) {
  while (!partial_.empty() && !chunk.empty()) {
    auto room = max_line_ - partial_.size();
    auto nl = chunk.substr(0, room + 1).find('\n');
    if (nl != std::string_view::npos) {
      partial_.append(chunk.substr(0, nl));
      chunk.remove_prefix(nl + 1);
      on_line(partial_);
      partial_.clear();
      return;
    }
    auto take = std::min(room, chunk.size());
    partial_.append(chunk.substr(0, take));
    chunk.remove_prefix(take);
    if (partial_.size() == max_line_) {
      on_line(partial_);
      partial_.clear();
    }
  }
}

void LineSplitter::feed(std::string_view chunk, const OnLine& on_line) {
  take_pending(chunk, on_line);
  while (!chunk.empty()) {
    auto nl = chunk.substr(0, max_line_ + 1).find('\n');
    if (nl != std::string_view::npos) {
      on_line(chunk.substr(0, nl));
      chunk.remove_prefix(nl + 1);
    } else if (chunk.size() >= max_line_) {
      on_line(chunk.substr(0, max_line_));
      chunk.remove_prefix(max_line_);
    } else {
      partial_.assign(chunk);
      return;
    }
  }
}

void LineSplitter::finish(const OnLine& on_line) {
  if (!partial_.empty()) {
    on_line(partial_);
    partial_.clear();
  }
}

std::string render_prefix(std::string_view templ, std::string_view role, int rank, int local_rank) {
  const std::map<std::string_view, std::string> values = {
      {"role_name", std::string(role)},
      {"rank", std::to_string(rank)},
      {"local_rank", std::to_string(local_rank)}};
  std::string out;
  std::size_t i = 0;
  while (i < templ.size()) {
    if (templ[i] != '$' || i + 1 >= templ.size()) {
      out += templ[i++];
      continue;
    }
    if (templ[i + 1] == '$') {
      out += '$';
      i += 2;
      continue;
    }
    std::size_t start = i + 1;
    std::size_t end = start;
    bool braced = templ[start] == '{';
    if (braced) {
      ++start;
      end = templ.find('}', start);
    } else {
      while (end < templ.size() && is_ident_char(templ[end])) {
        ++end;
      }
    }
    auto name =
        end == std::string_view::npos ? std::string_view{} : templ.substr(start, end - start);
    auto it = values.find(name);
    if (name.empty() || !is_ident_start(name[0]) || it == values.end()) {
      out += templ[i++];
      continue;
    }
    out += it->second;
    i = end + (braced ? 1 : 0);
  }
  return out;
}

}  // namespace ddprun::output
