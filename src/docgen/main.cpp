// ddprun-docgen OUTDIR: writes ddprun.1, ddprun.bash and _ddprun, rendered from the flag table
// (and the workers' variables from agent::worker_variables()), into OUTDIR. A build-time tool
// (not installed): the build runs it so the man page and the completions always match the
// binary's --help.
#include "ddprun/agent/worker_env.hpp"
#include "ddprun/cli/docs.hpp"
#include "ddprun/status/command.hpp"
#include "ddprun/util/exit_status.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace {

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "ddprun-docgen: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ddprun-docgen OUTDIR\n";
    return ddprun::util::k_exit_usage;
  }
  const std::filesystem::path dir(argv[1]);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  namespace cli = ddprun::cli;
  const auto status_options = ddprun::status::status_options();
  const bool ok =
      write_file(dir / "ddprun.1",
                 cli::render_man_page(DDPRUN_VERSION, ddprun::agent::worker_variables())) &&
      write_file(dir / "ddprun.bash", cli::render_bash_completion(status_options)) &&
      write_file(dir / "_ddprun", cli::render_zsh_completion(status_options));
  return ok ? ddprun::util::k_exit_success : ddprun::util::k_exit_failure;
}
