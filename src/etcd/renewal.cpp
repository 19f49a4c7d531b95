#include "ddprun/etcd/renewal.hpp"

#include "ddprun/util/backoff.hpp"

#include <algorithm>

namespace ddprun::etcd {
namespace {

constexpr std::chrono::milliseconds k_min_interval{200};
constexpr std::chrono::milliseconds k_first_retry{250};
constexpr int k_retry_doublings = 3;  // 250 ms x 2^3 = 2 s, before the spread

}  // namespace

std::chrono::milliseconds RenewalSchedule::after_renewed(double spread) const {
  const double share = 1.0 + (std::clamp(spread, 0.5, 1.5) - 0.5) / 4;  // 1 up to 5/4
  const auto third = static_cast<double>(ttl.count()) / 3;
  return std::max(std::chrono::milliseconds(static_cast<long long>(third * share)), k_min_interval);
}

std::chrono::milliseconds RenewalSchedule::after_failed(int failures, double spread) const {
  const auto pause = util::backoff_pause(k_first_retry, failures - 1, k_retry_doublings, spread);
  return std::min(pause, after_renewed(spread));
}

bool RenewalSchedule::gives_up(std::chrono::milliseconds unanswered) const {
  return unanswered >= 2 * ttl;
}

}  // namespace ddprun::etcd
