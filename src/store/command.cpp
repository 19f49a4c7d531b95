// `ddprun store` subcommands (CLI11). serve runs a Server on a single io_context until SIGINT
// or SIGTERM; the client subcommands use SyncClient.

#include "ddprun/store/command.hpp"

#include "ddprun/sched/detect.hpp"
#include "ddprun/store/client.hpp"
#include "ddprun/store/server.hpp"
#include "ddprun/store/token.hpp"
#include "ddprun/util/default_ports.hpp"
#include "ddprun/util/env.hpp"
#include "ddprun/util/exit_status.hpp"
#include "ddprun/util/strings.hpp"
#include "ddprun/util/subcommand.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

namespace ddprun::store {
namespace {

constexpr double k_default_timeout_s = 10.0;
constexpr auto k_default_port = static_cast<std::uint16_t>(util::k_default_c10d_port);
constexpr std::uint16_t k_max_port = 65535;
constexpr double k_ms_per_s = 1000.0;
/// --frame-timeout above a day is surely a mistake (0 disables the timeout).
constexpr double k_max_frame_timeout_s = 86400.0;

struct Args {
  std::string host;
  std::uint16_t port = k_default_port;
  std::size_t max_connections = k_max_connections;
  std::size_t max_memory_bytes = k_max_memory_bytes;
  std::size_t max_parked_waits = k_max_parked_waits;
  double frame_timeout_s = std::chrono::duration<double>(k_frame_timeout).count();
  std::string legacy_dialect = "auto";
  std::string endpoint = "127.0.0.1:" + std::to_string(k_default_port);
  std::string dialect = "auto";
  double timeout_s = k_default_timeout_s;
  std::string token_file;
  std::string key;
  std::string value;
  std::int64_t delta = 0;
};

Result<Dialect> parse_legacy_dialect(const std::string& text) {
  if (text == "auto") {
    return Dialect::legacy_auto;
  }
  if (text == "1.x-2.0") {
    return Dialect::d0;
  }
  if (text == "2.1") {
    return Dialect::d1;
  }
  return make_error(ErrorCode::usage,
                    fmt::format("--legacy-dialect {}: expected auto, 1.x-2.0 or 2.1", text));
}

/// --dialect of the client verbs: nullopt = auto (detect the server's).
Result<std::optional<Dialect>> parse_client_dialect(const std::string& text) {
  if (text == "auto") {
    return std::optional<Dialect>();
  }
  if (text == "2.2+") {
    return std::optional<Dialect>(Dialect::d2);
  }
  auto legacy = parse_legacy_dialect(text);
  if (!legacy || *legacy == Dialect::legacy_auto) {
    return make_error(ErrorCode::usage,
                      fmt::format("--dialect {}: expected auto, 1.x-2.0, 2.1 or 2.2+", text));
  }
  return std::optional<Dialect>(*legacy);
}

int serve(const Args& a) {
  const auto dialect = parse_legacy_dialect(a.legacy_dialect);
  if (!dialect) {
    std::cerr << "ddprun store: " << dialect.error().message << "\n";
    return util::k_exit_usage;
  }
  asio::io_context io(1);
  ServerOptions opts;
  opts.max_connections = a.max_connections;
  opts.max_memory_bytes = a.max_memory_bytes;
  opts.max_parked_waits = a.max_parked_waits;
  opts.frame_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(a.frame_timeout_s * k_ms_per_s));
  opts.legacy_dialect = *dialect;
  Server server(io, opts);
  // Handlers go in before listen(): a client can connect (and a supervisor signal) at once.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (!ec) {
      spdlog::info("store: signal {} received, stopping", signo);
    }
    server.stop();
    io.stop();
  });
  if (auto r = server.listen(a.host, a.port); !r) {
    std::cerr << "ddprun store: " << r.error().message << "\n";
    return util::k_exit_failure;
  }
  spdlog::info(
      "store: serving on {}:{} (connection limit {}, memory cap {} bytes, frame timeout {} s)",
      a.host.empty() ? "[::]" : a.host, server.port(), server.connection_limit(),
      opts.max_memory_bytes, a.frame_timeout_s);
  io.run();
  return util::k_exit_success;
}

