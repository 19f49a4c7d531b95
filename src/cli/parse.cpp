// argparse emulation for the launcher's argv. The scan mirrors how CPython's argparse treats
// torchrun's parser: options are consumed until the first positional (or a literal "--"),
// which is the training script; everything after it is REMAINDER and is never inspected, so
// worker flags that look like launcher flags pass through untouched. Unlike argparse, a token
// that looks like an unknown option is never taken as the script; it is reported instead.
// Settings not given on the command line are filled from the environment, then the defaults.
#include "ddprun/cli/flags.hpp"
#include "ddprun/util/strings.hpp"

#include <utility>

#include "lookup.hpp"

namespace ddprun::cli {

namespace {

using detail::OptionMatch;
using util::quoted;

constexpr std::string_view k_separator = "--";
constexpr std::string_view k_flag_on = "1";
constexpr std::string_view k_flag_off = "0";
constexpr std::string_view k_default_source = "default";

std::string join_choices(const std::vector<std::string_view>& choices) {
  std::string out;
  for (auto c : choices) {
    out += out.empty() ? "" : ", ";
    out += c;
  }
  return out;
}

Result<void> check_choice(const FlagSpec& flag, std::string_view value, std::string_view where) {
  if (flag.choices.empty()) {
    return {};
  }
  for (auto c : flag.choices) {
    if (c == value) {
      return {};
    }
  }
  return make_error(ErrorCode::usage, "invalid value " + quoted(value) + " for " +
                                          std::string(where) + " (choose from " +
                                          join_choices(flag.choices) + ")");
}

class Parser {
 public:
  Parser(std::span<const FlagSpec> table, const util::Env& env) : table_(table), env_(env) {}

  Result<ParsedArgs> run(const std::vector<std::string>& args);

 private:
  Result<void> scan(const std::vector<std::string>& args);
  Result<void> apply(OptionMatch match, const std::vector<std::string>& args, std::size_t& i);
  Result<void> apply_boolean(const OptionMatch& match, const std::vector<std::string>& args,
                             std::size_t& i);
  Result<void> apply_valued(const OptionMatch& match, const std::vector<std::string>& args,
                            std::size_t& i);
  void take_script(const std::vector<std::string>& args, std::size_t from);
  Result<void> fill_unset(bool lenient);
  Result<Setting> from_env(const FlagSpec& flag, const std::string& text) const;
  Result<void> check_complete() const;
  bool stopped() const { return out_.help || out_.version; }

