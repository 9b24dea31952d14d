// ONNX ops: the rnn family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_rnn", 1, nullptr},
};

}  // namespace

std::span<const OpDef> rnn_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
