// ONNX ops: the index family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_index", 1, nullptr},
};

}  // namespace

std::span<const OpDef> index_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
