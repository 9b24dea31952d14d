#pragma once
// For tests of file formats on the CPU device: ScratchDirTest gives each test a fresh folder, dir_, named
// after the suite, the test and the process, removed with it (skipped where the CPU device is absent);
// bytes_of(t) is a tensor's bytes as storage holds them (half and bfloat16 as bits, bool as 0/1).
#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/realize.h"
#include "runtime/tensor.h"
#include "tests/ops/test_devices.h"

namespace sluice::testing_files {

class ScratchDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = testing_devices::absent("CPU"); !why.empty()) GTEST_SKIP() << "CPU: " << why;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("sluice-" + std::string(info->test_suite_name()) + "-" +
                                                     std::to_string(::getpid()) + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

inline std::vector<std::byte> bytes_of(Tensor t) {
  t.realize();
  return realizer(t.device()).read(t, "test");
}

}  // namespace sluice::testing_files
