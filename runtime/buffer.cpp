#include "runtime/buffer.h"

#include <algorithm>
#include <atomic>

#include "base/error.h"
#include "base/log.h"
#include "hcq/error.h"

namespace sluice {
namespace {

constexpr std::byte kGuard{0xA5};

// The payload of a BUFFER node's Identity: what memory the buffer has.
struct BufferSlot {
  std::mutex mu;
  std::shared_ptr<const HostBuffer> host;
  std::shared_ptr<Buffer> device;
};

std::mutex g_slot_mu;  // creating a slot (the payload is set once per node)
std::atomic<uint64_t> g_copied_out{0};

BufferSlot& slot(const UOp& buffer) {
  SLUICE_ASSERT(buffer.op() == Op::Buffer);
  const Identity& id = buffer.buffer_identity();
  if (auto p = id.payload()) return *static_cast<BufferSlot*>(p.get());
  std::lock_guard lk(g_slot_mu);
  if (auto p = id.payload()) return *static_cast<BufferSlot*>(p.get());
  auto s = std::make_shared<BufferSlot>();
  BufferSlot& ref = *s;
  id.set_payload(std::move(s));
  return ref;
}
BufferSlot* find_slot(const UOp& buffer) {
  SLUICE_ASSERT(buffer.op() == Op::Buffer);
  return static_cast<BufferSlot*>(buffer.buffer_identity().payload().get());
}

hcq::Buffer alloc_or_explain(hcq::Device& dev, uint64_t bytes) {
  hcq::Allocator& a = dev.allocator();
  try {
    return a.alloc(bytes);  // the allocator itself trims what the device is done with and retries once
  } catch (const hcq::TimeoutError&) { throw; } catch (const sluice::Error&) {
    // Buffers freed while the device still used them are cached too: once it is idle, they can go.
    dev.synchronize();
    a.trim();
    try {
      return a.alloc(bytes);
    } catch (const sluice::Error& e) {
      SLUICE_FAIL(DeviceError, "alloc") << "out of memory on " << dev.name() << ": cannot allocate " << bytes
                                        << " bytes (after freeing the allocator's cache: " << e.what() << ")";
    }
  }
}

}  // namespace

Buffer::Buffer(hcq::Device& dev, DType dtype, int64_t size, uint64_t guard_bytes)
    : dev_(&dev), dtype_(dtype), size_(size), guard_(guard_bytes) {}

std::shared_ptr<Buffer> Buffer::view(std::shared_ptr<Buffer> base, int64_t offset, int64_t size) {
  SLUICE_CHECK_IN(ValueError, "Buffer::view",
                  base && offset >= 0 && size >= 0 && offset + size <= base->size_)
      << "view of " << size << " elements at " << offset << " is outside a buffer of "
      << (base ? base->size_ : 0);
  if (base->base_) {  // a view of a view is a view of the base
    offset += base->offset_;
    base = base->base_;
  }
  auto v = std::make_shared<Buffer>(*base->dev_, base->dtype_, size, 0);
  v->offset_ = offset;
  v->base_ = std::move(base);
  return v;
}

std::shared_ptr<Buffer> Buffer::adopt(hcq::Device& dev, DType dtype, int64_t size, void* data,
                                      std::function<void()> release) {
  SLUICE_CHECK_IN(DeviceError, "Buffer::adopt", dev.properties().host_addressable)
      << dev.name() << " cannot use host memory in place (its addresses are not host pointers)";
  SLUICE_CHECK_IN(
      ValueError, "Buffer::adopt",
      size >= 0 && (size == 0 || data) && reinterpret_cast<uintptr_t>(data) % dtype.itemsize() == 0)
      << size << " elements of " << dtype.name() << " at " << data << ": needs a non-null address aligned to "
      << dtype.itemsize() << " bytes";
  auto b = std::make_shared<Buffer>(dev, dtype, size, 0);
  b->mem_ = {reinterpret_cast<uint64_t>(data), b->nbytes(), 0};
  b->allocated_ = true;
  b->release_ = std::move(release);
  return b;
}

Buffer::~Buffer() {
  if (base_ || !allocated_) return;
  if (!release_) {
    dev_->allocator().free(mem_);  // to the LRU cache, reused once the timeline passes mem_.last_use
    return;
  }
  // Adopted memory goes back to its owner only once the device is done with it; if that cannot be known
  // (the device failed or hung), it is kept: a leak rather than a kernel writing into freed memory.
  try {
    dev_->timeline().wait(mem_.last_use, hcq::kDefaultTimeout);
  } catch (const std::exception& e) {
    log_printf(LogLevel::Warn,
               "Buffer: kept adopted memory at 0x%llx: the device's last use of it did not "
               "finish (%s)",
               (unsigned long long)mem_.addr, e.what());
    return;
  }
  release_();
}

bool Buffer::allocated() const {
  if (base_) return base_->allocated();
  std::lock_guard lk(mu_);
  return allocated_;
}

uint64_t Buffer::addr() {
  if (base_) return base_->addr() + uint64_t(offset_) * uint64_t(dtype_.itemsize());
  std::lock_guard lk(mu_);
  if (!allocated_) {
    mem_ = alloc_or_explain(*dev_, std::max<uint64_t>(nbytes() + 2 * guard_, 1));
    allocated_ = true;
    if (guard_) {
      std::vector<std::byte> pat(guard_, kGuard);
      dev_->allocator().copyin(mem_, pat.data(), guard_, 0);
      dev_->allocator().copyin(mem_, pat.data(), guard_, guard_ + nbytes());
    }
  }
  return mem_.addr + guard_;
}

void Buffer::copyin(const void* src) {
  if (nbytes() == 0) return;
  const uint64_t at = addr();  // allocates
  Buffer& b = base_ ? *base_ : *this;
  hcq::Buffer mem;
  {
    std::lock_guard lk(b.mu_);
    mem = b.mem_;
  }
  dev_->allocator().copyin(mem, src, nbytes(), at - mem.addr);
}

void Buffer::copyout(void* dst) {
  if (nbytes() == 0) return;
  const uint64_t at = addr();
  Buffer& b = base_ ? *base_ : *this;
  hcq::Buffer mem;
  {
    std::lock_guard lk(b.mu_);
    mem = b.mem_;
  }
  dev_->allocator().copyout(dst, mem, nbytes(), at - mem.addr);
  g_copied_out += nbytes();
}

void Buffer::use(uint64_t v) {
  if (base_) return base_->use(v);
  std::lock_guard lk(mu_);
  mem_.last_use = std::max(mem_.last_use, v);
}

uint64_t Buffer::last_use() const {
  if (base_) return base_->last_use();
  std::lock_guard lk(mu_);
  return mem_.last_use;
}

std::vector<std::string> Buffer::check_guards() {
  if (base_ || !guard_ || !allocated()) return {};
  hcq::Buffer mem;
  {
    std::lock_guard lk(mu_);
    mem = mem_;
  }
  std::vector<std::byte> g(2 * guard_);
  dev_->allocator().copyout(g.data(), mem, guard_, 0);
  dev_->allocator().copyout(g.data() + guard_, mem, guard_, guard_ + nbytes());
  std::vector<std::string> out;
  for (size_t k = 0; k < g.size(); ++k)
    if (g[k] != kGuard) {
      out.push_back(k < guard_ ? "byte " + std::to_string(guard_ - k) + " before the start"
                               : "byte " + std::to_string(k - guard_) + " after the end");
      break;
    }
  return out;
}

void attach_host_buffer(const UOp& buffer, std::shared_ptr<const HostBuffer> host) {
  SLUICE_ASSERT(buffer.op() == Op::Buffer && buffer.dtype() == host->dtype && buffer.numel() == host->size);
  SLUICE_ASSERT(int64_t(host->bytes.size()) == host->size * host->dtype.itemsize());
  BufferSlot& s = slot(buffer);
  std::lock_guard lk(s.mu);
  s.host = std::move(host);
}

std::shared_ptr<const HostBuffer> host_buffer(const UOp& buffer) {
  BufferSlot* s = find_slot(buffer);
  if (!s) return nullptr;
  std::lock_guard lk(s->mu);
  return s->host;
}

std::shared_ptr<Buffer> device_buffer(const UOp& buffer) {
  BufferSlot* s = find_slot(buffer);
  if (!s) return nullptr;
  std::lock_guard lk(s->mu);
  return s->device;
}

std::shared_ptr<Buffer> ensure_device_buffer(const UOp& buffer, hcq::Device& dev, uint64_t guard_bytes) {
  BufferSlot& s = slot(buffer);
  std::lock_guard lk(s.mu);
  if (s.device) return s.device;
  auto b = std::make_shared<Buffer>(dev, buffer.dtype(), buffer.arg_as<int64_t>(), guard_bytes);
  if (s.host) b->copyin(s.host->bytes.data());  // copy-in on first use
  s.device = b;
  return b;
}

void attach_device_buffer(const UOp& buffer, std::shared_ptr<Buffer> dev) {
  BufferSlot& s = slot(buffer);
  std::lock_guard lk(s.mu);
  s.device = std::move(dev);
}

void drop_host_buffer(const UOp& buffer) {
  if (BufferSlot* s = find_slot(buffer)) {
    std::lock_guard lk(s->mu);
    if (s->device) s->host = nullptr;
  }
}

std::vector<std::byte> read_buffer_bytes(const UOp& buffer, const char* fn) {
  const uint64_t bytes = uint64_t(buffer.arg_as<int64_t>()) * uint64_t(buffer.dtype().itemsize());
  if (std::shared_ptr<Buffer> d = device_buffer(buffer)) {
    std::vector<std::byte> out(bytes);
    d->copyout(out.data());
    return out;
  }
  std::shared_ptr<const HostBuffer> host = host_buffer(buffer);
  SLUICE_CHECK_IN(ValueError, fn, host)
      << "buffer " << buffer.buffer_identity().id() << " (" << buffer.arg_as<int64_t>() << " "
      << buffer.dtype().name() << " on " << buffer.device() << ") has no data to read";
  return host->bytes;
}

uint64_t bytes_copied_out() { return g_copied_out; }

}  // namespace sluice
