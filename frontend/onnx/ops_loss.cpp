// ONNX ops: the loss family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_loss", 1, nullptr},
};

}  // namespace

std::span<const OpDef> loss_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
