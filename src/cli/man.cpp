// ddprun(1), rendered from the flag table in man(7) roff. The option list is the same table
// --help walks, in the same groups, so the two cannot drift; only the prose around it is fixed
// text here.
#include "ddprun/cli/docs.hpp"

#include <set>
#include <string>

#include "doc_text.hpp"

namespace ddprun::cli {

namespace {

constexpr std::array k_groups{FlagGroup::nodes,          FlagGroup::rendezvous,
                              FlagGroup::worker_command, FlagGroup::supervision,
                              FlagGroup::logs,           FlagGroup::extras};

constexpr std::string_view k_description =
    "ddprun launches a distributed PyTorch training job: it is a native replacement for\n"
    "torchrun (python3 -m torch.distributed.run) that accepts the same options and gives the\n"
    "workers exactly the environment torchrun gives them (RANK, LOCAL_RANK, WORLD_SIZE,\n"
    "MASTER_ADDR, MASTER_PORT, TORCHELASTIC_* ...).\n"
    ".PP\n"
    "One ddprun agent runs per node. It takes part in the rendezvous, hosts the workers'\n"
    "TCPStore, starts --nproc-per-node workers, supervises them, restarts the group up to\n"
    "--max-restarts times and prints a failure summary naming the root-cause rank.\n"
    ".PP\n"
    "Every option has a dash and an underscore spelling, and long options may be abbreviated\n"
    "to a unique prefix. Options marked \"env PET_<NAME>\" take their default from that\n"
    "variable when it is set and non-empty; the command line always wins. Everything after the\n"
    "training script is passed to every worker untouched, even when it looks like an option.\n";

// Variables read or set by ddprun besides the PET_* defaults of the table.
constexpr std::string_view k_other_variables[][2] = {
    {"PYTHON_EXEC",
     "Interpreter for the workers unless --python is given (else the python3 in ddprun's own "
     "directory, else python3 on PATH)."},
    {"DDPRUN_WORKER_TORCH",
     "The workers' torch version (e.g. 2.14) when ddprun cannot find it on disk beside their "
     "interpreter; they get what that torch's torchrun gives: 2.2 and newer "
     "TORCH_NCCL_ASYNC_ERROR_HANDLING, older torch NCCL_ASYNC_ERROR_HANDLING; before 2.4 a "
     "one-node c10d job's store on worker rank 0 (TORCHELASTIC_USE_AGENT_STORE=False); from 2.9 "
     "TORCHELASTIC_SIGNALS_TO_HANDLE. An unknown torch gets the newest torchrun's, with both "
     "NCCL names."},
    {"LOGLEVEL", "Level of ddprun's own messages (--log-level wins); default WARNING."},
    {"TORCH_ELASTIC_SHUTDOWN_TIMEOUT",
     "SIGTERM to SIGKILL grace in seconds when stopping workers (also --shutdown-timeout)."},
    {"TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE",
     "Replaces the prefix of teed worker lines, e.g. '[${rank}]: ' (also ${role_name}, "
     "${local_rank} and ${pid}, the worker's)."},
    {"TORCHELASTIC_ERROR_FILE",
     "When set for ddprun itself, the root cause of a failure is written there as JSON."},
    {"TMPDIR", "Where the default log directory is created."},
    {"DDPRUN_RDZV_TOKEN",
     "Secret that authenticates the agents of a multi-node job to each other (after --rdzv-conf "
     "token_file=PATH; before the job's $SLURM_SUBMIT_DIR/.ddprun/token or "
     "$PBS_O_WORKDIR/.ddprun/token). See docs/reliability.md, Security."},
};

constexpr std::string_view k_see_also =
    ".BR python3 (1),\n"
    ".BR srun (1).\n"
    "torchrun documentation: https://pytorch.org/docs/stable/elastic/run.html.\n"
    "The files from-torchrun.md, schedulers.md and rendezvous.md in /usr/share/doc/ddprun or\n"
    "the source tree's docs/ directory.\n";

/// Escapes text for roff: backslashes, minus signs, and a control character at line start.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out.front() == '.' || out.front() == '\'')) {
    out.insert(0, "\\&");
  }
  return out;
}

std::string value_text(const FlagSpec& flag) {
  if (flag.choices.empty()) {
    return "\\fI" + escape(flag.metavar) + "\\fR";
  }
  std::string out = "{";
  for (auto c : flag.choices) {
    out += out.size() == 1 ? "" : ",";
    out += escape(c);
  }
  return out + "}";
}

std::string render_option(const FlagSpec& flag) {
  std::string out = ".TP\n";
  for (std::size_t i = 0; i < flag.spellings.size(); ++i) {
    out += i == 0 ? "" : ", ";
    out += "\\fB" + escape(flag.spellings[i]) + "\\fR";
  }
  if (flag.kind == FlagKind::valued) {
    out += " " + value_text(flag);
  }
  out += "\n" + escape(flag.help);
  auto note = detail::option_note(flag);
  if (!note.empty()) {
    out += " (" + escape(note) + ")";
  }
  return out + "\n";
}