int fail(const Error& e) {
  std::cerr << "ddprun store: " << e.message << "\n";
  return util::k_exit_failure;
}

/// A server without LIST_KEYS (PyTorch's before ~2.10) closes the connection at the unknown
/// command, or lacks it in its dialect (before 2.2): say so instead of the socket's error.
Error unlisted(const Error& e, const ClientOptions& o) {
  const bool missing =
      e.code == ErrorCode::closed ||
      (e.code == ErrorCode::usage && e.message.find("LIST_KEYS") != std::string::npos);
  if (!missing) {
    return e;
  }
  return make_error(ErrorCode::protocol,
                    fmt::format("the server at {}:{} does not support listing keys (LIST_KEYS: "
                                "ddprun's store and PyTorch's own TCPStore server from ~2.10 "
                                "answer it); read known keys with `ddprun store get KEY`",
                                o.host, o.port));
}

Result<ClientOptions> client_options(const Args& a) {
  auto ep = parse_endpoint(a.endpoint);
  if (!ep) {
    return ep.error();
  }
  auto dialect = parse_client_dialect(a.dialect);
  if (!dialect) {
    return dialect.error();
  }
  ClientOptions o;
  o.host = ep->first;
  o.port = ep->second;
  o.detect_dialect = !dialect->has_value();
  o.dialect = dialect->value_or(Dialect::d0);
  o.connect_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * k_ms_per_s));
  o.op_timeout = o.connect_timeout;
  return o;
}

/// The agents' keys (under ddprun/) need the rendezvous token when their store has one, and
/// the key list hides them without it: those verbs take the token from --token-file,
/// DDPRUN_RDZV_TOKEN or the job's token file, as the agents do, and fail at once (probe) when the
/// store wants one they lack. Other keys never authenticate, so a token in the environment does
/// not get in the way of a plain store; a --token-file that cannot be read is an error anyway.
Result<void> use_token_if_needed(const std::string& verb, const Args& a, const util::Env& env,
                                 ClientOptions& o) {
  const bool listing = verb == "keys";
  const bool needed = listing || is_protected_key(a.key);
  if (!needed && a.token_file.empty()) {
    return {};
  }
  std::map<std::string, std::string> conf;
  if (!a.token_file.empty()) {
    conf.emplace("token_file", a.token_file);
  }
  std::optional<JobTokenDir> job_dir;
  if (auto job = sched::detect_job(env)) {
    job_dir = JobTokenDir{job->id, job->submit_dir, job->submit_dir_var};
  }
  auto token = load_token(decide_token_source(conf, env, job_dir));
  if (!token) {
    return token.error();
  }
  if (!needed || (listing && !*token)) {
    return {};  // a worker key, or the unprotected keys only
  }
  use_rdzv_auth(o, *token);
  return {};
}

int run_client(const std::string& verb, const Args& a, const util::Env& env) {
  auto opts = client_options(a);
  if (opts) {
    if (auto auth = use_token_if_needed(verb, a, env, *opts); !auth) {
      opts = auth.error();
    }
  }
  if (!opts) {
    std::cerr << "ddprun store: " << opts.error().message << "\n";
    return util::k_exit_usage;
  }
  SyncClient c(*opts);
  if (verb == "set") {
    auto r = c.set_confirmed(a.key, a.value);
    return r ? util::k_exit_success : fail(r.error());
  }
  if (verb == "add") {
    auto r = c.add(a.key, a.delta);
    if (!r) {
      return fail(r.error());
    }
    std::cout << *r << "\n";
    return util::k_exit_success;
  }
  if (verb == "del") {
    auto r = c.delete_key(a.key);
    if (!r) {
      return fail(r.error());
    }
    std::cout << (*r ? "deleted" : "absent") << "\n";
    return util::k_exit_success;
  }
  if (verb == "keys") {
    auto r = c.list_keys();
    if (!r) {
      return fail(unlisted(r.error(), *opts));
    }
    std::sort(r->begin(), r->end());
    for (const auto& k : *r) {
      std::cout << k << "\n";
    }
    return util::k_exit_success;
  }
  auto present = c.check({a.key});  // get: never block on a missing key
  if (!present) {
    return fail(present.error());
  }
  if (!*present) {
    return fail(make_error(ErrorCode::io, fmt::format("key {} not found", util::quoted(a.key))));
  }
  auto r = c.get(a.key);
  if (!r) {
    return fail(r.error());
  }
  std::cout << *r << "\n";
  return util::k_exit_success;
}

