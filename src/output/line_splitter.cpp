#include "ddprun/output/line_splitter.hpp"

#include "ddprun/util/template.hpp"

namespace ddprun::output {

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

std::string render_prefix(std::string_view templ, std::string_view role, int rank, int local_rank,
                          int pid) {
  util::TemplateVars vars{{"role_name", std::string(role)},
                          {"rank", std::to_string(rank)},
                          {"local_rank", std::to_string(local_rank)}};
  if (pid > 0) {
    vars.emplace("pid", std::to_string(pid));
  }
  return util::substitute_vars(templ, vars);
}

}  // namespace ddprun::output
