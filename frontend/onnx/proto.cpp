#include "frontend/onnx/proto.h"

#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace sluice::onnx {
namespace {

namespace fs = std::filesystem;

// TensorProto.DataType -> dtype; 0: not a type sluice has.
//                                 UNDEF  FLOAT    UINT8  INT8  UINT16  INT16  INT32  INT64  STRING  BOOL
constexpr Scalar kNoType = Scalar::Void;
constexpr Scalar kTypes[] = {kNoType, Scalar::Float32, Scalar::UInt8, Scalar::Int8, Scalar::UInt16,
                             Scalar::Int16, Scalar::Int32, Scalar::Int64, kNoType, Scalar::Bool,
                             // FLOAT16         DOUBLE           UINT32          UINT64
                             Scalar::Float16, Scalar::Float64, Scalar::UInt32, Scalar::UInt64,
                             // COMPLEX64 COMPLEX128 BFLOAT16
                             kNoType, kNoType, Scalar::BFloat16};
const char* const kTypeNames[] = {"undefined", "float",  "uint8",     "int8",       "uint16",  "int16",
                                  "int32",     "int64",  "string",    "bool",       "float16", "double",
                                  "uint32",    "uint64", "complex64", "complex128", "bfloat16"};

std::string type_name(int t) {
  return t >= 0 && t < int(std::size(kTypeNames)) ? kTypeNames[t] : "type " + std::to_string(t);
}

[[noreturn]] void fail(const std::string& where, const std::string& msg) {
  SLUICE_FAIL(ValueError, "onnx") << where << ": " << msg;
}

// Little-endian bytes of n values from a repeated field, each narrowed to T.
template <class T, class Field>
std::vector<std::byte> pack(const Field& f) {
  std::vector<std::byte> out(size_t(f.size()) * sizeof(T));
  for (int i = 0; i < f.size(); ++i) {
    T v = T(f.Get(i));
    std::memcpy(out.data() + size_t(i) * sizeof(T), &v, sizeof(T));
  }
  return out;
}

std::vector<std::byte> read_external(const ::onnx::TensorProto& t, const std::string& base_dir,
                                     const std::string& where) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    const std::string& k = kv.key();
    try {
      if (k == "location")
        location = kv.value();
      else if (k == "offset")
        offset = std::stoll(kv.value());
      else if (k == "length")
        length = std::stoll(kv.value());
    } catch (const std::exception&) {
      fail(where, "external data " + k + " '" + kv.value() + "' is not a number");
    }
  }
  if (location.empty()) fail(where, "external data without a location");
  if (base_dir.empty())
    fail(where, "external data '" + location + "' but the model was not read from a file");
  fs::path rel(location);
  if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
    fail(where, "external data location '" + location + "' is outside the model's folder");
  const fs::path file = fs::path(base_dir) / rel;
  std::error_code ec;
  const uintmax_t size = fs::file_size(file, ec);
  if (ec) fail(where, "external data file '" + file.string() + "' cannot be read: " + ec.message());
  if (offset < 0 || uintmax_t(offset) > size)
    fail(where, "external data offset " + std::to_string(offset) + " is past the end of '" + file.string() +
                    "' (" + std::to_string(size) + " bytes)");
  if (length < 0) length = int64_t(size - uintmax_t(offset));
  if (uintmax_t(offset) + uintmax_t(length) > size)
    fail(where, "external data offset " + std::to_string(offset) + " + length " + std::to_string(length) +
                    " is past the end of '" + file.string() + "' (" + std::to_string(size) + " bytes)");
  std::vector<std::byte> out(static_cast<size_t>(length));
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(out.data()), length);
  if (!in) fail(where, "reading " + std::to_string(length) + " bytes of '" + file.string() + "' failed");
  return out;
}

Attribute read_attribute(const ::onnx::AttributeProto& a, const std::string& base_dir,
                         const std::string& where, int depth);
std::shared_ptr<const Graph> read_graph(const ::onnx::GraphProto& g, const std::string& base_dir,
                                        const std::string& where, int depth);

ValueInfo read_value_info(const ::onnx::ValueInfoProto& v, const std::string& where) {
  ValueInfo info;
  info.name = v.name();
  if (v.has_type()) read_type(v.type(), info, where + ": '" + v.name() + "'");
  return info;
}

