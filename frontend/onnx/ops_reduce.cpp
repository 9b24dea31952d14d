// ONNX ops: the reduce family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_reduce", 1, nullptr},
};

}  // namespace

std::span<const OpDef> reduce_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
