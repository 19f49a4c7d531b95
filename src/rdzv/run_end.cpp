#include "ddprun/rdzv/run_end.hpp"

#include <nlohmann/json.hpp>

#include <ctime>

namespace ddprun::rdzv {

namespace {

using json = nlohmann::json;

constexpr WallMs k_ms_per_second = 1000;

std::string seconds_text(std::chrono::milliseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

/// " (it was dropped at 12:00:15: no keep-alive of it reached the store for 15s)", or "".
std::string dropped_text(std::optional<WallMs> dropped, const RdzvSettings& settings) {
  if (!dropped) {
    return "";
  }
  return " (it was dropped at " + render_clock(*dropped) +
         ": no keep-alive of it reached the store for " + seconds_text(keep_alive_bound(settings)) +
         ")";
}

std::string at_text(WallMs at) { return at > 0 ? " at " + render_clock(at) : std::string(); }

}  // namespace

std::optional<RunEnd> run_end_of(const RoundHeader& h) {
  if (!h.closed) {
    return std::nullopt;
  }
  return RunEnd{h.closed_at, h.finished && h.stop_reason.empty(), h.stop_reason};
}

std::string encode_run_end(const RunEnd& end) {
  return json{{"at", end.at}, {"finished", end.finished}, {"reason", end.reason}}.dump();
}

Result<RunEnd> decode_run_end(std::string_view text) {
  try {
    const auto j = json::parse(text);
    return RunEnd{j.at("at").get<WallMs>(), j.at("finished").get<bool>(),
                  j.at("reason").get<std::string>()};
  } catch (const std::exception& e) {
    return make_error(ErrorCode::protocol,
                      std::string("the run's end record is not one: ") + e.what());
  }
}

std::string render_clock(WallMs at) {
  const std::time_t t = static_cast<std::time_t>(at / k_ms_per_second);
  std::tm parts{};
  localtime_r(&t, &parts);
  char buf[16] = {};
  const auto n = std::strftime(buf, sizeof buf, "%H:%M:%S", &parts);
  return std::string(buf, n);
}

std::optional<WallMs> dropped_at(std::optional<WallMs> last_beat, WallMs now,
                                 const RdzvSettings& settings) {
  const WallMs bound = keep_alive_bound(settings).count();
  if (!last_beat || now - *last_beat <= bound) {
    return std::nullopt;
  }
  return *last_beat + bound;
}

Error render_run_end(const RunEnd& end, const RdzvSettings& settings,
                     std::optional<WallMs> dropped) {
  const std::string head = "rendezvous " + settings.run_id;
  if (!end.reason.empty()) {
    return make_error(ErrorCode::given_up, head + " stopped" + at_text(end.at) +
                                               dropped_text(dropped, settings) + ": " + end.reason);
  }
  if (end.finished) {
    return make_error(ErrorCode::finished_without, head + ": the job finished" + at_text(end.at) +
                                                       " without this node" +
                                                       dropped_text(dropped, settings));
  }
  return make_error(ErrorCode::closed, head + ": the job ended without success" + at_text(end.at) +
                                           " (its workers failed, or it was shut down), without "
                                           "this node" +
                                           dropped_text(dropped, settings));
}

Error render_store_gone(const Error& e, const RdzvSettings& settings,
                        std::optional<WallMs> dropped) {
  const bool refused = e.message.find("refused") != std::string::npos;
  const std::string why =
      refused ? "its host refuses connections: the agent that hosted the store has exited, "
                "because the job ended or because that agent failed"
              : "its host does not answer: it is down or cut off from this node, or the job "
                "ended and its agent exited";
  return make_error(
      ErrorCode::closed,
      "rendezvous " + settings.run_id + ": the rendezvous store is gone (" + why + ")" +
          dropped_text(dropped, settings) +
          "; this node cannot tell which, and starts no new run (last error: " + e.message + ")");
}

Error render_run_gone(const RdzvSettings& settings, std::optional<WallMs> dropped) {
  return make_error(ErrorCode::closed,
                    "rendezvous " + settings.run_id +
                        ": the run this node was part of is gone from the store, and no record "
                        "says how it ended (the job ended and its record expired, or the store "
                        "was wiped)" +
                        dropped_text(dropped, settings) + "; this node does not start a new one");
}

}  // namespace ddprun::rdzv
