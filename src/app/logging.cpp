#include "logging.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ddprun::app {

namespace {

spdlog::level::level_enum spdlog_level(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::trace:
      return spdlog::level::trace;
    case config::LogLevel::debug:
      return spdlog::level::debug;
    case config::LogLevel::info:
      return spdlog::level::info;
    case config::LogLevel::warning:
      return spdlog::level::warn;
    case config::LogLevel::error:
      return spdlog::level::err;
    case config::LogLevel::critical:
      return spdlog::level::critical;
    case config::LogLevel::off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

}  // namespace

void setup_logging(config::LogLevel level) {
  auto logger = spdlog::stderr_logger_st("ddprun");
  logger->set_pattern("%L%m%d %H:%M:%S.%f %P ddprun] %v");
  logger->set_level(spdlog_level(level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

}  // namespace ddprun::app
