// The suite's kernels for VULKAN: SPIR-V assembly (renderers/spirv.h ABI: buffer i = set 0 binding i,
// variable i = push constant at 4*i, the flattened work-group id indexes), assembled on first use with
// spirv-as from SPIRV-Tools (scripts/install-deps.sh, group vulkan). Without spirv-as the kernels cannot be
// built, and the checks that need them skip with that reason (check.h: Context::kernels).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "hcq/error.h"

namespace sluice::conformance {
namespace {

// Types, the builtins, `nbufs` int buffers (%b0, %b1, ...), the push constants if `vars`, and %g: the
// flattened work-group id x + nx * (y + ny * z). `body` follows, then the function ends.
std::string module(const std::string& name, int nbufs, bool vars, const std::string& body,
                   const std::string& caps = "", const std::string& types = "",
                   const std::string& more_iface = "") {
  std::string iface = " %wg %nwg" + more_iface, decor, decl;
  for (int i = 0; i < nbufs; ++i) {
    std::string b = "%b" + std::to_string(i);
    iface += " " + b;
    decor += "OpDecorate " + b + " DescriptorSet 0\nOpDecorate " + b + " Binding " + std::to_string(i) + "\n";
    decl += b + " = OpVariable %pbuf StorageBuffer\n";
  }
  if (vars) {
    iface += " %vars";
    decor += "OpMemberDecorate %pc 0 Offset 0\nOpDecorate %pc Block\n";
    decl +=
        "%pc = OpTypeStruct %int\n%ppc = OpTypePointer PushConstant %pc\n%vars = OpVariable %ppc "
        "PushConstant\n"
        "%ppcint = OpTypePointer PushConstant %int\n";
  }
  return "OpCapability Shader\n" + caps + "OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"" +
         name + "\"" + iface +
         "\nOpExecutionMode %main LocalSize 1 1 1\n"
         "OpDecorate %wg BuiltIn WorkgroupId\nOpDecorate %nwg BuiltIn NumWorkgroups\n"
         "OpDecorate %rta ArrayStride 4\nOpMemberDecorate %buf 0 Offset 0\nOpDecorate %buf Block\n" +
         decor +
         "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n%bool = OpTypeBool\n%uint = OpTypeInt 32 0\n"
         "%int = OpTypeInt 32 1\n%v3 = OpTypeVector %uint 3\n%pv3 = OpTypePointer Input %v3\n"
         "%wg = OpVariable %pv3 Input\n%nwg = OpVariable %pv3 Input\n%rta = OpTypeRuntimeArray %int\n"
         "%buf = OpTypeStruct %rta\n%pbuf = OpTypePointer StorageBuffer %buf\n"
         "%pint = OpTypePointer StorageBuffer %int\n%c0 = OpConstant %uint 0\n%c1 = OpConstant %uint 1\n"
         "%i0 = OpConstant %int 0\n%i1 = OpConstant %int 1\n" +
         decl + types +
         "%main = OpFunction %void None %fn\n%entry = OpLabel\n"
         "%w = OpLoad %v3 %wg\n%n = OpLoad %v3 %nwg\n"
         "%wx = OpCompositeExtract %uint %w 0\n%wy = OpCompositeExtract %uint %w 1\n"
         "%wz = OpCompositeExtract %uint %w 2\n%nx = OpCompositeExtract %uint %n 0\n"
         "%ny = OpCompositeExtract %uint %n 1\n%t1 = OpIMul %uint %ny %wz\n%t2 = OpIAdd %uint %wy %t1\n"
         "%t3 = OpIMul %uint %nx %t2\n%g = OpIAdd %uint %wx %t3\n" +
         body + "OpReturn\nOpFunctionEnd\n";
}

const std::string kVar0 = "%pv = OpAccessChain %ppcint %vars %c0\n%k = OpLoad %int %pv\n";

// cts_spin cannot spin on the suite's flag: the suite passes a host pointer (a std::atomic of the test),
// and a Vulkan storage buffer can neither hold an arbitrary host address (VK_EXT_external_memory_host
// imports whole pages, and a descriptor must start at a multiple of minStorageBufferOffsetAlignment,
// 16 bytes on lavapipe, while the flag sits 4 bytes into a block). So the module declares no binding for it
// (the backend then binds nothing) and spins for 2^30 ticks of the device clock (VK_KHR_shader_clock)
// instead, bounded because Vulkan cannot cancel a dispatch. llvmpipe hoists the clock read out of the loop
// and deletes the loop, so on lavapipe it returns at once; VULKAN declares queue/hung_kernel unsupported
// (runtime/expectations.cpp) and the hang check does not run it.
const std::vector<std::string>& sources() {
  static const std::vector<std::string> s = {
      module("cts_fill", 1, true,
             kVar0 + "%gi = OpBitcast %int %g\n%v = OpIAdd %int %k %gi\n"
                     "%po = OpAccessChain %pint %b0 %c0 %g\nOpStore %po %v\n"),
      module("cts_add", 2, true,
             kVar0 + "%pi = OpAccessChain %pint %b1 %c0 %g\n%x = OpLoad %int %pi\n%v = OpIAdd %int %x %k\n"
                     "%po = OpAccessChain %pint %b0 %c0 %g\nOpStore %po %v\n"),
      module("cts_inc", 1, false,
             "%p = OpAccessChain %pint %b0 %c0 %g\n%x = OpLoad %int %p\n%v = OpIAdd %int %x %i1\nOpStore %p "
             "%v\n"),
      module("cts_empty", 0, false, ""),
      module("cts_spin", 0, false,
             "%start = OpReadClockKHR %ulong %c1\nOpBranch %head\n"
             "%head = OpLabel\nOpLoopMerge %done %cont None\nOpBranch %body\n%body = OpLabel\n"
             "%now = OpReadClockKHR %ulong %c1\n%ran = OpISub %ulong %now %start\n"
             "%go = OpULessThan %bool %ran %limit\nOpBranchConditional %go %cont %done\n"
             "%cont = OpLabel\nOpBranch %head\n%done = OpLabel\n",
             "OpCapability Int64\nOpCapability ShaderClockKHR\nOpExtension \"SPV_KHR_shader_clock\"\n",
             "%ulong = OpTypeInt 64 0\n%limit = OpConstant %ulong 1073741824\n"),
  };
  return s;
}

// spirv-as over a temporary file; the module's bytes.
std::string assemble(const std::string& text) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path base = fs::temp_directory_path() /
                  ("sluice-cts-spv-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::path in = base, out = base;
  in += ".spvasm";
  out += ".spv";
  std::ofstream(in) << text;
  std::string cmd = "spirv-as --target-env vulkan1.2 -o '" + out.string() + "' '" + in.string() + "' 2>&1";
  std::string diag;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) SLUICE_FAIL(hcq::CompileError, "load_kernels") << "cannot run spirv-as";
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) diag.append(buf, n);
  int rc = ::pclose(p);
  std::ifstream f(out, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), {});
  fs::remove(in);
  fs::remove(out);
  if (rc != 0 || bytes.empty())
    SLUICE_FAIL(hcq::CompileError, "load_kernels") << "spirv-as failed (status " << rc << "): " << diag;
  return bytes;
}

}  // namespace

// Declared in kernels.cpp, its one caller.
const std::vector<std::string>& spirv_modules() {
  static const std::vector<std::string> modules = [] {
    std::vector<std::string> m;
    for (const auto& s : sources()) m.push_back(assemble(s));
    return m;
  }();
  return modules;
}

}  // namespace sluice::conformance
