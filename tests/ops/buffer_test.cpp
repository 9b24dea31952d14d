// Device-resident buffers (runtime/buffer.h): lazy allocation, copy-in on first use, realized tensors that
// stay on the device between realizes, views, freeing through the allocator's cache, out of memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "hcq/device.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/reference.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

UOp base_buffer(const Tensor& t) {
  const UOp* u = &t.uop();
  while (u->op() != Op::Buffer) u = &u->src(0);
  return *u;
}

TEST(Buffer, AllocatesLazilyAndCopiesInOnFirstUse) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3, 4}, {4}, "CPU");
  UOp b = base_buffer(a);
  EXPECT_EQ(device_buffer(b), nullptr);  // nothing on the device until a realize uses it
  Tensor y = a * 2;
  y.realize();
  std::shared_ptr<Buffer> d = device_buffer(b);
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->allocated());
  std::vector<float> back(4);
  d->copyout(back.data());
  EXPECT_EQ(back, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
}

TEST(Buffer, RealizedTensorStaysOnTheDevice) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3}, {3}, "CPU");
  Tensor y = (a + 1).realize();
  UOp yb = base_buffer(y);
  std::shared_ptr<Buffer> d = device_buffer(yb);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(host_buffer(yb), nullptr);  // no host copy: the result lives on the device
  // Overwrite the device memory behind y: a second realize over y must read it, not a host copy.
  std::vector<float> planted{10, 20, 30};
  d->copyin(planted.data());
  Tensor z = y * 2;
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{20, 40, 60}));
  EXPECT_EQ(device_buffer(base_buffer(y)), d);  // still the same memory
}

TEST(Buffer, ViewsShareTheirBase) {
  hcq::Device& dev = open_device("CPU");
  auto base = std::make_shared<Buffer>(dev, dtypes::int32, 8);
  std::vector<int32_t> v{0, 1, 2, 3, 4, 5, 6, 7};
  base->copyin(v.data());
  std::shared_ptr<Buffer> view = Buffer::view(base, 2, 3);
  EXPECT_EQ(view->addr(), base->addr() + 8);
  std::vector<int32_t> got(3);
  view->copyout(got.data());
  EXPECT_EQ(got, (std::vector<int32_t>{2, 3, 4}));
  std::shared_ptr<Buffer> inner = Buffer::view(view, 1, 2);  // a view of a view: of the base
  EXPECT_EQ(inner->base(), base);
  EXPECT_EQ(inner->offset(), 3);
  std::vector<int32_t> w{-1, -2};
  inner->copyin(w.data());
  base->copyout(v.data());
  EXPECT_EQ(v, (std::vector<int32_t>{0, 1, 2, -1, -2, 5, 6, 7}));
  EXPECT_THROW(Buffer::view(base, 6, 3), ValueError);
}

TEST(Buffer, FreedIntoTheAllocatorCacheWhenTheLastTensorGoes) {
  hcq::Device& dev = open_device("CPU");
  dev.synchronize();
  const uint64_t bytes = 12345 * 4;
  const uint64_t cached = dev.allocator().cached_bytes();
  uint64_t last_use = 0;
  {
    Tensor y = (Tensor::from(std::vector<float>(12345, 1.0f), {12345}, "CPU") + 1).realize();
    std::shared_ptr<Buffer> d = device_buffer(base_buffer(y));
    ASSERT_NE(d, nullptr);
    last_use = d->last_use();
    EXPECT_GT(last_use, 0u);  // the submission that wrote it
  }
  EXPECT_GE(dev.allocator().cached_bytes(), cached + 2 * bytes);  // the input's and the output's memory
}

TEST(Buffer, OutOfMemoryNamesSizeAndDevice) {
  hcq::Device& dev = open_device("CPU");
  Buffer huge(dev, dtypes::float32, int64_t(1) << 60);  // 4 EiB
  try {
    (void)huge.addr();
    FAIL() << "no error";
  } catch (const DeviceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[alloc] out of memory on CPU"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(uint64_t(1) << 62)), std::string::npos) << m;
  }
}

TEST(Buffer, AssignWritesTheBufferInPlace) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3}, {3}, "CPU");
  a.assign(a + 10).realize();
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{11, 12, 13}));
  EXPECT_EQ(host_buffer(base_buffer(a)), nullptr);  // the host copy no longer holds the contents
  EXPECT_EQ(reference(a * 1).f, (std::vector<double>{11, 12, 13}));  // read from the device
}

