#pragma once
// ${name} templates as Python's string.Template.safe_substitute reads them: the workers' argv
// (${local_rank}) and TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE (${role_name}, ${rank}, ...).

#include <map>
#include <string>
#include <string_view>

namespace ddprun::util {

/// Values of the variables a template may name.
using TemplateVars = std::map<std::string, std::string, std::less<>>;

/// Replaces ${name} and $name (name an identifier, [A-Za-z_][A-Za-z0-9_]*, the longest one after
/// the $) by its value in `vars`, collapses $$ to $, and leaves every other $ as written: an
/// unknown name, "${" without its "}", a $ before anything that is not an identifier.
std::string substitute_vars(std::string_view text, const TemplateVars& vars);

}  // namespace ddprun::util
