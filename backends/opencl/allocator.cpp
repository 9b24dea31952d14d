#include "backends/opencl/allocator.h"

namespace sluice::opencl {

Memory::~Memory() {
  for (cl_mem m : table_)
    if (m) api().clReleaseMemObject(m);
}

uint64_t Memory::add(cl_mem m) {
  std::lock_guard lk(mu_);
  uint32_t h;
  if (!free_.empty()) {
    h = free_.back();
    free_.pop_back();
  } else {
    h = uint32_t(table_.size());
    table_.emplace_back();
  }
  table_[h] = m;
  return uint64_t(h + 1) << kOffsetBits;
}

void Memory::remove(uint64_t addr) {
  cl_mem m;
  {
    std::lock_guard lk(mu_);
    const uint64_t h = (addr >> kOffsetBits) - 1;
    SLUICE_CHECK_IN(hcq::Error, "free", h < table_.size() && table_[h]) << "no buffer at address " << addr;
    m = std::exchange(table_[h], nullptr);
    free_.push_back(uint32_t(h));
  }
  api().clReleaseMemObject(m);
}

std::pair<cl_mem, uint64_t> Memory::resolve(uint64_t addr, const char* func) const {
  const uint64_t h = (addr >> kOffsetBits) - 1, off = addr & ((uint64_t(1) << kOffsetBits) - 1);
  std::lock_guard lk(mu_);
  SLUICE_CHECK_IN(hcq::Error, func, h < table_.size() && table_[h])
      << "address 0x" << std::hex << addr << " names no live OpenCL buffer";
  return {table_[h], off};
}

namespace {

class Allocator final : public hcq::Allocator {
 public:
  Allocator(hcq::Device& dev, const Context& c, Memory& mem, cl_command_queue q)
      : hcq::Allocator(dev), c_(c), mem_(mem), q_(q) {}
  ~Allocator() override { release_cache(); }

 protected:
  uint64_t raw_alloc(uint64_t size) override {
    cl_int err = CL_SUCCESS;
    cl_mem m = api().clCreateBuffer(c_.ctx, CL_MEM_READ_WRITE, size, nullptr, &err);
    if (!m) fail("alloc", "clCreateBuffer", err);
    return mem_.add(m);
  }
  void raw_free(uint64_t addr, uint64_t) override { mem_.remove(addr); }
  void raw_copyin(uint64_t dst, const void* src, uint64_t size) override {
    auto [m, off] = mem_.resolve(dst, "copyin");
    std::lock_guard lk(mu_);
    SLUICE_CL(clEnqueueWriteBuffer(q_, m, CL_TRUE, off, size, src, 0, nullptr, nullptr), "copyin");
  }
  void raw_copyout(void* dst, uint64_t src, uint64_t size) override {
    auto [m, off] = mem_.resolve(src, "copyout");
    std::lock_guard lk(mu_);
    SLUICE_CL(clEnqueueReadBuffer(q_, m, CL_TRUE, off, size, dst, 0, nullptr, nullptr), "copyout");
  }

 private:
  const Context& c_;
  Memory& mem_;
  cl_command_queue q_;
  std::mutex mu_;  // one blocking transfer at a time on the host queue
};

}  // namespace

std::unique_ptr<hcq::Allocator> make_allocator(hcq::Device& dev, const Context& c, Memory& mem,
                                               cl_command_queue host_queue) {
  return std::make_unique<Allocator>(dev, c, mem, host_queue);
}

}  // namespace sluice::opencl
