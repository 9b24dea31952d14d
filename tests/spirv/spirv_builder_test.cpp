// The SPIR-V builder (renderers/spirv_builder.h): deduplication, capabilities declared only when used,
// the module layout, and a hand-built compute module that spirv-val accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "renderers/spirv_builder.h"
#include "tests/spirv/spirv_val.h"

namespace sluice::spirv {
namespace {

struct Inst {
  uint32_t op;
  std::vector<uint32_t> operands;
};
std::vector<Inst> parse(const std::vector<uint32_t>& w) {
  std::vector<Inst> out;
  for (size_t i = 5; i < w.size();) {
    const uint32_t n = w[i] >> 16;
    out.push_back({w[i] & 0xffff, std::vector<uint32_t>(w.begin() + long(i) + 1, w.begin() + long(i + n))});
    i += n ? n : 1;
  }
  return out;
}
std::set<uint32_t> caps_of(const std::vector<uint32_t>& w) {
  std::set<uint32_t> c;
  for (const Inst& i : parse(w))
    if (i.op == uint32_t(Op::Capability)) c.insert(i.operands[0]);
  return c;
}

// void main() { data[gid.x] = gid.x * 2 for each i < 3 ... } with a loop, a guarded store and GLSL.std.450.
std::vector<uint32_t> hand_built(uint32_t version) {
  Builder b(version);
  const Id u32 = b.type_int(32), f32 = b.type_float(32), v3 = b.type_vector(u32, 3), boolean = b.type_bool();
  const Id arr = b.type_runtime_array(f32);
  b.decorate(arr, Decoration::ArrayStride, {4});
  const Id st = b.type_struct({arr});
  b.decorate(st, Decoration::Block);
  b.member_decorate(st, 0, Decoration::Offset, {0});
  const Id buf = b.variable(b.type_pointer(Storage::StorageBuffer, st), Storage::StorageBuffer);
  b.decorate(buf, Decoration::DescriptorSet, {0});
  b.decorate(buf, Decoration::Binding, {0});
  const Id gid = b.variable(b.type_pointer(Storage::Input, v3), Storage::Input);
  b.decorate(gid, Decoration::BuiltIn, {uint32_t(BuiltIn::WorkgroupId)});
  const Id fn = b.begin_function(b.type_void(), b.type_function(b.type_void()));
  const Id entry = b.fresh(), header = b.fresh(), body = b.fresh(), then = b.fresh(), sel = b.fresh(),
           cont = b.fresh(), merge = b.fresh(), i = b.fresh(), next = b.fresh();
  b.label(entry);
  const Id acc = b.local_variable(b.type_pointer(Storage::Function, f32));
  b.inst(Op::Store, {acc, b.constant_float(f32, 0)});
  const Id x = b.value(Op::CompositeExtract, u32, {b.value(Op::Load, v3, {gid}), 0});
  b.inst(Op::Branch, {header});
  b.label(header);
  b.value(Op::Phi, u32, {b.constant_int(u32, 0), entry, next, cont}, i);
  const Id c = b.value(Op::SLessThan, boolean, {i, b.constant_int(u32, 3)});
  b.inst(Op::LoopMerge, {merge, cont, 0});
  b.inst(Op::BranchConditional, {c, body, merge});
  b.label(body);
  const Id xf = b.value(Op::ConvertUToF, f32, {b.value(Op::IAdd, u32, {x, i})});
  b.inst(Op::Store,
         {acc, b.value(Op::FAdd, f32, {b.value(Op::Load, f32, {acc}), b.ext(f32, Glsl::Sqrt, {xf})})});
  b.inst(Op::Branch, {cont});
  b.label(cont);
  b.value(Op::IAdd, u32, {i, b.constant_int(u32, 1)}, next);
  b.inst(Op::Branch, {header});
  b.label(merge);
  const Id even =
      b.value(Op::IEqual, boolean,
              {b.value(Op::BitwiseAnd, u32, {x, b.constant_int(u32, 1)}), b.constant_int(u32, 0)});
  b.inst(Op::SelectionMerge, {sel, 0});
  b.inst(Op::BranchConditional, {even, then, sel});
  b.label(then);
  const Id p =
      b.value(Op::AccessChain, b.type_pointer(Storage::StorageBuffer, f32), {buf, b.constant_int(u32, 0), x});
  b.inst(Op::Store, {p, b.value(Op::Load, f32, {acc})});
  b.inst(Op::Branch, {sel});
  b.label(sel);
  b.inst(Op::Return, {});
  b.end_function();
  std::vector<Id> iface{gid};
  if (version >= 0x00010400) iface.push_back(buf);
  b.entry_point(fn, "hand_built", iface);
  b.execution_mode(fn, ExecutionMode::LocalSize, {1, 1, 1});
  return b.words();
}

TEST(SpirvBuilder, TypesAndConstantsAreDeduplicated) {
  Builder b;
  const Id i32 = b.type_int(32), f32 = b.type_float(32);
  EXPECT_EQ(b.type_int(32), i32);
  EXPECT_NE(b.type_int(16), i32);
  EXPECT_EQ(b.type_vector(f32, 4), b.type_vector(f32, 4));
  EXPECT_NE(b.type_vector(f32, 4), b.type_vector(f32, 2));
  EXPECT_EQ(b.type_pointer(Storage::Function, f32), b.type_pointer(Storage::Function, f32));
  EXPECT_NE(b.type_pointer(Storage::Function, f32), b.type_pointer(Storage::Workgroup, f32));
  EXPECT_EQ(b.constant_int(i32, 7), b.constant_int(i32, 7));
  EXPECT_NE(b.constant_int(i32, 7), b.constant_int(i32, 8));
  EXPECT_EQ(b.constant_float(f32, 1.5), b.constant_float(f32, 1.5));
  EXPECT_NE(b.constant_float(f32, 0.0), b.constant_float(f32, -0.0));  // by bits
  EXPECT_EQ(b.constant_bool(true), b.constant_bool(true));
  EXPECT_NE(b.type_struct({f32}), b.type_struct({f32}));  // structs carry their own decorations
  // Each declaration appears once in the module.
  size_t ints = 0;
  for (const Inst& in : parse([&] {
         b.begin_function(b.type_void(), b.type_function(b.type_void()));
         b.label(b.fresh());
         b.inst(Op::Return, {});
         b.end_function();
         return b.words();
       }()))
    ints += in.op == uint32_t(Op::TypeInt) && in.operands[1] == 32;
  EXPECT_EQ(ints, 1u);
}

TEST(SpirvBuilder, NarrowConstantsAreZeroExtended) {
  Builder b;
  const Id u8 = b.type_int(8), i64 = b.type_int(64);
  b.constant_int(u8, uint64_t(-1));
  b.constant_int(i64, 0x123456789abcdef0ull);
  b.begin_function(b.type_void(), b.type_function(b.type_void()));
  b.label(b.fresh());
  b.inst(Op::Return, {});
  b.end_function();
  std::vector<std::vector<uint32_t>> consts;
  for (const Inst& in : parse(b.words()))
    if (in.op == uint32_t(Op::Constant)) consts.push_back({in.operands.begin() + 2, in.operands.end()});
  ASSERT_EQ(consts.size(), 2u);
  EXPECT_EQ(consts[0], (std::vector<uint32_t>{0xff}));
  EXPECT_EQ(consts[1], (std::vector<uint32_t>{0x9abcdef0u, 0x12345678u}));
}

TEST(SpirvBuilder, CapabilitiesOnlyWhenUsed) {
  Builder b;
  b.type_int(32), b.type_float(32), b.type_int(8), b.type_float(16);  // 8/16 bits: the caller's choice
  EXPECT_EQ(caps_of(b.words()), (std::set<uint32_t>{uint32_t(Capability::Shader)}));
  b.type_int(64);
  EXPECT_TRUE(caps_of(b.words()).count(uint32_t(Capability::Int64)));
  EXPECT_FALSE(caps_of(b.words()).count(uint32_t(Capability::Float64)));
  b.type_float(64);
  b.capability(Capability::Int8);
  b.capability(Capability::Int8);
  const std::set<uint32_t> want{uint32_t(Capability::Shader), uint32_t(Capability::Int64),
                                uint32_t(Capability::Float64), uint32_t(Capability::Int8)};
  EXPECT_EQ(caps_of(b.words()), want);
  b.extension("SPV_KHR_8bit_storage");
  b.extension("SPV_KHR_8bit_storage");
  size_t exts = 0;
  for (const Inst& in : parse(b.words())) exts += in.op == uint32_t(Op::Extension);
  EXPECT_EQ(exts, 1u);
}

TEST(SpirvBuilder, HeaderAndLayout) {
  const std::vector<uint32_t> w = hand_built(0x00010500);
  ASSERT_GT(w.size(), 5u);
  EXPECT_EQ(w[0], 0x07230203u);
  EXPECT_EQ(w[1], 0x00010500u);
  EXPECT_GT(w[3], 20u);  // the id bound
  EXPECT_EQ(w[4], 0u);
  // Capability comes first, then the GLSL.std.450 import, the memory model, the entry point.
  const std::vector<Inst> in = parse(w);
  EXPECT_EQ(in[0].op, uint32_t(Op::Capability));
  auto pos = [&](Op o) {
    return std::find_if(in.begin(), in.end(), [&](const Inst& i) { return i.op == uint32_t(o); }) -
           in.begin();
  };
  EXPECT_LT(pos(Op::ExtInstImport), pos(Op::MemoryModel));
  EXPECT_LT(pos(Op::MemoryModel), pos(Op::EntryPoint));
  EXPECT_LT(pos(Op::EntryPoint), pos(Op::Decorate));
  EXPECT_LT(pos(Op::Decorate), pos(Op::TypeInt));
  EXPECT_LT(pos(Op::TypeInt), pos(Op::Function));
  // The Function-storage variable sits right after the first label, before the code that made it.
  const auto label = pos(Op::Label);
  ASSERT_LT(size_t(label + 1), in.size());
  EXPECT_EQ(in[size_t(label + 1)].op, uint32_t(Op::Variable));
}

TEST(SpirvBuilder, HandBuiltModuleValidates) {
  if (!testing_spirv::have_spirv_val()) GTEST_SKIP() << "spirv-val (spirv-tools) is not on PATH";
  const auto errors = testing_spirv::validate({{"hand_built_1.5", to_bytes(hand_built(0x00010500))},
                                               {"hand_built_1.3", to_bytes(hand_built(0x00010300))}},
                                              {"vulkan1.2", "vulkan1.3"});
  for (const std::string& e : errors) ADD_FAILURE() << e;
  // And a broken one is rejected: the check can fail.
  std::vector<uint32_t> bad = hand_built(0x00010500);
  bad.resize(bad.size() - 1);  // drop OpFunctionEnd
  EXPECT_EQ(testing_spirv::validate({{"truncated", to_bytes(bad)}}, {"vulkan1.2"}).size(), 1u);
}

TEST(SpirvBuilder, RejectsUnknownVersion) {
  EXPECT_THROW(Builder(0x00010000), Error);
  EXPECT_THROW(Builder(0x00020000), Error);
}

}  // namespace
}  // namespace sluice::spirv