Attribute read_attribute(const ::onnx::AttributeProto& a, const std::string& base_dir,
                         const std::string& where, int depth) {
  using A = ::onnx::AttributeProto;
  const std::string at = where + ": attribute '" + a.name() + "'";
  int type = a.type();
  if (type == A::UNDEFINED) {  // files before IR version 2 leave it out: the field that is set tells
    type = a.has_f()          ? A::FLOAT
           : a.has_i()        ? A::INT
           : a.has_s()        ? A::STRING
           : a.has_t()        ? A::TENSOR
           : a.has_g()        ? A::GRAPH
           : a.floats_size()  ? A::FLOATS
           : a.ints_size()    ? A::INTS
           : a.strings_size() ? A::STRINGS
                              : A::UNDEFINED;
  }
  switch (type) {
    case A::FLOAT: return double(a.f());
    case A::INT: return int64_t(a.i());
    case A::STRING: return a.s();
    case A::TENSOR: return tensor_from_proto(a.t(), base_dir, at);
    case A::GRAPH: return read_graph(a.g(), base_dir, at, depth + 1);
    case A::FLOATS: return std::vector<double>(a.floats().begin(), a.floats().end());
    case A::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case A::STRINGS: return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case A::TYPE_PROTO: {
      ValueInfo info;
      read_type(a.tp(), info, at);
      return info;
    }
    default: break;
  }
  fail(at, "has type " + std::to_string(type) +
               ", which sluice does not read (sparse tensors, lists of "
               "tensors, graphs or types)");
}

std::shared_ptr<const Graph> read_graph(const ::onnx::GraphProto& g, const std::string& base_dir,
                                        const std::string& where, int depth) {
  // Nesting is bounded so that a corrupted file cannot recurse without end.
  if (depth > 64) fail(where, "subgraphs nested more than 64 deep");
  auto out = std::make_shared<Graph>();
  out->name = g.name();
  const std::string gw = where + (g.name().empty() ? "" : " (graph '" + g.name() + "')");
  for (const auto& v : g.input()) out->inputs.push_back(read_value_info(v, gw));
  for (const auto& v : g.output()) out->outputs.push_back(read_value_info(v, gw));
  for (const auto& t : g.initializer())
    out->initializers.push_back(tensor_from_proto(t, base_dir, gw + ": initializer '" + t.name() + "'"));
  if (g.sparse_initializer_size() > 0)
    fail(gw, "sparse initializer '" + g.sparse_initializer(0).values().name() +
                 "' (sparse tensors are not read)");
  out->nodes.reserve(size_t(g.node_size()));
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& n = g.node(k);
    Node node;
    node.op_type = n.op_type();
    node.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    node.name = n.name().empty() ? "#" + std::to_string(k) : n.name();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    const std::string nw = gw + ": node '" + node.name + "' (" + node.op_type + ")";
    for (const auto& a : n.attribute()) node.attrs[a.name()] = read_attribute(a, base_dir, nw, depth);
    out->nodes.push_back(std::move(node));
  }
  return out;
}

}  // namespace

DType dtype_from_onnx(int t, const std::string& where) {
  if (t <= 0 || t >= int(std::size(kTypes)) || kTypes[t] == kNoType)
    fail(where, "has element type " + type_name(t) + ", which sluice does not have");
  return DType{kTypes[t]};
}

int onnx_from_dtype(DType d) {
  for (int t = 1; t < int(std::size(kTypes)); ++t)
    if (kTypes[t] == d.scalar) return t;
  return 0;
}

std::string onnx_type_name(DType d) { return type_name(onnx_from_dtype(d)); }

void read_type(const ::onnx::TypeProto& type, ValueInfo& info, const std::string& where) {
  const ::onnx::TypeProto* t = &type;
  if (t->has_optional_type()) {
    info.kind = ValueInfo::Kind::Optional;
    t = &t->optional_type().elem_type();
    if (t->has_sequence_type()) {
      info.optional_of_sequence = true;
      t = &t->sequence_type().elem_type();
    }
  } else if (t->has_sequence_type()) {
    info.kind = ValueInfo::Kind::Sequence;
    t = &t->sequence_type().elem_type();
  }
  if (!t->has_tensor_type()) return;  // maps and other ML types: left unknown
  const auto& tt = t->tensor_type();
  if (tt.elem_type() != 0) {
    info.dtype = dtype_from_onnx(tt.elem_type(), where);
    info.known_dtype = true;
  }
  if (tt.has_shape()) {
    info.has_shape = true;
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value())
        dim.size = d.dim_value();
      else if (d.has_dim_param())
        dim.symbol = d.dim_param();
      info.shape.push_back(dim);
    }
  }
}

