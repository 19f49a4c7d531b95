#include "logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ddprun::app {

void setup_logging(const std::string& level) {
  auto logger = spdlog::stderr_logger_st("ddprun");
  logger->set_pattern("%L%m%d %H:%M:%S.%f %P ddprun] %v");
  logger->set_level(spdlog::level::from_str(level == "warning" ? "warn" : level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace ddprun::app