std::string render_options(std::span<const FlagSpec> table) {
  std::string out = ".SH OPTIONS\n";
  for (auto group : k_groups) {
    std::string items;
    for (const auto& flag : table) {
      items += flag.group == group ? render_option(flag) : "";
    }
    if (!items.empty()) {
      out += ".SS " + escape(group_title(group)) + "\n" + items;
    }
  }
  return out;
}

std::string render_variable(std::string_view name, std::string_view text) {
  return ".TP\n.B " + escape(name) + "\n" + escape(text) + "\n";
}

std::string render_environment(std::span<const FlagSpec> table,
                               std::span<const VariableDoc> worker_variables) {
  std::string out = ".SH ENVIRONMENT\n";
  std::set<std::string_view> seen;
  for (const auto& flag : table) {
    if (!flag.env_var.empty() && seen.insert(flag.env_var).second) {
      out += render_variable(flag.env_var,
                             "Default for " + std::string(detail::long_spelling(flag)) + ".");
    }
  }
  for (const auto& item : k_other_variables) {
    if (!seen.contains(item[0])) {
      out += render_variable(item[0], item[1]);
    }
  }
  out +=
      ".PP\nWorkers get the launcher's own environment and these, as torchrun gives them "
      "(the ones set only when unset keep a value the environment already has):\n";
  for (const auto& v : worker_variables) {
    out += render_variable(v.name, v.text);
  }
  return out;
}

std::string render_subcommands() {
  std::string out =
      ".SH SUBCOMMANDS\n"
      "A first argument of \\fBstore\\fR or \\fBstatus\\fR selects a subcommand instead of a "
      "launch; each has its own \\fB\\-\\-help\\fR.\n";
  for (const auto& verb : detail::k_store_verbs) {
    out += ".TP\n\\fBddprun store " + escape(verb.name) + "\\fR " + escape(verb.arguments) + "\n" +
           escape(verb.help) + "\n";
  }
  out +=
      ".TP\n\\fBddprun status\\fR [\\-\\-rdzv\\-backend c10d|static|etcd\\-v3] "
      "\\-\\-rdzv\\-endpoint \\fIENDPOINT\\fR "
      "[\\-\\-rdzv\\-id \\fIID\\fR] [\\-\\-rdzv\\-conf \\fIK\\fR=\\fIV\\fR,...] "
      "[\\-\\-timeout \\fISECONDS\\fR] [\\-\\-json]\n"
      "Print a rendezvous' state: the round and its phase, each node with its ranks, heartbeat "
      "age and how long ago its workers last made progress, the nodes waiting for the next round, "
      "and why the last round ended. c10d and static read the agents' store (\\fIHOST\\fR"
      "[:\\fIPORT\\fR]; static: the master address and port), etcd\\-v3 the run's current "
      "generation in the etcd members listed, with the agents' \\-\\-rdzv\\-conf keys "
      "(protocol, cacert, cert, key, key_prefix, username, password_file). A rendezvous with "
      "the token (token_file) needs it here too.\n";
  return out;
}

std::string render_header(std::string_view version) {
  return ".TH DDPRUN 1 \"\" \"ddprun " + escape(version) +
         "\" \"User Commands\"\n"
         ".nh\n"
         ".SH NAME\n"
         "ddprun \\- launch distributed PyTorch jobs, a native drop\\-in for torchrun\n"
         ".SH SYNOPSIS\n"
         ".B ddprun\n"
         "[\\fIoptions\\fR] \\fItraining_script\\fR [\\fItraining_script_args\\fR ...]\n"
         ".br\n"
         ".B ddprun store\n"
         "\\fIverb\\fR [\\fIarguments\\fR]\n"
         ".br\n"
         ".B ddprun status\n"
         "[\\fIoptions\\fR]\n";
}

}  // namespace

std::string render_man_page_with(std::span<const FlagSpec> table, std::string_view version,
                                 std::span<const VariableDoc> worker_variables) {
  std::string out = render_header(version);
  out += ".SH DESCRIPTION\n" + escape(k_description);
  out += render_options(table);
  out += render_environment(table, worker_variables);
  out += ".SH EXIT STATUS\n";
  for (const auto& status : detail::k_exit_statuses) {
    out += ".TP\n.B " + std::string(status.code) + "\n" + escape(status.meaning) + "\n";
  }
  out += render_subcommands();
  out += ".SH SEE ALSO\n" + std::string(k_see_also);
  return out;
}

std::string render_man_page(std::string_view version,
                            std::span<const VariableDoc> worker_variables) {
  return render_man_page_with(flag_table(), version, worker_variables);
}

}  // namespace ddprun::cli
