#pragma once
// Saved plans (DESIGN.md §5b): a captured JIT (runtime/jit.h) as a file that a later process loads and
// replays without building, scheduling or compiling anything.
//
// A plan holds the kernels' binaries as the device's compiler made them (loaded with
// Device::load_program, the call the disk cache's binaries go through, so no compiler runs), the launch
// list (each kernel's program, launch sizes and buffer arguments; each copy), the buffer table (every
// buffer the launches use: the inputs, patched in at each run; the weights, which the launches read
// before writing and whose contents the file holds; scratch, written before it is read), the inputs'
// and outputs' dtypes and shapes, and what it was made for: the device kind, the hardware's name and
// driver, the compiler and its binary target (hcq::Compiler::binary_target), and sluice's version.
//
// The file, little-endian; str = u32 length + bytes:
//   magic "\x89SLUICE\n" · u32 format · str sluice version · u64 file length      (the header)
//   str label · target: 6 str (device, kind, hardware, driver, compiler, binary target)
//   u32 n, each binary: u64 length + bytes · u32 n, each program: str name, u32 binary, u32 buffers, u32 vars
//   u32 n, each buffer: u8 role (0 scratch, 1 input, 2 weight), str dtype, i64 elements, [weight: bytes]
//   u32 n, each item: u8 kind; exec: u32 program, u32 n × (u32 buffer, u64 byte offset), u32 n × i32 var,
//     6 u32 (global, local); copy: u64 bytes, 2 × (u32 buffer, u64 byte offset) (dst, src)
//   u32 n inputs, u32 n outputs, each: str name, str dtype, u32 rank × i64, i64 buffer (-1: none),
//     u64 element offset, u64 length + bytes (inputs: the values the plan holds for; empty: any)
//   u64 checksum of everything before it
//
// Reading checks, in order: the magic ("not a compiled sluice model"); the format and sluice version,
// before anything else, since another version may lay out the rest differently; the length (truncated)
// and checksum (damaged); then every count, index and range as it is read. Loading checks the target
// against the device: another kind, compiler or binary target is a DeviceError naming both, never a
// wrong answer. All other failures are ValueError "[load] FILE: ..." / "[save] FILE: ...".
// A plan's binaries are code (the CPU's are machine code): load only files you trust.
//
// Threading: the functions are safe from any thread; a loaded Jit is used by one thread at a time.
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/view.h"
#include "hcq/compiler.h"
#include "hcq/device.h"
#include "runtime/jit.h"

namespace sluice {

struct PlanTarget {
  std::string device;    // the device it was made on: "VULKAN:1"
  std::string kind;      // "VULKAN"
  std::string hardware;  // hcq::Properties::device_name
  std::string driver;    // hcq::Properties::driver_version
  std::string compiler;  // hcq::Compiler::name
  std::string binary_target;
};

struct PlanBuffer {
  enum class Role : uint8_t { Scratch, Input, Weight };
  Role role = Role::Scratch;
  DType dtype = dtypes::uint8;
  int64_t size = 0;              // elements
  std::vector<std::byte> bytes;  // weights: the contents
};
struct PlanArg {
  uint32_t buffer = 0;
  uint64_t offset = 0;  // bytes
};
struct PlanProgram {
  std::string name;
  uint32_t binary = 0;
  hcq::KernelLayout layout;
};
struct PlanExec {
  uint32_t program = 0;
  std::vector<PlanArg> bufs;
  std::vector<int32_t> vars;
  hcq::Dims global, local;
};
struct PlanCopy {
  PlanArg dst, src;
  uint64_t size = 0;  // bytes
};
using PlanItem = std::variant<PlanExec, PlanCopy>;

// An input or output of the plan.
struct PlanTensor {
  std::string name;  // the caller's (a model's input or output name)
  DType dtype = dtypes::float32;
  Shape shape;
  int64_t buffer = -1;  // -1: none (an input without elements)
  uint64_t offset = 0;  // elements into the buffer
  // Inputs: when not empty, the plan holds only for an input of exactly these bytes (the caller's: a
  // value its function read on the host while it was captured).
  std::vector<std::byte> fixed;
};

struct SavedPlan {
  std::string label;  // the caller's: what the plan runs (a model's name)
  PlanTarget target;
  std::vector<hcq::Binary> binaries;  // each distinct binary once
  std::vector<PlanProgram> programs;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanItem> items;
  std::vector<PlanTensor> inputs, outputs;
};

const char* sluice_version();  // "0.1.0"

// What a plan made on `dev` records (and what loading on it requires).
PlanTarget plan_target(hcq::Device& dev);

// The captured work of `jit` with its weights read back from the device; the binaries come from the
// device's compiler (its disk cache, normally: the programs were just compiled). ValueError when the
// Jit has not captured anything.
SavedPlan save_plan(const Jit& jit);
// A Jit that replays `plan` on `device` ("" : the device the plan names) from its first call: buffers
// allocated, weights uploaded, programs loaded from their binaries; nothing is compiled. DeviceError when
// the device is not the plan's target. The Jit checks each call's inputs against the plan's.
Jit load_plan(const SavedPlan& plan, const std::string& device = "");

// Writes atomically: a temporary file in the same directory, then a rename; no file (and no temporary)
// is left when writing fails.
void write_plan_file(const SavedPlan& plan, const std::string& path);
SavedPlan read_plan_file(const std::string& path);
// The same from a file's bytes; `name` labels messages.
SavedPlan parse_plan(std::span<const std::byte> bytes, const std::string& name);
// Rewrites the header's file length and the trailing checksum to match `bytes`, so a plan patched on
// purpose (fuzzers, tests) reaches the checks past them; bytes too short to hold both are left alone.
void reseal_plan(std::span<std::byte> bytes);
// Whether the file starts with a plan's magic (false when it cannot be read).
bool is_plan_file(const std::string& path);

}  // namespace sluice
