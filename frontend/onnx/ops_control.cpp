// ONNX ops: the control family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_control", 1, nullptr},
};

}  // namespace

std::span<const OpDef> control_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
