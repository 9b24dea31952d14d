#pragma once
// Runs the built `sluice` executable (SLUICE_CLI_PATH) as a user would, for the command-line tests. Not
// in namespace sluice: the tests call sluice(...), which a namespace of that name would hide.
#include <nlohmann/json.hpp>

#include <string>

namespace cli_test {

struct Proc {
  int code = -1;  // the exit status; -1 when it did not exit normally
  std::string out, err;
};

// Runs `env <env> sluice <args>` through the shell; stdout and stderr captured separately.
Proc sluice(const std::string& args, const std::string& env = "");
// Runs a shell command line; stdout and stderr captured separately.
Proc shell(const std::string& command);
// r.out as JSON; on a parse error, a test failure naming the output, and an empty object.
nlohmann::json parse(const Proc& r);

}  // namespace cli_test
