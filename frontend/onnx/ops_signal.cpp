// ONNX ops: the signal family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_signal", 1, nullptr},
};

}  // namespace

std::span<const OpDef> signal_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
