#include "ddprun/util/template.hpp"

#include <cctype>
#include <optional>

namespace ddprun::util {
namespace {

bool is_ident_start(char c) { return c == '_' || std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_ident_char(char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)) != 0; }

/// Length of the identifier at the front of `text`; 0 when there is none.
std::size_t ident_length(std::string_view text) {
  if (text.empty() || !is_ident_start(text.front())) {
    return 0;
  }
  std::size_t n = 1;
  while (n < text.size() && is_ident_char(text[n])) {
    ++n;
  }
  return n;
}

/// A variable named at the front of a text: the name, and the characters "$name" or "${name}"
/// take.
struct Reference {
  std::string_view name;
  std::size_t length = 0;
};

/// The reference `text` (which starts with '$') begins with; nullopt when it begins with none.
std::optional<Reference> reference_at(std::string_view text) {
  const auto rest = text.substr(1);
  if (rest.starts_with('{')) {
    const auto close = rest.find('}');
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    const auto name = rest.substr(1, close - 1);
    if (name.empty() || ident_length(name) != name.size()) {
      return std::nullopt;
    }
    return Reference{name, close + 2};
  }
  const auto n = ident_length(rest);
  if (n == 0) {
    return std::nullopt;
  }
  return Reference{rest.substr(0, n), n + 1};
}

}  // namespace

std::string substitute_vars(std::string_view text, const TemplateVars& vars) {
  std::string out;
  while (!text.empty()) {
    if (text.starts_with("$$")) {
      out += '$';
      text.remove_prefix(2);
      continue;
    }
    const auto ref = text.front() == '$' ? reference_at(text) : std::nullopt;
    const auto it = ref ? vars.find(ref->name) : vars.end();
    if (it == vars.end()) {
      out += text.front();
      text.remove_prefix(1);
      continue;
    }
    out += it->second;
    text.remove_prefix(ref->length);
  }
  return out;
}

}  // namespace ddprun::util
