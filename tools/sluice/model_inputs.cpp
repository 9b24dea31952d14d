#include "tools/sluice/model_inputs.h"

#include "runtime/npy.h"
#include "runtime/reference.h"
#include "tools/sluice/cli.h"

namespace sluice::cli {
namespace {

using onnx::ValueInfo;

Tensor random_input(const ValueInfo& in, const std::map<std::string, int64_t>& dims, uint64_t seed,
                    const std::string& device) {
  if (in.kind != ValueInfo::Kind::Tensor)
    throw UsageError("input '" + in.name + "' is " + in.type_str() + ": sluice run gives tensors only");
  Shape shape;
  for (const onnx::Dim& d : in.shape) {
    if (d.size >= 0) {
      shape.push_back(d.size);
    } else if (auto it = dims.find(d.symbol); !d.symbol.empty() && it != dims.end()) {
      shape.push_back(it->second);
    } else {
      throw UsageError("input '" + in.name + "' is " + in.type_str() + ": give --dim " +
                       (d.symbol.empty() ? std::string("SYMBOL") : d.symbol) + "=N or --input " + in.name +
                       "=FILE.npy");
    }
  }
  const DType dt = in.known_dtype ? in.dtype : dtypes::float32;
  Tensor r = dt.is_float()  ? Tensor::rand(shape, seed, dtypes::float32, device).cast(dt)
             : dt.is_bool() ? Tensor::rand(shape, seed, dtypes::float32, device).lt(0.5)
                            : Tensor::randint(shape, 0, 10, seed, dtypes::int32, device).cast(dt);
  eval::HostArray a = reference(r);
  auto host = std::make_shared<HostBuffer>();
  host->dtype = dt, host->size = a.numel(), host->bytes = a.to_bytes();
  return Tensor::from_host(std::move(host), shape, device);
}

}  // namespace

std::pair<std::string, std::string> split_eq(const std::string& s, const char* option) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(std::string(option) + " takes NAME=VALUE, got '" + s + "'");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

std::vector<Tensor> model_inputs(const std::vector<ValueInfo>& infos, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& dims, uint64_t seed,
                                 const std::string& device) {
  std::map<std::string, int64_t> sizes;
  for (const std::string& d : dims) {
    auto [k, v] = split_eq(d, "--dim");
    try {
      sizes[k] = std::stoll(v);
    } catch (const std::exception&) { throw UsageError("--dim " + d + ": the size is not a number"); }
  }
  std::map<std::string, std::string> given;
  for (const std::string& s : inputs) {
    auto [k, v] = split_eq(s, "--input");
    bool known = false;
    for (const ValueInfo& i : infos) known |= i.name == k;
    if (!known) {
      std::string names;
      for (const ValueInfo& i : infos) names += (names.empty() ? "" : ", ") + i.name;
      throw UsageError("--input " + s + ": the model has no input '" + k + "' (inputs: " + names + ")");
    }
    given[k] = v;
  }
  std::vector<Tensor> out;
  for (size_t k = 0; k < infos.size(); ++k) {
    auto it = given.find(infos[k].name);
    if (it == given.end() || it->second == "random") {
      out.push_back(random_input(infos[k], sizes, seed + k, device));
    } else {
      NpyArray a = read_npy(it->second);
      out.push_back(Tensor::from_host(a.data, a.shape, device));
    }
  }
  return out;
}

}  // namespace sluice::cli
