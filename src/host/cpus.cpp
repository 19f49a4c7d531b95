#include "ddprun/host/cpus.hpp"

#include "ddprun/util/strings.hpp"

namespace ddprun::host {

namespace {

Error bad_list(std::string_view text, std::string_view item) {
  return make_error(ErrorCode::config, "cpu list " + util::quoted(text) + ": item " +
                                           util::quoted(item) + " is not N or LO-HI with 0 <= " +
                                           "LO <= HI <= " + std::to_string(k_max_cpu_id));
}

bool is_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  const auto body = util::trim(text);
  if (body.empty()) {
    return cpus;
  }
  for (const auto& item : util::split(body, ',')) {
    const auto dash = item.find('-');
    const std::string_view lo_text = std::string_view(item).substr(0, dash);
    const std::string_view hi_text =
        dash == std::string::npos ? lo_text : std::string_view(item).substr(dash + 1);
    if (!is_digits(lo_text) || !is_digits(hi_text)) {
      return bad_list(text, item);
    }
    auto lo = util::parse_int_in(lo_text, 0, k_max_cpu_id);
    auto hi = util::parse_int_in(hi_text, 0, k_max_cpu_id);
    if (!lo || !hi || *lo > *hi) {
      return bad_list(text, item);
    }
    for (auto c = *lo; c <= *hi; ++c) {
      cpus.push_back(static_cast<int>(c));
    }
  }
  return cpus;
}

std::vector<std::vector<int>> split_cpus_for_workers(const std::vector<int>& cpus, int nproc) {
  std::vector<std::vector<int>> out;
  if (nproc <= 0 || cpus.empty()) {
    return out;
  }
  const auto workers = static_cast<std::size_t>(nproc);
  if (cpus.size() < workers) {
    for (std::size_t i = 0; i < workers; ++i) {
      out.push_back({cpus[i % cpus.size()]});
    }
    return out;
  }
  const std::size_t base = cpus.size() / workers;
  const std::size_t extra = cpus.size() % workers;
  auto it = cpus.begin();
  for (std::size_t i = 0; i < workers; ++i) {
    const auto n = static_cast<std::ptrdiff_t>(base + (i < extra ? 1 : 0));
    out.emplace_back(it, it + n);
    it += n;
  }
  return out;
}

std::optional<std::string> small_cpu_mask_warning(int cpu_count, int nproc,
                                                  std::string_view scheduler) {
  if (cpu_count >= nproc) {
    return std::nullopt;
  }
  std::string line = "only " + std::to_string(cpu_count) +
                     " CPU(s) in the inherited affinity mask for " + std::to_string(nproc) +
                     " workers; they will share them";
  if (scheduler == "slurm") {
    line += " (under Slurm ask for more with srun --cpus-per-task=N, or --cpu-bind=none)";
  }
  return line;
}

}  // namespace ddprun::host
