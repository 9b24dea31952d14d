#pragma once
// OpenCL memory: each buffer is a cl_mem, named in packets by a handle (hcq packets carry 64-bit
// addresses, and a copy or kernel argument may point inside a buffer):
//
//   addr = (handle + 1) << 40 | offset        handle: index in the device's table; offset < 1 TiB
//
// so Buffer::addr + offset stays a valid address and the queue resolves it with one table lookup. A
// kernel takes each buffer as the cl_mem plus a byte offset (program.h), so an address inside a buffer
// needs no sub-buffer and no alignment beyond the element's. copyin/copyout are blocking reads/writes on a
// queue of their own (never behind a queue's pending waits).
//
// Threading: every member is thread-safe.
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/opencl/driver.h"
#include "hcq/allocator.h"

namespace sluice::opencl {

class Memory {
 public:
  static constexpr int kOffsetBits = 40;

  Memory() = default;
  ~Memory();  // releases whatever is still in the table

  uint64_t add(cl_mem m);      // takes ownership; returns the buffer's address
  void remove(uint64_t addr);  // releases the buffer
  // The buffer and offset an address names. Throws Error `[func] ...` for an address of no live buffer.
  std::pair<cl_mem, uint64_t> resolve(uint64_t addr, const char* func) const;

 private:
  mutable std::mutex mu_;
  std::vector<cl_mem> table_;
  std::vector<uint32_t> free_;
};

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev, const Context& c, Memory& mem,
                                               cl_command_queue host_queue);

}  // namespace sluice::opencl
