// ONNX ops: the quant family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_quant", 1, nullptr},
};

}  // namespace

std::span<const OpDef> quant_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