std::shared_ptr<const TensorData> tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir,
                                                    const std::string& where) {
  using T = ::onnx::TensorProto;
  auto out = std::make_shared<TensorData>();
  out->name = t.name();
  out->dtype = dtype_from_onnx(t.data_type(), where);
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) fail(where, "has a negative dimension " + std::to_string(d));
    if (d > 0 && n > (int64_t(1) << 48) / d) fail(where, "has more than 2^48 elements");
    n *= d;
    out->shape.push_back(d);
  }
  const size_t itemsize = size_t(out->dtype.itemsize());
  std::vector<std::byte> bytes;
  if (t.data_location() == T::EXTERNAL) {
    bytes = read_external(t, base_dir, where);
  } else if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const auto* r = reinterpret_cast<const std::byte*>(raw.data());
    bytes.assign(r, r + raw.size());
  } else {
    switch (t.data_type()) {
      case T::FLOAT: bytes = pack<float>(t.float_data()); break;
      case T::DOUBLE: bytes = pack<double>(t.double_data()); break;
      case T::INT64: bytes = pack<int64_t>(t.int64_data()); break;
      case T::UINT32: bytes = pack<uint32_t>(t.uint64_data()); break;
      case T::UINT64: bytes = pack<uint64_t>(t.uint64_data()); break;
      case T::INT32: bytes = pack<int32_t>(t.int32_data()); break;
      case T::INT16: bytes = pack<int16_t>(t.int32_data()); break;
      case T::UINT16:
      case T::FLOAT16:
      case T::BFLOAT16: bytes = pack<uint16_t>(t.int32_data()); break;
      case T::INT8: bytes = pack<int8_t>(t.int32_data()); break;
      case T::UINT8: bytes = pack<uint8_t>(t.int32_data()); break;
      case T::BOOL: bytes = pack<uint8_t>(t.int32_data()); break;
      default: break;
    }
  }
  if (bytes.size() != size_t(n) * itemsize)
    fail(where, "holds " + std::to_string(bytes.size()) + " bytes of data, but shape " +
                    tuple_str(out->shape) + " of " + type_name(t.data_type()) + " needs " +
                    std::to_string(size_t(n) * itemsize));
  if (out->dtype == dtypes::bool_)
    for (std::byte& b : bytes) b = b != std::byte{0} ? std::byte{1} : std::byte{0};
  auto host = std::make_shared<HostBuffer>();
  host->dtype = out->dtype;
  host->size = n;
  host->bytes = std::move(bytes);
  out->host = std::move(host);
  return out;
}

std::shared_ptr<const ParsedModel> parse_model_bytes(std::span<const std::byte> bytes,
                                                     const std::string& name, const std::string& base_dir) {
  if (bytes.size() > size_t(INT_MAX))
    fail(name, "is " + std::to_string(bytes.size()) +
                   " bytes, over protobuf's 2 GiB limit: store the weights as external data");
  ::onnx::ModelProto m;
  if (!m.ParseFromArray(bytes.data(), int(bytes.size())))
    fail(name, "is not a valid ONNX model (the protobuf does not parse: truncated or corrupted?)");
  if (!m.has_graph()) fail(name, "has no graph (truncated, or not an ONNX model?)");
  auto out = std::make_shared<ParsedModel>();
  out->name = name;
  out->ir_version = m.ir_version();
  out->producer = m.producer_name();
  for (const auto& o : m.opset_import()) {
    const std::string d = o.domain() == "ai.onnx" ? "" : o.domain();
    out->opsets[d] = o.version();
    if (d.empty()) out->opset = int(o.version());
  }
  if (m.opset_import_size() == 0) out->opset = 1;  // IR version 2 files: opset 1 is implied
  if (out->opset == 0 && !out->opsets.empty()) out->opset = kMaxOpset;  // only other domains imported
  out->graph = read_graph(m.graph(), base_dir, name, 0);
  return out;
}

std::shared_ptr<const ParsedModel> parse_model_file(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) fail(path, "does not exist or is not a file");
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot be read: " + ec.message());
  std::vector<std::byte> bytes(static_cast<size_t>(size));
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(size));
  if (!in) fail(path, "cannot be read");
  return parse_model_bytes(
      bytes, name,
      fs::path(path).parent_path().string().empty() ? "." : fs::path(path).parent_path().string());
}

std::string ValueInfo::type_str() const {
  std::ostringstream os;
  const std::string t = "tensor(" + (known_dtype ? onnx_type_name(dtype) : std::string("?")) + ")";
  os << (kind == Kind::Sequence ? "sequence(" + t + ")" : kind == Kind::Optional ? "optional(" + t + ")" : t);
  if (has_shape) {
    os << "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) os << ", ";
      if (shape[i].size >= 0)
        os << shape[i].size;
      else
        os << (shape[i].symbol.empty() ? "?" : shape[i].symbol);
    }
    os << "]";
  }
  return os.str();
}

}  // namespace sluice::onnx