void add_client_options(CLI::App* sub, Args& a) {
  sub->add_option("--endpoint", a.endpoint, "store address HOST:PORT")->capture_default_str();
  sub->add_option("--timeout", a.timeout_s, "seconds for connect and each operation")
      ->capture_default_str();
  sub->add_option("--dialect", a.dialect,
                  fmt::format("the server's PyTorch protocol: auto (probe it, each probe at most "
                              "{} s), 1.x-2.0, 2.1 or 2.2+ (VALIDATE era)",
                              std::chrono::duration<double>(k_dialect_probe_timeout).count()))
      ->capture_default_str();
  sub->add_option("--token-file", a.token_file,
                  "the rendezvous token, for keys under ddprun/ (default: DDPRUN_RDZV_TOKEN, "
                  "then the Slurm/PBS job's .ddprun/token)");
}

void build(CLI::App& app, Args& a) {
  app.require_subcommand(1);
  auto* serve_cmd = app.add_subcommand("serve", "run a standalone store server");
  serve_cmd->add_option("--host", a.host, "bind address (empty = all, dual-stack)");
  serve_cmd->add_option("--port", a.port, "port (0 = any)")->capture_default_str();
  serve_cmd->add_option("--max-connections", a.max_connections)->capture_default_str();
  serve_cmd
      ->add_option("--max-memory-bytes", a.max_memory_bytes,
                   "cap on stored keys and values plus buffered requests and replies; a "
                   "connection that would pass it is closed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-parked-waits", a.max_parked_waits,
                   "blocked WAIT/BARRIER requests over all connections")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve_cmd
      ->add_option("--frame-timeout", a.frame_timeout_s,
                   "seconds a connection may hold part of a request (0 = no limit)")
      ->check(CLI::Range(0.0, k_max_frame_timeout_s))
      ->capture_default_str();
  serve_cmd->add_option("--legacy-dialect", a.legacy_dialect, "auto, 1.x-2.0 or 2.1")
      ->capture_default_str();
  auto* get = app.add_subcommand("get", "print a key's value");
  get->add_option("KEY", a.key)->required();
  auto* set = app.add_subcommand("set", "set a key");
  set->add_option("KEY", a.key)->required();
  set->add_option("VALUE", a.value)->required();
  auto* add = app.add_subcommand("add", "add N to an integer key, print the result");
  add->add_option("KEY", a.key)->required();
  add->add_option("N", a.delta)->required();
  auto* del = app.add_subcommand("del", "delete a key");
  del->add_option("KEY", a.key)->required();
  auto* keys =
      app.add_subcommand("keys", "list all keys (needs LIST_KEYS: ddprun's store, PyTorch ~2.10+)");
  for (auto* sub : {get, set, add, del, keys}) {
    add_client_options(sub, a);
  }
}

}  // namespace

Result<std::pair<std::string, std::uint16_t>> parse_endpoint(std::string_view text) {
  const auto colon = text.rfind(':');
  const auto bad = [&] {
    return make_error(ErrorCode::usage,
                      fmt::format("endpoint {}: expected HOST:PORT", util::quoted(text)));
  };
  if (colon == std::string_view::npos || colon == 0) {
    return bad();
  }
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const auto port = util::parse_int_in(text.substr(colon + 1), 0, k_max_port);
  if (!port || host.empty()) {
    return bad();
  }
  return std::make_pair(host, static_cast<std::uint16_t>(*port));
}

int store_command(const std::vector<std::string>& args, const util::Env& env) {
  CLI::App app("ddprun store: TCPStore-compatible server and client", "ddprun store");
  Args a;
  build(app, a);
  if (auto done = util::parse_subcommand(app, "store", args)) {
    return *done;
  }
  const std::string verb = app.get_subcommands().front()->get_name();
  return verb == "serve" ? serve(a) : run_client(verb, a, env);
}

}  // namespace ddprun::store
