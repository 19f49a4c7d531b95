#include "ddprun/errors/event_log.hpp"

#include "ddprun/errors/failure.hpp"
#include "ddprun/util/strings.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace ddprun::errors {

std::string render_event(double ts, std::string_view name, const EventFields& fields) {
  EventFields line;
  line["ts"] = ts;
  line["event"] = std::string(name);
  if (fields.is_object()) {
    for (const auto& [key, value] : fields.items()) {
      line[key] = value;
    }
  }
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Result<EventLog> EventLog::open(const std::string& path, const util::Clock& clock) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error(ErrorCode::config, util::quoted(path) +
                                             ": expected a file that can be appended to (" +
                                             std::strerror(errno) + ")");
  }
  return EventLog(fd, clock);
}

EventLog::EventLog(EventLog&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), clock_(other.clock_), write_errors_(other.write_errors_) {}

EventLog& EventLog::operator=(EventLog&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = std::exchange(other.fd_, -1);
    clock_ = other.clock_;
    write_errors_ = other.write_errors_;
  }
  return *this;
}

EventLog::~EventLog() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void EventLog::emit(std::string_view name, const EventFields& fields) {
  auto since_epoch = clock_->wall_now().time_since_epoch();
  double ts = std::chrono::duration<double>(since_epoch).count();
  auto line = render_event(ts, name, fields);
  auto n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    ++write_errors_;
  }
}

void EventLog::rendezvous(std::int64_t round, int group_rank, int group_world_size) {
  emit(event::rendezvous,
       {{"round", round}, {"group_rank", group_rank}, {"group_world_size", group_world_size}});
}

void EventLog::workers_started(std::int64_t attempt, const std::vector<int>& pids) {
  emit(event::workers_started, {{"attempt", attempt}, {"pids", pids}});
}

void EventLog::worker_exit(int local_rank, int rank, int pid, int exit_code) {
  EventFields fields = {
      {"local_rank", local_rank}, {"rank", rank}, {"pid", pid}, {"exit_code", exit_code}};
  fields["signal"] = exit_code < 0 ? EventFields(signal_name(-exit_code)) : EventFields();
  emit(event::worker_exit, fields);
}

void EventLog::watchdog_expired(int local_rank, int rank, int pid, std::string_view scope_id,
                                int signal) {
  emit(event::watchdog_expired, {{"local_rank", local_rank},
                                 {"rank", rank},
                                 {"pid", pid},
                                 {"scope_id", std::string(scope_id)},
                                 {"signal", signal_name(signal)}});
}

void EventLog::restart(std::int64_t attempt, int restarts_left, std::string_view reason) {
  emit(event::restart,
       {{"attempt", attempt}, {"restarts_left", restarts_left}, {"reason", std::string(reason)}});
}

void EventLog::stop(std::string_view reason) {
  emit(event::stop, {{"reason", std::string(reason)}});
}

void EventLog::result(std::string_view state, int exit_code) {
  emit(event::result, {{"state", std::string(state)}, {"exit_code", exit_code}});
}

}  // namespace ddprun::errors
