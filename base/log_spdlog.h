#pragma once
// The spdlog logger behind base/log.h, for applications that use spdlog themselves: add sinks, set a
// pattern, or register it (spdlog::register_logger). Needs spdlog's headers; set_log_level and
// set_log_sink act on this same logger.
#include <memory>

#include <spdlog/logger.h>

namespace sluice {
std::shared_ptr<spdlog::logger> spdlog_logger();
}
