#pragma once
// An ONNX model as the importer holds it (parsed once from the protobuf by proto.cpp): graphs of nodes
// with typed attributes, initializers as host bytes. Nothing here refers to protobuf, so ops and tests
// read plain structs. Immutable once parsed; shared between runs, threads and subgraph calls.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/uop.h"
#include "runtime/buffer.h"

namespace sluice::onnx {

// The opset versions of ONNX's default domain that the importer reads.
inline constexpr int kMinOpset = 1, kMaxOpset = 21;

// One dimension of a declared shape: a size, a symbol ("batch") or unknown (size -1, no symbol).
struct Dim {
  int64_t size = -1;
  std::string symbol;
};

// A graph input or output as the model declares it.
struct ValueInfo {
  enum class Kind : uint8_t { Tensor, Sequence, Optional };
  std::string name;
  Kind kind = Kind::Tensor;
  bool optional_of_sequence = false;  // Optional whose element is a sequence
  bool known_dtype = false;   // false: the model does not say (a subgraph's inputs may not)
  DType dtype = dtypes::float32;
  bool has_shape = false;     // false: any rank
  std::vector<Dim> shape;
  std::string type_str() const;  // "tensor(float)[batch, 3, 224, 224]", "sequence(tensor(int64))"
};

// An initializer or a tensor-valued attribute: its bytes as storage holds them (little-endian).
struct TensorData {
  std::string name;
  DType dtype = dtypes::float32;
  Shape shape;
  std::shared_ptr<const HostBuffer> host;
};

struct Graph;

// A TYPE_PROTO attribute (Optional's `type`) is read as a ValueInfo without a name.
using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, std::shared_ptr<const TensorData>,
                               std::shared_ptr<const Graph>, ValueInfo>;

struct Node {
  std::string op_type, domain, name;    // name: the node's own, or "#k" (its index) when it has none
  std::vector<std::string> inputs;       // "" for an absent optional input
  std::vector<std::string> outputs;      // "" for an unused optional output
  std::map<std::string, Attribute> attrs;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;  // in a topological order (the format requires it)
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::shared_ptr<const TensorData>> initializers;
};

// A parsed model file.
struct ParsedModel {
  std::string name;   // the file's name, for messages
  int64_t ir_version = 0;
  int opset = 0;      // of the default domain ("" or "ai.onnx")
  std::map<std::string, int64_t> opsets;  // every domain the model imports
  std::string producer;
  std::shared_ptr<const Graph> graph;
};

}  // namespace sluice::onnx
