#pragma once
// Documents derived from the flag table, so --help, the man page and the shell completions
// never disagree: each renderer is a pure function of the table (and, for the man page, the
// version string). The ddprun-docgen build tool writes them to files at build time.

#include "ddprun/cli/flags.hpp"

#include <span>
#include <string>
#include <string_view>

namespace ddprun::cli {

/// An environment variable and what it holds, for the man page.
struct VariableDoc {
  std::string_view name;
  std::string_view text;
};

/// ddprun(1) in man(7) roff: NAME, SYNOPSIS, DESCRIPTION, OPTIONS (grouped as in --help),
/// ENVIRONMENT (ddprun's own variables, then `worker_variables`: what the workers get, as
/// agent::worker_variables() lists it), EXIT STATUS, SUBCOMMANDS, SEE ALSO.
std::string render_man_page(std::string_view version,
                            std::span<const VariableDoc> worker_variables);
std::string render_man_page_with(std::span<const FlagSpec> table, std::string_view version,
                                 std::span<const VariableDoc> worker_variables);

/// A bash completion script (`complete -F _ddprun ddprun`): every spelling, the choices of
/// enum-valued flags, file names for the script and for other values. `status_options`: what
/// `ddprun status` takes, as status::status_options() lists it.
std::string render_bash_completion(std::span<const std::string> status_options);
std::string render_bash_completion_with(std::span<const FlagSpec> table,
                                        std::span<const std::string> status_options);

/// A zsh completion function file (`#compdef ddprun`) in _arguments form.
std::string render_zsh_completion(std::span<const std::string> status_options);
std::string render_zsh_completion_with(std::span<const FlagSpec> table,
                                       std::span<const std::string> status_options);

}  // namespace ddprun::cli