  std::span<const FlagSpec> table_;
  const util::Env& env_;
  ParsedArgs out_;
  std::optional<std::string> unknown_;
};

Result<ParsedArgs> Parser::run(const std::vector<std::string>& args) {
  if (auto r = scan(args); !r) {
    return r.error();
  }
  if (stopped()) {
    (void)fill_unset(/*lenient=*/true);
    return std::move(out_);
  }
  if (auto r = fill_unset(/*lenient=*/false); !r) {
    return r.error();
  }
  if (auto r = check_complete(); !r) {
    return r.error();
  }
  return std::move(out_);
}

Result<void> Parser::scan(const std::vector<std::string>& args) {
  std::size_t i = 0;
  while (i < args.size() && !stopped()) {
    const auto& token = args[i];
    if (token == k_separator) {
      take_script(args, i + 1);
      return {};
    }
    if (!detail::looks_like_option(token)) {
      take_script(args, i);
      return {};
    }
    auto found = detail::find_option(table_, token);
    if (!found) {
      return found.error();
    }
    if (!found->has_value()) {
      unknown_ = unknown_.value_or(token);  // argparse reports unknowns after the scan
      ++i;
      continue;
    }
    if (auto r = apply(std::move(**found), args, i); !r) {
      return r;
    }
  }
  return {};
}

void Parser::take_script(const std::vector<std::string>& args, std::size_t from) {
  if (from >= args.size()) {
    return;
  }
  out_.training_script = args[from];
  using Diff = std::vector<std::string>::difference_type;
  out_.training_script_args.assign(args.begin() + static_cast<Diff>(from + 1), args.end());
}

Result<void> Parser::apply(OptionMatch match, const std::vector<std::string>& args,
                           std::size_t& i) {
  switch (match.flag->kind) {
    case FlagKind::valued:
      return apply_valued(match, args, i);
    case FlagKind::boolean:
      return apply_boolean(match, args, i);
    case FlagKind::help:
    case FlagKind::version:
      break;
  }
  if (match.attached) {
    return make_error(ErrorCode::usage, "option " + quoted(match.spelling) +
                                            " takes no value (got " + quoted(*match.attached) +
                                            ")");
  }
  (match.flag->kind == FlagKind::help ? out_.help : out_.version) = true;
  ++i;
  return {};
}

// A boolean glued to more text ("-mr3") is a cluster of short options, as in argparse.
Result<void> Parser::apply_boolean(const OptionMatch& match, const std::vector<std::string>& args,
                                   std::size_t& i) {
  const auto& flag = *match.flag;
  out_.settings[flag.dest] = Setting{std::string(k_flag_on), Origin::flag, match.spelling};
  if (!match.attached) {
    ++i;
    return {};
  }
  auto no_value =
      make_error(ErrorCode::usage, "option " + quoted(match.spelling) + " takes no value (got " +
                                       quoted(*match.attached) + ")");
  if (!match.glued_short) {
    return no_value;
  }
  auto rest = "-" + *match.attached;
  auto next = detail::find_option(table_, rest.substr(0, 2));
  if (!next || !next->has_value()) {
    return no_value;
  }
  auto chained = **next;
  if (rest.size() > 2) {
    // "-mr=3" gives -r the value "3" (Python 3.11 would keep "=3"; newer argparse strips it).
    auto glued = rest.substr(rest[2] == '=' ? 3 : 2);
    chained.attached = glued;
    chained.glued_short = rest[2] != '=';
  }
  return apply(std::move(chained), args, i);  // i still points at the cluster token
}

Result<void> Parser::apply_valued(const OptionMatch& match, const std::vector<std::string>& args,
                                  std::size_t& i) {
  const auto& flag = *match.flag;
  std::string value;
  if (match.attached) {
    value = *match.attached;
    ++i;
  } else if (i + 1 < args.size() && detail::is_value_token(table_, args[i + 1])) {
    value = args[i + 1];
    i += 2;
  } else {
    std::string got = i + 1 < args.size() ? ", got " + quoted(args[i + 1]) : "";
    return make_error(ErrorCode::usage, "option " + quoted(match.spelling) + " expects a value (" +
                                            std::string(flag.metavar) + ")" + got);
  }
  if (auto r = check_choice(flag, value, match.spelling); !r) {
    return r;
  }
  out_.settings[flag.dest] = Setting{std::move(value), Origin::flag, match.spelling};
  return {};
}

Result<Setting> Parser::from_env(const FlagSpec& flag, const std::string& text) const {
  const std::string var(flag.env_var);
  if (flag.kind == FlagKind::valued) {
    return Setting{text, Origin::env, var};  // argparse checks choices on the command line only
  }
  auto on = detail::parse_python_int_nonzero(text);
  if (!on) {
    return make_error(ErrorCode::usage, "invalid value " + quoted(text) + " in " + var +
                                            " (expected an integer: 0 is off, non-zero is on)");
  }
  return Setting{std::string(*on ? k_flag_on : k_flag_off), Origin::env, var};
}

// lenient: --help/--version must work even when the environment holds a bad value.
Result<void> Parser::fill_unset(bool lenient) {
  for (const auto& flag : table_) {
    if (flag.kind != FlagKind::valued && flag.kind != FlagKind::boolean) {
      continue;
    }
    const FlagKey dest = flag.dest;
    if (out_.settings.count(dest) != 0) {
      continue;
    }
    Setting fallback{std::string(flag.default_value), Origin::default_value,
                     std::string(k_default_source)};
    auto text = flag.env_var.empty() ? std::nullopt : env_.get_nonempty(flag.env_var);
    if (!text) {
      out_.settings[dest] = std::move(fallback);
      continue;
    }
    auto setting = from_env(flag, *text);
    if (!setting && !lenient) {
      return setting.error();
    }
    out_.settings[dest] = setting ? std::move(*setting) : std::move(fallback);
  }
  return {};
}

Result<void> Parser::check_complete() const {
  if (unknown_) {
    return make_error(ErrorCode::usage,
                      "unrecognized option " + quoted(*unknown_) + " (see ddprun --help)");
  }
  auto print_config = out_.settings.find(flag::k_print_config);
  bool printing = print_config != out_.settings.end() && print_config->second.value == k_flag_on;
  if (!out_.training_script && !printing) {
    return make_error(ErrorCode::usage,
                      "the following arguments are required: training_script, "
                      "training_script_args");
  }
  return {};
}

}  // namespace

Result<ParsedArgs> parse_args_with(std::span<const FlagSpec> table,
                                   const std::vector<std::string>& args, const util::Env& env) {
  return Parser(table, env).run(args);
}

Result<ParsedArgs> parse_args(const std::vector<std::string>& args, const util::Env& env) {
  return parse_args_with(flag_table(), args, env);
}

}  // namespace ddprun::cli