// Memory the caller owns, used in place on the CPU device: kernels read and write it, and it goes back to
// its owner once the last tensor is gone and the device is done with it.
TEST(Buffer, AdoptedHostMemoryIsUsedInPlaceAndGivenBack) {
  hcq::Device& cpu = open_device("CPU");
  std::vector<float> mine = {1, 2, 3, 4};
  int released = 0;
  {
    Tensor t = Tensor::empty({4}, dtypes::float32, "CPU");
    attach_device_buffer(t.dense_buffer(),
                         Buffer::adopt(cpu, dtypes::float32, 4, mine.data(), [&] { ++released; }));
    EXPECT_EQ(device_buffer(t.dense_buffer())->addr(), reinterpret_cast<uint64_t>(mine.data()));
    Tensor y = t * 10;
    mine[0] = 5;  // lazy: the kernel reads the memory when it runs
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{50, 20, 30, 40}));
    t.assign(t + 1).realize();
    cpu.synchronize();  // realize returns once the kernel is submitted
    EXPECT_EQ(mine, (std::vector<float>{6, 3, 4, 5})) << "an in-place write lands in the owner's memory";
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
  EXPECT_THROW(Buffer::adopt(cpu, dtypes::float32, 2, reinterpret_cast<char*>(mine.data()) + 1, [] {}),
               ValueError);
  EXPECT_THROW(Buffer::adopt(open_device("NULL"), dtypes::float32, 4, mine.data(), [] {}), DeviceError);
}

TEST(Buffer, CopyBetweenDevices) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3}, {3}, "CPU");
  Tensor n = (a + 1).to("NULL") * 2;  // CPU kernel, copy through the host, NULL kernel
  n.realize();
  EXPECT_EQ(n.device(), "NULL");
  Tensor back = (a + 1).to("NULL").to("CPU");
  EXPECT_EQ(back.to_vector<float>().size(), 3u);
}

TEST(Printing, SmallTensorsPrintTheirValues) {
  Tensor a = Tensor::from(std::vector<float>{1, 2.5f, -3, 4}, {2, 2}, "CPU");
  EXPECT_EQ(a.values_str(), "Tensor([[1, 2.5], [-3, 4]], dtype=float, device=CPU)");
  std::ostringstream os;
  os << (a > 0);
  EXPECT_EQ(os.str(), "Tensor([[True, True], [False, True]], dtype=bool, device=CPU)");
  Tensor i = Tensor::from(std::vector<int32_t>{7, -8, 9}, {3}, "CPU");
  EXPECT_EQ(i.values_str(), "Tensor([7, -8, 9], dtype=int, device=CPU)");
  EXPECT_EQ((i.sum()).values_str(), "Tensor(8, dtype=int, device=CPU)");
  Tensor nan = Tensor::from(std::vector<float>{0, 1, -1}, {3}, "CPU");
  EXPECT_EQ((nan / 0.0f).values_str(), "Tensor([nan, inf, -inf], dtype=float, device=CPU)");
  Tensor big = Tensor::zeros({40, 40}, dtypes::float32, "CPU");
  EXPECT_EQ(big.values_str(), big.str());  // too large: the summary
}

TEST(Printing, ReadingRealizesTheTensorItself) {
  Tensor a = Tensor::from({1.0f, 2.0f, 3.0f}, {3}, "CPU");
  Tensor y = (a * 2).sum();
  std::ostringstream os;
  os << y;  // as to_vector: y becomes its buffer, so reading it again schedules nothing
  EXPECT_EQ(os.str(), "Tensor(12, dtype=float, device=CPU)");
  EXPECT_TRUE(y.dense_buffer());
  EXPECT_TRUE(y.schedule().empty());
  const Tensor c = a + 1;  // const tensors and temporaries print a realized copy
  std::ostringstream oc;
  oc << c << " " << (a - 1);
  EXPECT_EQ(oc.str(),
            "Tensor([2, 3, 4], dtype=float, device=CPU) Tensor([0, 1, 2], dtype=float, device=CPU)");
  EXPECT_FALSE(c.dense_buffer());
}

}  // namespace
}  // namespace sluice
