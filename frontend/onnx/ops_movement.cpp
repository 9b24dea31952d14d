// ONNX ops: the movement family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_movement", 1, nullptr},
};

}  // namespace

std::span<const OpDef> movement_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
