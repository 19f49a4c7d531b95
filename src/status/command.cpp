// `ddprun status`: CLI11 flags, SyncClient reads of the header, the round's nodes, their
// heartbeats and their workers' last progress, then the pure renderers.

#include "ddprun/status/command.hpp"

#include "ddprun/config/launch_config.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/status/render.hpp"
#include "ddprun/store/client.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/batches.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/subcommand.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <unistd.h>  // environ

#include <algorithm>
#include <chrono>
#include <iostream>
#include <optional>

namespace ddprun::status {
namespace {

constexpr double k_ms_per_s = 1000.0;

struct Args {
  std::string endpoint;
  std::string run_id = k_default_run_id;
  std::string rdzv_conf;
  double timeout_s = k_default_timeout_s;
  bool json = false;
};

void build(CLI::App& app, Args& a) {
  app.add_option("--rdzv-endpoint,--rdzv_endpoint", a.endpoint,
                 "rendezvous store HOST[:PORT] (port 29400 when none is given)")
      ->required()
      ->envname("PET_RDZV_ENDPOINT");
  app.add_option("--rdzv-id,--rdzv_id", a.run_id, "rendezvous run id")
      ->capture_default_str()
      ->envname("PET_RDZV_ID");
  app.add_option("--rdzv-conf,--rdzv_conf", a.rdzv_conf,
                 "the agents' rendezvous settings; only token_file=PATH is used (the token, like "
                 "DDPRUN_RDZV_TOKEN, authenticates to a store that requires one)")
      ->envname("PET_RDZV_CONF");
  app.add_option("--timeout", a.timeout_s, "seconds for connecting and each read")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", a.json, "print one JSON object instead of the table");
}

int fail(const std::string& message) {
  std::cerr << "ddprun status: " << message << "\n";
  return util::k_exit_failure;
}

rdzv::WallMs wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Values of `keys` ("" where missing), in requests of rdzv::k_keys_per_request.
Result<std::vector<std::string>> read_many(store::SyncClient& client,
                                           std::vector<std::string> keys) {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& batch : util::batches(std::move(keys), rdzv::k_keys_per_request)) {
    auto part = client.multi_get_now(batch);
    if (!part) {
      return part.error();
    }
    std::move(part->begin(), part->end(), std::back_inserter(out));
  }
  return out;
}

/// The round's nodes: the members of a complete round, else whoever holds a slot.
Result<std::vector<rdzv::NodeDesc>> read_nodes(store::SyncClient& client, const std::string& id,
                                               const rdzv::RoundHeader& h) {
  if (h.phase == rdzv::Phase::complete) {
    auto text = read_many(client, {rdzv::members_key(id, h.round)});
    if (!text) {
      return text.error();
    }
    return text->at(0).empty() ? std::vector<rdzv::NodeDesc>{} : rdzv::decode_members(text->at(0));
  }
  auto slots = client.add(rdzv::slots_key(id, h.round), 0);
  if (!slots) {
    return slots.error();
  }
  auto texts = read_many(client, rdzv::slot_keys(id, h.round, static_cast<int>(*slots)));
  if (!texts) {
    return texts.error();
  }
  std::vector<rdzv::NodeDesc> nodes;
  for (const auto& t : *texts) {
    if (auto n = rdzv::decode_slot(t); n && !rdzv::is_withdrawn(t)) {
      nodes.push_back(std::move(*n));
    }
  }
  std::sort(nodes.begin(), nodes.end(), rdzv::rank_before);
  return nodes;
}

/// Each node's heartbeat and last progress, in one pass over 2 keys per node.
Result<void> read_times(store::SyncClient& client, const std::string& id, Snapshot& snap) {
  std::vector<std::string> keys;
  keys.reserve(2 * snap.nodes.size());
  for (const auto& n : snap.nodes) {
    keys.push_back(rdzv::heartbeat_key(id, n.id()));
    keys.push_back(rdzv::progress_key(id, n.id()));
  }
  auto texts = read_many(client, std::move(keys));
  if (!texts) {
    return texts.error();
  }
  for (std::size_t i = 0; i < snap.nodes.size(); ++i) {
    const std::string node = snap.nodes[i].id();
    if (auto ms = rdzv::parse_heartbeat((*texts)[2 * i])) {
      snap.heartbeats[node] = *ms;
    }
    if (auto ms = rdzv::parse_progress_value((*texts)[2 * i + 1])) {
      snap.progress[node] = *ms;
    }
  }
  return {};
}

/// Header, nodes, their heartbeats and progress; an empty optional when the run id has no
/// state.
Result<std::optional<Snapshot>> read_snapshot(store::SyncClient& client, const std::string& id) {
  auto text = read_many(client, {rdzv::state_key(id)});
  if (!text) {
    return text.error();
  }
  if (text->at(0).empty()) {
    return std::optional<Snapshot>();
  }
  auto header = rdzv::decode_header(text->at(0));
  if (!header) {
    return header.error();
  }
  Snapshot snap{*header, {}, {}, {}};
  auto nodes = read_nodes(client, id, snap.header);
  if (!nodes) {
    return nodes.error();
  }
  snap.nodes = std::move(*nodes);
  if (auto times = read_times(client, id, snap); !times) {
    return times.error();
  }
  return std::optional<Snapshot>(std::move(snap));
}

int show(const Args& a, const config::Endpoint& ep, const std::optional<std::string>& token) {
  store::ClientOptions opts;
  store::use_rdzv_auth(opts, token);
  opts.dialect = store::Dialect::d2;  // MULTI_GET: a ddprun store speaks every dialect
  opts.host = ep.host;
  opts.port = static_cast<std::uint16_t>(ep.port);
  opts.connect_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * k_ms_per_s));
  opts.op_timeout = opts.connect_timeout;
  const std::string where = fmt::format("{}:{}", ep.host, ep.port);
  store::SyncClient client(opts);
  if (auto up = client.connect(); !up) {
    return fail(
        fmt::format("cannot reach the rendezvous store at {}: {}", where, up.error().message));
  }
  auto snap = read_snapshot(client, a.run_id);
  if (!snap) {
    return fail(
        fmt::format("reading rendezvous '{}' at {}: {}", a.run_id, where, snap.error().message));
  }
  if (!*snap) {
    return fail(fmt::format("no rendezvous '{}' at {} (is --rdzv_id right?)", a.run_id, where));
  }
  const auto now = wall_now_ms();
  if (a.json) {
    std::cout << render_status_json(**snap, now) << "\n";
  } else {
    std::cout << fmt::format("rendezvous '{}' at {}\n", a.run_id, where)
              << render_status_table(**snap, now);
  }
  return util::k_exit_success;
}

}  // namespace

