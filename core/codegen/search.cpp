#include "core/codegen/search.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "core/codegen/codegen.h"
#include "core/codegen/lower.h"
#include "core/codegen/opts.h"

namespace sluice::codegen {
namespace {

struct ActionRow {
  OptOp op;
  std::vector<int64_t> args;
};
const ActionRow kActions[] = {
    {OptOp::Upcast, {0, 2, 3, 4, 5, 7, 8, 16}},
    {OptOp::Unroll, {0, 4, 7, 8}},
    {OptOp::Local, {2, 3, 4, 8, 13, 16, 29, 32}},
    {OptOp::GroupTop, {13, 16, 28, 29, 32, 49, 64, 256}},
    {OptOp::Group, {0, 4, 8, 16}},
    {OptOp::PadTo, {32}},
};

// What lowering depends on: the pieces (in a canonical order) and the padded sizes. A piece of size 1
// indexes nothing, whatever its stride (GROUP and GROUPTOP of a whole axis leave different ones).
using Signature = std::pair<std::vector<std::tuple<int64_t, int64_t, int64_t, int>>, std::vector<int64_t>>;
Signature signature(const Plan& p) {
  Signature s{{}, p.padded};
  for (const Piece& q : p.pieces)
    if (q.size > 1) s.first.emplace_back(q.axis, q.stride, q.size, int(q.kind));
  std::sort(s.first.begin(), s.first.end());
  return s;
}

}  // namespace

std::vector<Opt> search_actions(size_t open_axes) {
  std::vector<Opt> out;
  for (const ActionRow& row : kActions)
    for (int64_t arg : row.args)
      for (size_t axis = 0; axis < open_axes; ++axis) out.push_back({row.op, int64_t(axis), arg});
  return out;
}

std::vector<Candidate> next_candidates(const UOp& ast, const DeviceCaps& caps, const std::vector<Opt>& base) {
  const Analysis a = analyze(ast);
  Plan plan = make_plan(ast, a.full_shape, a.reduce_axes);
  for (const Opt& o : base) apply_opt(plan, o, caps);
  std::vector<Signature> seen{signature(plan)};
  std::vector<Candidate> out;
  for (const Opt& action : search_actions(plan.open().size())) {
    Plan next = plan;
    try {
      apply_opt(next, action, caps);
    } catch (const OptError&) { continue; }
    Signature sig = signature(next);
    if (std::find(seen.begin(), seen.end(), sig) != seen.end()) continue;
    seen.push_back(std::move(sig));
    std::vector<Opt> opts = base;
    opts.push_back(action);
    try {
      out.push_back({opts, make_kernel(ast, caps, opts)});
    } catch (const Error&) {  // a device limit the plan alone does not see (buffers, loop count)
    }
  }
  return out;
}

std::string opts_str(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts)
    s += (s.empty() ? "" : ", ") + std::string(opt_name(o.op)) + " axis " + std::to_string(o.axis) + " arg " +
         std::to_string(o.arg);
  return s.empty() ? "no opts" : s;
}

std::vector<Opt> parse_opts(const std::string& text) {
  std::vector<Opt> out;
  if (text.empty() || text == "no opts") return out;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::istringstream one(item);
    std::string name, axis_word, arg_word, rest;
    Opt o{};
    const bool read = bool(one >> name >> axis_word >> o.axis >> arg_word >> o.arg) && !(one >> rest);
    bool known = false;
    for (OptOp op : {OptOp::Upcast, OptOp::Unroll, OptOp::Local, OptOp::Group, OptOp::GroupTop, OptOp::PadTo,
                     OptOp::NoLocals, OptOp::TensorCore})
      if (name == opt_name(op)) o.op = op, known = true;
    SLUICE_CHECK_IN(ValueError, "parse_opts", read && known && axis_word == "axis" && arg_word == "arg")
        << "cannot read '" << item << "' as '<ACTION> axis <n> arg <n>' in '" << text << "'";
    out.push_back(o);
  }
  return out;
}

}  // namespace sluice::codegen
