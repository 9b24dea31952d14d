#pragma once
// What every scheduled kernel must satisfy (the AST format of core/schedule/schedule.h), for the schedule
// tests: no movement op anywhere, one number of axes for every VIEW, shapes that agree (elementwise
// sources share one, a reduce sets its axes to 1, a STORE's VIEW matches its value), and DEFINE_GLOBALs
// that name the item's buffers with their dtype and size.
#include <gtest/gtest.h>

#include <unordered_map>

#include "core/ir/shape_tracker.h"
#include "core/schedule/schedule.h"

namespace sluice::testing {

inline const ShapeTracker& st(const UOp& view) {
  return static_cast<const ShapeTracker&>(*view.arg_as<std::shared_ptr<const ArgObject>>());
}

// The shape u computes in; memoized, since ASTs share subtrees.
inline Shape ast_shape(const UOp& u, std::unordered_map<const UOpNode*, Shape>& memo) {
  if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
  Shape s;
  switch (u.op()) {
    case Op::Load: s = st(u.src(1)).shape(); break;
    case Op::Const: s = st(u.src(0)).shape(); break;
    case Op::ReduceAxis:
      s = ast_shape(u.src(0), memo);
      for (int64_t a : u.arg_as<ReduceArg>().axes) s[size_t(a)] = 1;
      break;
    case Op::Store:
      s = ast_shape(u.src(2), memo);
      EXPECT_EQ(st(u.src(1)).shape(), s) << "STORE view and value differ";
      break;
    default:
      EXPECT_TRUE(is_alu(u.op()) || u.op() == Op::Cast || u.op() == Op::Bitcast) << op_name(u.op());
      s = ast_shape(u.src(0), memo);
      for (const UOp& x : u.src()) EXPECT_EQ(ast_shape(x, memo), s) << "sources of " << op_name(u.op());
  }
  return memo[u.get()] = s;
}

inline void expect_well_formed(const ScheduleItem& si) {
  size_t ndim = SIZE_MAX;
  for (const UOp& u : si.ast.toposort()) {
    EXPECT_FALSE(is_movement(u.op())) << ast_str(si);
    if (u.op() == Op::View) {
      if (ndim == SIZE_MAX) ndim = st(u).shape().size();
      EXPECT_EQ(st(u).shape().size(), ndim) << ast_str(si);
    }
    if (u.op() == Op::DefineGlobal) {
      size_t i = size_t(u.arg_as<int64_t>());
      ASSERT_LT(i, si.bufs.size());
      EXPECT_EQ(u.dtype(), si.bufs[i].dtype().ptr(AddrSpace::Global, si.bufs[i].arg_as<int64_t>()));
    }
  }
  if (si.ast.op() == Op::Sink) {
    std::unordered_map<const UOpNode*, Shape> memo;
    for (const UOp& store : si.ast.src()) {
      ASSERT_EQ(store.op(), Op::Store);
      ast_shape(store, memo);
    }
  } else {
    ASSERT_EQ(si.ast.op(), Op::Copy);
    EXPECT_EQ(si.bufs.size(), 2u);
  }
}

}  // namespace sluice::testing
