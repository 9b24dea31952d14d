#pragma once
// spirv-val (spirv-tools) run on modules from the tests: found on PATH, absent -> tests skip.
#include <string>
#include <vector>

namespace sluice::testing_spirv {

bool have_spirv_val();
// Writes each module to a temporary file and validates it under each target environment ("vulkan1.2"),
// a few processes at a time. Returns one line per failing (module, env): "name env: message"; empty when
// all pass. Modules are (name, bytes) pairs.
std::vector<std::string> validate(const std::vector<std::pair<std::string, std::string>>& modules,
                                  const std::vector<std::string>& envs);

}  // namespace sluice::testing_spirv
