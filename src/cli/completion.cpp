// bash and zsh completion scripts, rendered from the flag table: every spelling, the choices
// of enum-valued flags, files for the training script and for DIR/PATH values, host names for
// ADDR values, and the store subcommand's verbs. The shell code around the table is fixed text
// here.
#include "ddprun/cli/docs.hpp"

#include <string>

#include "doc_text.hpp"

namespace ddprun::cli {

namespace {

std::string join(const std::vector<std::string_view>& words, std::string_view sep) {
  std::string out;
  for (auto w : words) {
    out += out.empty() ? "" : std::string(sep);
    out += w;
  }
  return out;
}

template <typename Range>
std::string join_range(const Range& words) {
  return join(std::vector<std::string_view>(words.begin(), words.end()), " ");
}

std::vector<std::string_view> spellings_where(std::span<const FlagSpec> table, bool valued) {
  std::vector<std::string_view> out;
  for (const auto& flag : table) {
    if (!valued || flag.kind == FlagKind::valued) {
      out.insert(out.end(), flag.spellings.begin(), flag.spellings.end());
    }
  }
  return out;
}

std::vector<std::string_view> store_verb_names() {
  std::vector<std::string_view> out;
  out.reserve(detail::k_store_verbs.size());
  for (const auto& verb : detail::k_store_verbs) {
    out.push_back(verb.name);
  }
  return out;
}

// ---- bash ----------------------------------------------------------------------------------

constexpr std::string_view k_bash_head =
    "# bash completion for ddprun                                  -*- shell-script -*-\n"
    "# Generated from ddprun's flag table by ddprun-docgen; do not edit.\n"
    "\n"
    "_ddprun_files() {\n"
    "    local IFS=$'\\n'\n"
    "    compopt -o filenames 2>/dev/null\n"
    "    COMPREPLY+=( $(compgen -f -- \"$1\") )\n"
    "    return 0\n"
    "}\n"
    "\n"
    "_ddprun() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i=1 first=\n"
    "    COMPREPLY=()\n"
    "    if [[ $cur == = ]]; then cur=; prev=${COMP_WORDS[COMP_CWORD-1]};\n"
    "    elif [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n";

// Finds the first word that is not an option or an option's value: the training script or
// a subcommand. Words that follow it belong to the workers (or the subcommand).
constexpr std::string_view k_bash_scan =
    "    while (( i < COMP_CWORD )); do\n"
    "        local w=${COMP_WORDS[i]}\n"
    "        if [[ ${COMP_WORDS[i+1]} == = ]]; then (( i += 3 )); continue; fi\n"
    "        if [[ \" $valued \" == *\" $w \"* ]]; then (( i += 2 )); continue; fi\n"
    "        if [[ $w == -* ]]; then (( i += 1 )); continue; fi\n"
    "        first=$w; break\n"
    "    done\n"
    "    if [[ -n $first ]]; then\n"
    "        if [[ $first == store ]]; then\n"
    "            if (( i + 1 == COMP_CWORD )); then\n"
    "                COMPREPLY=( $(compgen -W \"$store_verbs\" -- \"$cur\") )\n"
    "            elif [[ $cur == -* ]]; then\n"
    "                COMPREPLY=( $(compgen -W \"$store_options --help\" -- \"$cur\") )\n"
    "            fi\n"
    "        elif [[ $first == status ]]; then\n"
    "            [[ $cur == -* ]] && COMPREPLY=( $(compgen -W \"$status_options\" -- \"$cur\") )\n"
    "        else\n"
    "            _ddprun_files \"$cur\"\n"
    "        fi\n"
    "        return 0\n"
    "    fi\n";

constexpr std::string_view k_bash_tail =
    "    if [[ $cur == -* ]]; then\n"
    "        COMPREPLY=( $(compgen -W \"$flags\" -- \"$cur\") )\n"
    "        return 0\n"
    "    fi\n"
    "    COMPREPLY=( $(compgen -W \"$subcommands\" -- \"$cur\") )\n"
    "    _ddprun_files \"$cur\"\n"
    "}\n"
    "complete -F _ddprun ddprun\n";

// What each kind of value completes to, as the body of a `case $prev` branch.
std::string bash_value_action(const FlagSpec& flag) {
  switch (detail::value_kind(flag)) {
    case detail::ValueKind::choices:
      return "COMPREPLY=( $(compgen -W \"" + join(flag.choices, " ") + "\" -- \"$cur\") )";
    case detail::ValueKind::directory:
      return "compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- \"$cur\") )";
    case detail::ValueKind::file:
      return "_ddprun_files \"$cur\"";
    case detail::ValueKind::host:
      return "COMPREPLY=( $(compgen -A hostname -- \"$cur\") )";
    case detail::ValueKind::text:
    case detail::ValueKind::none:
      break;
  }
  return ":";
}

// One `case $prev` branch per valued flag: its value never falls through to the script.
std::string bash_value_cases(std::span<const FlagSpec> table) {
  std::string out = "    case $prev in\n";
  for (const auto& flag : table) {
    if (flag.kind == FlagKind::valued) {
      out += "        " + join(flag.spellings, "|") + ")\n";
      out += "            " + bash_value_action(flag) + "; return 0 ;;\n";
    }
  }
  return out + "    esac\n";
}

std::string bash_variables(std::span<const FlagSpec> table,
                           std::span<const std::string> status_options) {
  return "    local flags=\"" + join(spellings_where(table, false), " ") + "\"\n" +
         "    local valued=\"" + join(spellings_where(table, true), " ") + "\"\n" +
         "    local subcommands=\"" + join_range(detail::k_subcommands) + "\"\n" +
         "    local store_verbs=\"" + join(store_verb_names(), " ") + "\"\n" +
         "    local store_options=\"" + join_range(detail::k_store_options) + "\"\n" +
         "    local status_options=\"" + join_range(status_options) + "\"\n";
}

// ---- zsh -----------------------------------------------------------------------------------

constexpr std::string_view k_zsh_head =
    "#compdef ddprun\n"
    "# zsh completion for ddprun. Generated from ddprun's flag table by ddprun-docgen; do not\n"
    "# edit.\n"
    "\n"
    "local context state state_descr line ret=1\n"
    "typeset -A opt_args\n"
    "\n"
    "_arguments -S -A '-*' \\\n";

constexpr std::string_view k_zsh_tail =
    "  '1: :->first' \\\n"
    "  '*:: :->rest' && ret=0\n"
    "\n"
    "case $state in\n"
    "  first)\n"
    "    _alternative 'subcommands:subcommand:(store status)' 'files:training script:_files' "
    "&& ret=0 ;;\n"
    "  rest)\n"
    "    if [[ $words[1] == store ]]; then\n"
    "      if (( CURRENT == 2 )); then\n"
    "        compadd -- @STORE_VERBS@ && ret=0\n"
    "      else\n"
    "        compadd -- @STORE_OPTIONS@ --help && ret=0\n"
    "      fi\n"
    "    elif [[ $words[1] == status ]]; then\n"
    "      compadd -- @STATUS_OPTIONS@ && ret=0\n"
    "    else\n"
    "      _files && ret=0\n"
    "    fi ;;\n"
    "esac\n"
    "return ret\n";

/// Text for inside a single-quoted _arguments spec: quotes and colons escaped, and brackets
/// too in a [description].
std::string zsh_escape(std::string_view text, bool in_brackets) {
  std::string out;
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else if (c == ':' || c == '\\' || (in_brackets && (c == '[' || c == ']'))) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

/// The first sentence of the help, without its full stop.
std::string zsh_description(std::string_view help) {
  auto end = help.find(". ");
  help = help.substr(0, end == std::string_view::npos ? help.size() : end);
  if (help.ends_with('.')) {
    help.remove_suffix(1);
  }
  return zsh_escape(help, true);
}

std::string zsh_action(const FlagSpec& flag) {
  if (flag.kind != FlagKind::valued) {
    return "";
  }
  auto message = ":" + zsh_escape(flag.metavar.empty() ? "value" : flag.metavar, false) + ":";
  switch (detail::value_kind(flag)) {
    case detail::ValueKind::choices:
      return message + "(" + join(flag.choices, " ") + ")";
    case detail::ValueKind::directory:
      return message + "_files -/";
    case detail::ValueKind::file:
      return message + "_files";
    case detail::ValueKind::host:
      return message + "_hosts";
    case detail::ValueKind::text:
    case detail::ValueKind::none:
      break;
  }
  return message + " ";
}

std::string zsh_spelling(const FlagSpec& flag, std::string_view spelling) {
  if (flag.kind != FlagKind::valued) {
    return std::string(spelling);
  }
  return std::string(spelling) + (spelling.starts_with("--") ? "=" : "+");
}

std::string zsh_spec(const FlagSpec& flag) {
  auto exclusion = "(" + join(flag.spellings, " ") + ")";
  auto rest = "[" + zsh_description(flag.help) + "]" + zsh_action(flag);
  if (flag.kind == FlagKind::help || flag.kind == FlagKind::version) {
    exclusion = "(- *)";
  }
  if (flag.spellings.size() == 1) {
    return "  '" + exclusion + zsh_spelling(flag, flag.spellings[0]) + rest + "' \\\n";
  }
  std::string names;
  for (auto s : flag.spellings) {
    names += names.empty() ? "" : ",";
    names += zsh_spelling(flag, s);
  }
  return "  '" + exclusion + "'{" + names + "}'" + rest + "' \\\n";
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

}  // namespace

std::string render_bash_completion_with(std::span<const FlagSpec> table,
                                        std::span<const std::string> status_options) {
  std::string out(k_bash_head);
  out += bash_variables(table, status_options);
  out += k_bash_scan;
  out += bash_value_cases(table);
  out += k_bash_tail;
  return out;
}

std::string render_zsh_completion_with(std::span<const FlagSpec> table,
                                       std::span<const std::string> status_options) {
  std::string out(k_zsh_head);
  for (const auto& flag : table) {
    out += zsh_spec(flag);
  }
  auto tail = replace_all(std::string(k_zsh_tail), "@STORE_VERBS@", join(store_verb_names(), " "));
  tail = replace_all(std::move(tail), "@STATUS_OPTIONS@", join_range(status_options));
  return out + replace_all(std::move(tail), "@STORE_OPTIONS@", join_range(detail::k_store_options));
}

std::string render_bash_completion(std::span<const std::string> status_options) {
  return render_bash_completion_with(flag_table(), status_options);
}

std::string render_zsh_completion(std::span<const std::string> status_options) {
  return render_zsh_completion_with(flag_table(), status_options);
}

}  // namespace ddprun::cli
