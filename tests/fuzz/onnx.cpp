// Fuzz target: ONNX models (frontend/onnx/model.h). A model that loads also runs on the NULL device with
// zero inputs of its declared shapes (when all are known and small), so the importer's ops see the
// mutated attributes and shapes too. Seeds: the node models of the ONNX backend test suite
// (libonnx-testdata); without it the target has no seeds and the driver skips.
#include <filesystem>

#include "frontend/onnx/backend_suite.h"
#include "frontend/onnx/model.h"
#include "hcq/tool.h"
#include "tests/fuzz/fuzz.h"

namespace sluice::fuzz {

std::vector<Bytes> seeds() {
  std::vector<Bytes> out;
  const std::string root = onnx::suite::data_dir();
  if (root.empty()) return out;
  for (const onnx::suite::Case& c : onnx::suite::list_cases(root, "onnx/node/*")) {
    const std::string model = hcq::read_file(std::filesystem::path(c.dir) / "model.onnx");
    out.emplace_back(model.begin(), model.end());
  }
  return out;
}

}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  using namespace sluice::onnx;
  return fuzz::reject_errors([&] {
    Model m = Model::from_bytes(std::as_bytes(std::span(data, size)), "fuzz.onnx", "", {.device = "NULL"});
    std::map<std::string, Value> in;
    for (const ValueInfo& i : m.inputs()) {
      if (i.kind != ValueInfo::Kind::Tensor || !i.has_shape) return;
      Shape s;
      for (const Dim& d : i.shape) {
        if (d.size < 0 || d.size > 64) return;
        s.push_back(d.size);
      }
      if (prod(s) > 4096) return;
      in[i.name] = Tensor::zeros(s, i.known_dtype ? i.dtype : dtypes::float32, "NULL");
    }
    m.run(in);
  });
}
