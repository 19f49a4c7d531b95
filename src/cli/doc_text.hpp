#pragma once
// Text shared by the help, man page and completion renderers (module-private): the notes printed
// after an option's help, the subcommands, which live outside the flag table, and the exit
// statuses.

#include "ddprun/cli/flags.hpp"

#include <array>
#include <string>
#include <string_view>

namespace ddprun::cli::detail {

/// One `ddprun store` subcommand: its name, its arguments and one line of help.
struct StoreVerb {
  std::string_view name;
  std::string_view arguments;
  std::string_view help;
};

inline constexpr std::array<StoreVerb, 6> k_store_verbs{{
    {"serve",
     "[--host HOST] [--port PORT] [--max-connections N] [--max-memory-bytes N] "
     "[--max-parked-waits N] [--frame-timeout SECONDS] [--legacy-dialect DIALECT]",
     "Run a standalone TCPStore-compatible server until SIGINT or SIGTERM."},
    {"get", "KEY [--endpoint HOST:PORT] [--timeout SECONDS] [--dialect D] [--token-file PATH]",
     "Print a key's value. Keys under ddprun/ (the agents' rendezvous) take the rendezvous token "
     "of an authenticated store: from --token-file, DDPRUN_RDZV_TOKEN or the job's token file; "
     "the same holds for set, add, del and keys. Every client verb finds the server's protocol "
     "(ddprun's, or PyTorch's own TCPStore server of any version) by probing it, each probe "
     "bounded to 3 s; --dialect 1.x-2.0, 2.1 or 2.2+ names it instead."},
    {"set",
     "KEY VALUE [--endpoint HOST:PORT] [--timeout SECONDS] [--dialect D] [--token-file PATH]",
     "Set a key; exits 0 only once the server confirms the key is stored."},
    {"add", "KEY N [--endpoint HOST:PORT] [--timeout SECONDS] [--dialect D] [--token-file PATH]",
     "Add N to an integer key and print the result."},
    {"del", "KEY [--endpoint HOST:PORT] [--timeout SECONDS] [--dialect D] [--token-file PATH]",
     "Delete a key."},
    {"keys", "[--endpoint HOST:PORT] [--timeout SECONDS] [--dialect D] [--token-file PATH]",
     "List all keys (needs LIST_KEYS: ddprun's store, or PyTorch's from ~2.10); the agents' keys "
     "only with the rendezvous token."},
}};

/// Options of `ddprun store` verbs, for completion.
inline constexpr std::array<std::string_view, 11> k_store_options{
    "--endpoint",      "--timeout",         "--dialect",          "--host",
    "--port",          "--max-connections", "--max-memory-bytes", "--max-parked-waits",
    "--frame-timeout", "--legacy-dialect",  "--token-file"};

/// Options of `ddprun status`, for completion and the man page.
/// The words that may replace the training script as the first argument.
inline constexpr std::array<std::string_view, 2> k_subcommands{"store", "status"};

/// "--nproc-per-node": the first spelling with two dashes (or the first spelling).
inline std::string_view long_spelling(const FlagSpec& flag) {
  for (auto s : flag.spellings) {
    if (s.starts_with("--")) {
      return s;
    }
  }
  return flag.spellings.empty() ? std::string_view{} : flag.spellings.front();
}

/// What a completion offers for an option's value.
enum class ValueKind { none, choices, directory, file, host, text };

/// Decided from the table: `choices` when the flag lists them, else from the metavar
/// (DIR, PATH, ADDR); `text` for any other value, `none` for flags without one.
inline ValueKind value_kind(const FlagSpec& flag) {
  if (flag.kind != FlagKind::valued) {
    return ValueKind::none;
  }
  if (!flag.choices.empty()) {
    return ValueKind::choices;
  }
  if (flag.metavar == "DIR") {
    return ValueKind::directory;
  }
  if (flag.metavar == "PATH" || flag.metavar == "FILE") {
    return ValueKind::file;
  }
  return flag.metavar == "ADDR" ? ValueKind::host : ValueKind::text;
}

/// One exit status of a launch, as --help and the man page list them.
struct ExitStatus {
  std::string_view code;
  std::string_view meaning;
};

inline constexpr std::array<ExitStatus, 5> k_exit_statuses{{
    {"0",
     "Every worker succeeded, or the job ended while this node stood by as a spare; also after "
     "--help, --version and a successful subcommand."},
    {"1",
     "The worker group failed after the allowed restarts (--max-restarts), the agent lost "
     "its rendezvous store, or a runtime error."},
    {"2", "A usage or configuration error; nothing was started."},
    {"3",
     "Do not requeue: restarting would not help. The job stopped in a crash loop (the same "
     "failure --crash-loop-limit attempts in a row, each within --crash-loop-window of its "
     "start), this node was left out (the root cause of max_node_failures failed rounds in a "
     "row, --rdzv-conf) and the other nodes, with a spare, went on without it, or it failed "
     "its --health-check."},
    {"128+N",
     "Stopped by the handled signal N before the job ended (143: SIGTERM, 138: SIGUSR1): "
     "preempted or at its time limit, so requeueing is right. torchrun exits 1 then."},
}};

/// "default: 1:1; env PET_NNODES" for valued and boolean flags, "" for --help/--version.
inline std::string option_note(const FlagSpec& flag) {
  std::string note;
  if (flag.kind == FlagKind::valued) {
    note = "default: " + std::string(flag.default_value.empty() ? "empty" : flag.default_value);
  } else if (flag.kind == FlagKind::boolean) {
    note = "default: off";
  }
  if (!flag.env_var.empty()) {
    note += "; env " + std::string(flag.env_var);
  }
  return note;
}

}  // namespace ddprun::cli::detail
