// sluice --version prints the version project(VERSION) in CMakeLists.txt gives (SLUICE_PROJECT_VERSION), as
// "sluice X.Y.Z", and exits 0, whatever else the command line requires.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/sluice_process.h"

TEST(Cli, VersionPrintsTheProjectVersion) {
  cli_test::Proc r = cli_test::sluice("--version");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("sluice ") + SLUICE_PROJECT_VERSION + "\n");
  EXPECT_EQ(r.err, "");
}
