// ONNX ops: the image family (op.h).
#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const OpDef kOps[] = {
    {"__placeholder_image", 1, nullptr},
};

}  // namespace

std::span<const OpDef> image_ops() { return {kOps, 0}; }

}  // namespace sluice::onnx
