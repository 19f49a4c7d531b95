#pragma once
// Creates torchrun's log directories (the layout is in log_paths.hpp). These functions touch
// the file system; the paths themselves are pure (ddprun_output_core).

#include "ddprun/output/log_paths.hpp"
#include "ddprun/util/result.hpp"

#include <string>
#include <string_view>

namespace ddprun::output {

/// Creates the run directory once per agent: under log_dir (created if missing; an error if
/// it is a file), or under a fresh "torchelastic_XXXXXXXX" in `temp_root` (temp_root() of the
/// agent's environment) when empty. Returns "" for /dev/null (files disabled).
Result<std::string> make_run_dir(std::string_view log_dir, std::string_view run_id,
                                 const std::string& temp_root);

/// Wipes and re-creates attempt_<attempt> with sub-directories 0..nproc-1 (spec §5.1 step 2).
/// Earlier attempts are left alone. No-op when run_dir is empty.
Result<void> prepare_attempt_dir(std::string_view run_dir, int attempt, int nproc);

}  // namespace ddprun::output
