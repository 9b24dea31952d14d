#pragma once
// A file written whole or not at all: to a temporary name unique across threads and processes in the same
// folder (created as needed), then renamed into place, so a reader sees the old file, the new one, or
// none. For caches: a file that cannot be written is skipped (false), never an error. Any thread.
#include <cstdint>
#include <filesystem>
#include <span>

namespace sluice::hcq {

bool write_file_atomic(const std::filesystem::path& p, std::span<const uint8_t> data);

}  // namespace sluice::hcq
