// The whole table, in --help order, and the group titles.
#include <stdexcept>
#include <string>

#include "flag_groups.hpp"

namespace ddprun::cli {

namespace {

std::vector<FlagSpec> make_table() {
  auto flags = detail::launch_flags();
  detail::append(flags, detail::rdzv_flags());
  detail::append(flags, detail::logging_flags());
  detail::append(flags, detail::ddprun_flags());
  return flags;
}

}  // namespace

std::span<const FlagSpec> flag_table() {
  static const std::vector<FlagSpec> table = make_table();
  return table;
}

const FlagSpec& flag_spec(FlagKey dest) {
  for (const auto& flag : flag_table()) {
    if (flag.dest == dest) {
      return flag;
    }
  }
  throw std::logic_error("no flag table row for " + std::string(dest.name()));
}

std::string_view group_title(FlagGroup group) {
  switch (group) {
    case FlagGroup::nodes:
      return "Nodes and workers";
    case FlagGroup::rendezvous:
      return "Rendezvous";
    case FlagGroup::worker_command:
      return "Worker command";
    case FlagGroup::supervision:
      return "Restarts and supervision";
    case FlagGroup::logs:
      return "Logs and output";
    case FlagGroup::extras:
      return "ddprun extras";
  }
  return "Other";
}

}  // namespace ddprun::cli
