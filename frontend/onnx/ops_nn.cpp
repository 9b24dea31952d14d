// ONNX ops: the nn family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_nn", 1, nullptr},
};

}  // namespace

std::span<const OpDef> nn_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
