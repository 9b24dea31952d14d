#pragma once
// The inputs `sluice run` and `sluice compile` give a model: `--input NAME=FILE.npy` or `NAME=random`,
// and `--dim SYMBOL=N` for the symbolic sizes of random ones. UsageError for a malformed option or a name
// the model lacks; read_npy's ValueError for a bad file.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/graph.h"
#include "runtime/tensor.h"

namespace sluice::cli {

// "NAME=VALUE" split at the first '='; UsageError naming the option otherwise.
std::pair<std::string, std::string> split_eq(const std::string& s, const char* option);

// One tensor per input, in `infos` order: read from the .npy file `inputs` names for it, else random
// values of its type (floats uniform in [0, 1), integers in [0, 10), bools; input k seeded seed + k),
// its symbolic sizes from `dims`. Made on the host, so a timed run starts from host data as a file's would.
std::vector<Tensor> model_inputs(const std::vector<onnx::ValueInfo>& infos,
                                 const std::vector<std::string>& inputs, const std::vector<std::string>& dims,
                                 uint64_t seed, const std::string& device);

}  // namespace sluice::cli
