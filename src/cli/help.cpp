// --help text, rendered from the flag table in argparse's layout: the invocation at column 2,
// the help at column 24 (on the next line when the invocation is too wide), wrapped at 100.
#include "ddprun/cli/flags.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "doc_text.hpp"

namespace ddprun::cli {

namespace {

constexpr std::size_t k_width = 100;
constexpr std::size_t k_indent = 2;
constexpr std::size_t k_help_column = 24;
// Joins words that must stay on one line ("default: 1:1"); printed as a space.
constexpr char k_glue = '\x1f';

constexpr std::string_view k_usage =
    "usage: ddprun [-h] [options] training_script [training_script_args ...]\n";

constexpr std::string_view k_intro =
    "Launch a distributed training job: a native drop-in replacement for torchrun "
    "(python -m torch.distributed.run). Long options may be abbreviated to a unique prefix. "
    "Options marked 'env PET_<NAME>' take their default from that environment variable when it "
    "is set and non-empty (booleans: 0 is off, any other integer is on); an option given on the "
    "command line always wins.";

constexpr std::string_view k_positionals[][2] = {
    {"training_script",
     "The program or script each worker runs (a module name with -m), followed by its "
     "arguments."},
    {"training_script_args",
     "Everything after the script, passed to every worker untouched, even when it looks like "
     "a ddprun option."},
};

constexpr std::string_view k_subcommands[][2] = {
    {"ddprun status --rdzv_endpoint HOST:PORT [--rdzv_id ID] [--json]",
     "Show a running job's rendezvous: its round, each node with its ranks, heartbeat age and "
     "last progress, the nodes waiting, why the last round ended (ddprun status --help)."},
    {"ddprun store {serve,get,set,add,del,keys} ...",
     "A TCPStore-compatible server and client, for PyTorch's stores as well as ddprun's "
     "(ddprun store --help)."},
};

constexpr std::string_view k_examples =
    "  ddprun --standalone --nproc_per_node 4 train.py --epochs 3\n"
    "                        one node, four workers\n"
    "  ddprun --nnodes 2 --nproc_per_node 4 --rdzv_backend c10d --rdzv_endpoint node1:29400 "
    "train.py\n"
    "                        the same line on every node of a two-node job\n"
    "  srun ddprun --nproc_per_node 4 train.py\n"
    "                        under Slurm (or PBS): nodes, ranks and the store come from the job\n";

std::vector<std::string> wrap(std::string_view text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find(' ', pos);
    auto word = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    if (word.empty()) {
      continue;
    }
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    line += line.empty() ? "" : " ";
    line += word;
  }
  if (!line.empty()) {
    lines.push_back(std::move(line));
  }
  for (auto& l : lines) {
    std::replace(l.begin(), l.end(), k_glue, ' ');
  }
  return lines;
}

std::string render_item(std::string_view invocation, std::string_view help) {
  std::string out(k_indent, ' ');
  out += invocation;
  auto lines = wrap(help, k_width - k_help_column);
  if (out.size() + 1 >= k_help_column) {
    out += '\n';
    out += std::string(k_help_column, ' ');
  } else {
    out += std::string(k_help_column - out.size(), ' ');
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += i == 0 ? "" : std::string(k_help_column, ' ');
    out += lines[i] + '\n';
  }
  return out;
}

std::string metavar_text(const FlagSpec& flag) {
  if (flag.choices.empty()) {
    return std::string(flag.metavar);
  }
  std::string out = "{";
  for (auto c : flag.choices) {
    out += out.size() == 1 ? "" : ",";
    out += c;
  }
  return out + "}";
}

std::string invocation(const FlagSpec& flag) {
  std::string out;
  for (auto s : flag.spellings) {
    out += out.empty() ? "" : ", ";
    out += s;
  }
  if (flag.kind == FlagKind::valued) {
    out += " " + metavar_text(flag);
  }
  return out;
}

std::string origin_note(const FlagSpec& flag) {
  std::string note;
  if (flag.kind == FlagKind::valued) {
    note = std::string("default:") + k_glue +
           std::string(flag.default_value.empty() ? "empty" : flag.default_value);
  } else if (flag.kind == FlagKind::boolean) {
    note = std::string("default:") + k_glue + "off";
  }
  if (!flag.env_var.empty()) {
    note += std::string("; env") + k_glue + std::string(flag.env_var);
  }
  return note.empty() ? note : " (" + note + ")";
}

std::string render_group(std::span<const FlagSpec> table, FlagGroup group) {
  std::string out;
  for (const auto& flag : table) {
    if (flag.group == group) {
      out += render_item(invocation(flag), std::string(flag.help) + origin_note(flag));
    }
  }
  return out.empty() ? out : "\n" + std::string(group_title(group)) + ":\n" + out;
}

/// After the options: the subcommands, the exit statuses and a few launch lines.
std::string render_epilogue() {
  std::string out = "\nsubcommands:\n";
  for (const auto& item : k_subcommands) {
    out += render_item(item[0], item[1]);
  }
  out += "\nexit status:\n";
  for (const auto& status : detail::k_exit_statuses) {
    out += render_item(status.code, status.meaning);
  }
  return out + "\nexamples:\n" + std::string(k_examples);
}

}  // namespace

std::string render_help_with(std::span<const FlagSpec> table) {
  std::string out(k_usage);
  out += '\n';
  for (const auto& line : wrap(k_intro, k_width)) {
    out += line + '\n';
  }
  out += "\npositional arguments:\n";
  for (const auto& item : k_positionals) {
    out += render_item(item[0], item[1]);
  }
  for (auto group : {FlagGroup::nodes, FlagGroup::rendezvous, FlagGroup::worker_command,
                     FlagGroup::supervision, FlagGroup::logs, FlagGroup::extras}) {
    out += render_group(table, group);
  }
  return out + render_epilogue();
}

std::string render_help() { return render_help_with(flag_table()); }

}  // namespace ddprun::cli
