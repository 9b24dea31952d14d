#pragma once
// Reading ONNX files through the ONNX project's own protobuf classes (onnx/onnx-ml.pb.h): a model into
// the importer's structs (graph.h), and a serialized tensor (the backend suite's input_0.pb). Weights in
// external data files (`location`, `offset`, `length`, relative to the model's folder) are read too, with
// every offset and length checked against the file, so a model over protobuf's 2 GiB limit loads.
//
// Failures: ValueError "[onnx] NAME: ..." naming the file, the graph element and the values: a file that
// does not parse (truncated, corrupted, not ONNX), a tensor whose data does not fill its shape, a missing
// external file, an offset or length past its end, a type sluice does not have (string, complex).
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "frontend/onnx/graph.h"

namespace onnx {
class TensorProto;
class TypeProto;
}  // namespace onnx

namespace sluice::onnx {

// The model in `path`; external data is read relative to its folder.
std::shared_ptr<const ParsedModel> parse_model_file(const std::string& path);
// A model from bytes in memory; `name` labels messages, `base_dir` resolves external data ("" : none
// allowed).
std::shared_ptr<const ParsedModel> parse_model_bytes(std::span<const std::byte> bytes, const std::string& name,
                                                     const std::string& base_dir);

// A TensorProto's contents. `where` names it in messages ("model.onnx: initializer 'w'").
std::shared_ptr<const TensorData> tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir,
                                                    const std::string& where);
// A ValueInfo's type (tensor, sequence, optional) from a TypeProto.
void read_type(const ::onnx::TypeProto& type, ValueInfo& info, const std::string& where);

// The sluice dtype of an ONNX TensorProto.DataType; ValueError naming `where` for string, complex and
// unknown types.
DType dtype_from_onnx(int onnx_type, const std::string& where);
// The ONNX data type of a sluice dtype, and its ONNX name ("float", "int64", "float16").
int onnx_from_dtype(DType dtype);
std::string onnx_type_name(DType dtype);

}  // namespace sluice::onnx
