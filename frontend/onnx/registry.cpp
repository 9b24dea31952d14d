// The op table: every family's rows, joined once (op.h).
#include <algorithm>
#include <unordered_map>

#include "frontend/onnx/op.h"

namespace sluice::onnx {
namespace {

const std::unordered_map<std::string, const OpDef*>& table() {
  static const auto* t = [] {
    auto* m = new std::unordered_map<std::string, const OpDef*>;
    for (auto family : {elementwise_ops, reduce_ops, movement_ops, index_ops, nn_ops, loss_ops, image_ops,
                        rnn_ops, control_ops, quant_ops, signal_ops, text_ops, random_ops})
      for (const OpDef& d : family()) m->emplace(d.name, &d);
    return m;
  }();
  return *t;
}

}  // namespace

const OpDef* find_op(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : it->second;
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> out;
  for (const auto& [name, d] : table()) out.push_back(d);
  std::sort(out.begin(), out.end(),
            [](const OpDef* a, const OpDef* b) { return std::string(a->name) < b->name; });
  return out;
}

}  // namespace sluice::onnx