int status_command(const std::vector<std::string>& args) {
  CLI::App app("ddprun status: print a c10d rendezvous' state", "ddprun status");
  Args a;
  build(app, a);
  if (auto done = util::parse_subcommand(app, "status", args)) {
    return *done;
  }
  auto ep = config::parse_endpoint(a.endpoint, k_default_rdzv_port);
  if (!ep) {
    std::cerr << "ddprun status: --rdzv-endpoint: " << ep.error().message << "\n";
    return util::k_exit_usage;
  }
  auto conf = config::parse_rdzv_conf(a.rdzv_conf);
  if (!conf) {
    std::cerr << "ddprun status: --rdzv-conf: " << conf.error().message << "\n";
    return util::k_exit_usage;
  }
  const auto env = util::Env::from_environ(environ);
  std::optional<store::JobTokenDir> job_dir;
  if (auto job = sched::detect_job(env)) {
    job_dir = store::JobTokenDir{job->id, job->submit_dir, job->submit_dir_var};
  }
  auto token = store::load_token(store::decide_token_source(*conf, env, job_dir));
  if (!token) {
    std::cerr << "ddprun status: " << token.error().message << "\n";
    return util::k_exit_usage;
  }
  return show(a, *ep, *token);
}

}  // namespace ddprun::status
