#pragma once
// hcq::Program — a loaded kernel and its argument layout (DESIGN.md §4).
//
// A kernel takes `layout.buffers` buffer addresses (Buffer::addr, in order) and `layout.vars` 32-bit
// integer variables (symbolic sizes, loop bounds). How those reach the kernel is the backend's ABI
// (backends/cpu/program.h for the CPU). The layout comes from whoever produced the source (the renderer),
// not from parsing the binary.
//
// Ownership and threading: Device::load_program returns the owning handle. A program must outlive every
// submitted command that executes it (and every recorded HwQueue that is still submitted). A program is
// immutable after loading; any thread may record it into a queue.
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::hcq {

class Device;

struct KernelLayout {
  uint32_t buffers = 0, vars = 0;
};

// The arguments of one launch: buffer addresses and integer variables, in layout order.
struct KernelArgs {
  std::vector<uint64_t> bufs;
  std::vector<int32_t> vars;
};

class Program {
 public:
  Program(Device& device, std::string name, KernelLayout layout)
      : device_(device), name_(std::move(name)), layout_(layout) {}
  virtual ~Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Device& device() const { return device_; }
  const std::string& name() const { return name_; }  // the kernel's function name in its source
  KernelLayout layout() const { return layout_; }

 private:
  Device& device_;
  std::string name_;
  KernelLayout layout_;
};

}  // namespace sluice::hcq
