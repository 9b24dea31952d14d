#pragma once
// Buffers (DESIGN.md §5): the memory behind a BUFFER node. Both hang on the node's Identity payload (one
// BufferSlot per node), so they live exactly as long as some graph (some Tensor) refers to the buffer.
//
// - HostBuffer: the host copy of data a tensor was created from (Tensor::from). Immutable once attached;
//   dropped when a kernel writes the buffer in place (an ASSIGN), since it no longer holds the contents.
// - Buffer: memory on the tensor's device. Allocated lazily on first use, filled from the HostBuffer then
//   (copy-in), and written by kernels; realized tensors stay there, so a later realize reads it without a
//   round trip through the host. copyout() brings the bytes back (to_vector / item).
//   A view is `size` elements at element `offset` of a base Buffer, sharing (and keeping alive) its memory.
//   The base's memory goes back to the device allocator's LRU cache (hcq::Allocator::free, with the
//   timeline value of its last use) when the last holder of the Buffer goes.
//   Out of memory: the allocator's cache is released and the allocation tried once more after waiting for
//   the device; then DeviceError "[alloc] out of memory on CPU: cannot allocate 1048576 bytes (...)".
//
// Threading: every member is thread-safe (a Buffer locks its own state). Ownership: the device must
// outlive every Buffer on it (registry devices are never destroyed, runtime/device.h).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/uop.h"
#include "hcq/device.h"

namespace sluice {

struct HostBuffer {
  DType dtype;
  int64_t size = 0;              // elements
  std::vector<std::byte> bytes;  // size * dtype.itemsize() bytes, native layout (half/bf16 as their bits)
};

class Buffer {
 public:
  // `size` elements of `dtype` on `dev`, with `guard_bytes` sentinel bytes (0xA5) before and after the
  // memory when it is allocated (check_guards reports changed ones). No memory is taken yet.
  Buffer(hcq::Device& dev, DType dtype, int64_t size, uint64_t guard_bytes = 0);
  // A view of `size` elements of `dtype` (same itemsize as the base's) at element `offset` of base.
  // Throws ValueError when the range is not inside the base.
  static std::shared_ptr<Buffer> view(std::shared_ptr<Buffer> base, int64_t offset, int64_t size);
  // `size` elements of `dtype` at `data`, memory the caller owns, used in place on a device whose addresses
  // are host pointers (Properties::host_addressable; else DeviceError). `data` must be aligned to the
  // element (ValueError). Never allocated nor freed here: `release` runs once the last user is gone and
  // the device is done with the memory (DLPack imports: the exporter's deleter).
  static std::shared_ptr<Buffer> adopt(hcq::Device& dev, DType dtype, int64_t size, void* data,
                                       std::function<void()> release);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  hcq::Device& device() const { return *dev_; }
  DType dtype() const { return dtype_; }
  int64_t size() const { return size_; }  // elements
  uint64_t nbytes() const { return uint64_t(size_) * uint64_t(dtype_.itemsize()); }
  int64_t offset() const { return offset_; }                     // elements into the base (0 for a base)
  const std::shared_ptr<Buffer>& base() const { return base_; }  // null for a base
  bool allocated() const;

  // The device address kernels see (allocates on first use). Valid while this Buffer lives.
  uint64_t addr();
  // Host <-> device, the whole buffer; they wait for the device to be done with it (hcq::Allocator).
  void copyin(const void* src);
  void copyout(void* dst);
  // Records that a submission with timeline value v uses this memory.
  void use(uint64_t timeline_value);
  uint64_t last_use() const;
  // The guard bytes that changed: "byte 3 after the end" (empty when none, or no guards).
  std::vector<std::string> check_guards();

 private:
  hcq::Device* dev_;
  DType dtype_;
  int64_t size_, offset_ = 0;
  uint64_t guard_;
  std::shared_ptr<Buffer> base_;
  mutable std::mutex mu_;
  hcq::Buffer mem_;  // the whole allocation, guards included (bases only)
  bool allocated_ = false;
  std::function<void()> release_;  // adopted memory: its owner's release, instead of the allocator
};

// Attaches `host` to `buffer` (a BUFFER node of the same dtype and size).
void attach_host_buffer(const UOp& buffer, std::shared_ptr<const HostBuffer> host);
// The HostBuffer attached to a BUFFER node, or nullptr when it has none (an empty() buffer, the output of a
// kernel, or a buffer written in place since).
std::shared_ptr<const HostBuffer> host_buffer(const UOp& buffer);
// The device Buffer of a BUFFER node, or nullptr when it was never used on its device.
std::shared_ptr<Buffer> device_buffer(const UOp& buffer);
// The device Buffer of a BUFFER node, made (lazily allocated, filled from its HostBuffer on first addr())
// on `dev` with `guard_bytes` if it has none yet.
std::shared_ptr<Buffer> ensure_device_buffer(const UOp& buffer, hcq::Device& dev, uint64_t guard_bytes = 0);
// Attaches device memory to a BUFFER node (the JIT's outputs); replaces what it had.
void attach_device_buffer(const UOp& buffer, std::shared_ptr<Buffer> dev);
// Called when a kernel writes `buffer`: its HostBuffer no longer holds its contents.
void drop_host_buffer(const UOp& buffer);
// The contents of a BUFFER node as bytes: from its device Buffer when it has one, else its HostBuffer.
// Throws ValueError naming the buffer when it has neither.
std::vector<std::byte> read_buffer_bytes(const UOp& buffer, const char* fn);
// Bytes copied from device memory to the host (Buffer::copyout) in this process so far: what reads cost.
uint64_t bytes_copied_out();

}  // namespace sluice
