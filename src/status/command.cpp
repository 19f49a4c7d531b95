// `ddprun status`: CLI11 flags, checked into where to read (the backend's Reader) and with
// which token, then read_snapshot through that Reader and the pure renderers.

#include "ddprun/status/command.hpp"

#include "ddprun/cli/flag_keys.hpp"
#include "ddprun/cli/flags.hpp"
#include "ddprun/config/backends.hpp"
#include "ddprun/config/launch_config.hpp"
#include "ddprun/config/rdzv_conf.hpp"
#include "ddprun/sched/detect.hpp"
#include "ddprun/status/render.hpp"
#include "ddprun/status/snapshot.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/strings.hpp"
#include "ddprun/util/subcommand.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "readers.hpp"

namespace ddprun::status {
namespace {

constexpr double k_ms_per_s = 1000.0;

struct Args {
  std::string backend = "c10d";
  std::string endpoint;
  std::string run_id = k_default_run_id;
  std::string rdzv_conf;
  double timeout_s = k_default_timeout_s;
  bool json = false;
};

/// "c10d: HOST[:PORT], the agents' rendezvous store (port 29400 when none is given); ...".
std::string endpoint_help() {
  std::string out;
  for (const auto& row : config::backend_rows()) {
    out += fmt::format("{}{}: {} (port {} when none is given)", out.empty() ? "" : "; ", row.name,
                       row.endpoint, row.default_port);
  }
  return out;
}

/// A launcher flag `ddprun status` shares: its long spellings and its environment variable come
/// from the launcher's flag table, so the two never drift; `help` says what status does with it.
CLI::Option* add_launcher_flag(CLI::App& app, cli::FlagKey key, std::string& into,
                               std::string help) {
  const auto& spec = cli::flag_spec(key);
  std::string names;
  for (auto spelling : spec.spellings) {
    if (spelling.starts_with("--")) {
      names += (names.empty() ? "" : ",") + std::string(spelling);
    }
  }
  auto* option = app.add_option(names, into, std::move(help));
  if (!spec.env_var.empty()) {
    option->envname(std::string(spec.env_var));
  }
  return option;
}

void build(CLI::App& app, Args& a) {
  add_launcher_flag(app, cli::flag::k_rdzv_backend, a.backend,
                    "the agents' backend: " + config::backend_names() +
                        " (c10d: their rendezvous store, static: node 0's store, etcd-v3: the "
                        "etcd cluster)")
      ->capture_default_str();
  add_launcher_flag(app, cli::flag::k_rdzv_endpoint, a.endpoint, endpoint_help())->required();
  add_launcher_flag(app, cli::flag::k_rdzv_id, a.run_id, "rendezvous run id")
      ->capture_default_str();
  add_launcher_flag(app, cli::flag::k_rdzv_conf, a.rdzv_conf,
                    "the agents' rendezvous settings, of which token_file=PATH is used (the "
                    "token, like DDPRUN_RDZV_TOKEN, authenticates to a store that requires one "
                    "and checks etcd-v3's signed values) and, for etcd-v3, protocol, cacert, "
                    "cert, key, key_prefix, username and password_file, as the agents read them");
  app.add_option("--timeout", a.timeout_s,
                 "seconds for connecting and each read (etcd-v3: each call, per member tried)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", a.json, "print one JSON object instead of the table");
}

/// Where to read, and with which token: the flags, checked.
struct Target {
  config::RdzvBackend backend = config::RdzvBackend::c10d;
  config::Endpoint store;     ///< c10d, static
  config::EtcdSettings etcd;  ///< etcd-v3
  std::optional<std::string> token;
};

Error usage(const std::string& message) { return make_error(ErrorCode::usage, message); }

Result<std::optional<std::string>> load_rdzv_token(const std::map<std::string, std::string>& conf,
                                                   const util::Env& env) {
  std::optional<store::JobTokenDir> job_dir;
  if (auto job = sched::detect_job(env)) {
    job_dir = store::JobTokenDir{job->id, job->submit_dir, job->submit_dir_var};
  }
  return store::load_token(store::decide_token_source(conf, env, job_dir));
}

/// The endpoint flag for `t.backend`: the etcd members, or the store's HOST[:PORT].
Result<void> read_endpoint(const Args& a, const std::map<std::string, std::string>& conf,
                           Target& t) {
  const auto& row = config::row_of(t.backend);
  if (!row.endpoint_is_members) {
    auto ep = config::parse_endpoint(a.endpoint, row.default_port);
    if (!ep) {
      return usage("--rdzv-endpoint " + ep.error().message);
    }
    t.store = *ep;
    return {};
  }
  auto etcd = config::read_etcd_conf(conf);
  if (!etcd) {
    return usage("--rdzv-conf " + util::quoted(a.rdzv_conf) + ": expected " + etcd.error().message);
  }
  t.etcd = std::move(*etcd);
  auto members = config::parse_etcd_members(a.endpoint, t.etcd.tls);
  if (!members) {
    return usage("--rdzv-endpoint " + members.error().message);
  }
  t.etcd.endpoints = std::move(*members);
  return {};
}

Result<Target> read_target(const Args& a, const util::Env& env) {
  Target t;
  auto backend = config::parse_rdzv_backend(a.backend);
  if (!backend) {
    return usage("--rdzv-backend " + backend.error().message);
  }
  t.backend = *backend;
  auto conf = config::read_rdzv_conf(a.rdzv_conf, config::to_string(t.backend));
  if (!conf) {
    return usage("--rdzv-conf " + conf.error().message);
  }
  if (auto ok = read_endpoint(a, conf->pairs, t); !ok) {
    return ok.error();
  }
  auto token = load_rdzv_token(conf->pairs, env);
  if (!token) {
    return usage(token.error().message);
  }
  t.token = std::move(*token);
  return t;
}

Result<std::unique_ptr<Reader>> open_reader(const Target& t, const Args& a) {
  const std::chrono::milliseconds timeout(static_cast<std::int64_t>(a.timeout_s * k_ms_per_s));
  if (config::row_of(t.backend).endpoint_is_members) {
    return open_etcd_reader(t.etcd, a.run_id, t.token, timeout);
  }
  return open_store_reader(t.store, t.token, timeout);
}

int fail(const std::string& message, int status = util::k_exit_failure) {
  std::cerr << "ddprun status: " << message << "\n";
  return status;
}

rdzv::WallMs wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int show(const Args& a, Reader& reader) {
  auto snap = read_snapshot(reader, a.run_id);
  if (!snap) {
    return fail(fmt::format("reading rendezvous '{}' at {}: {}", a.run_id, reader.where(),
                            snap.error().message));
  }
  if (!*snap) {
    return fail(
        fmt::format("no rendezvous '{}' at {} (is --rdzv_id right?)", a.run_id, reader.where()));
  }
  const auto now = wall_now_ms();
  if (a.json) {
    std::cout << render_status_json(**snap, now) << "\n";
  } else {
    std::cout << fmt::format("rendezvous '{}' at {}\n", a.run_id, reader.where())
              << render_status_table(**snap, now);
  }
  return util::k_exit_success;
}

}  // namespace

int status_command(const std::vector<std::string>& args, const util::Env& env) {
  CLI::App app("ddprun status: print the state of a c10d, static or etcd-v3 rendezvous",
               "ddprun status");
  Args a;
  build(app, a);
  if (auto done = util::parse_subcommand(app, "status", args)) {
    return *done;
  }
  auto target = read_target(a, env);
  if (!target) {
    return fail(target.error().message, util::k_exit_usage);
  }
  auto reader = open_reader(*target, a);
  if (!reader) {
    const bool settings = reader.error().code == ErrorCode::config;
    return fail(reader.error().message, settings ? util::k_exit_usage : util::k_exit_failure);
  }
  return show(a, **reader);
}

std::vector<std::string> status_options() {
  CLI::App app;
  Args a;
  build(app, a);
  std::vector<std::string> out;
  auto add = [&out](const CLI::Option& option) {
    for (const auto& name : option.get_lnames()) {
      out.push_back("--" + name);
    }
  };
  for (const auto* option : app.get_options()) {
    if (option != app.get_help_ptr()) {
      add(*option);
    }
  }
  add(*app.get_help_ptr());  // last: the command's own options first
  return out;
}

}  // namespace ddprun::status
