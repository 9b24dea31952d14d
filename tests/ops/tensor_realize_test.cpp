// Tensor::realize, to_vector and item on the process-wide devices of the registry (runtime/device.h),
// and the registry itself: listing, opening, the default device.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/realize.h"
#include "runtime/tensor.h"

namespace sluice {
namespace {

// The message of the exception E that f throws, or "" (and a failure) when it throws none.
template <class E, class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  ADD_FAILURE() << "no exception thrown";
  return "";
}

TEST(TensorRealize, ToVectorMatchesHandValues) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}, "CPU");
  Tensor b = Tensor::from(std::vector<float>{10, 20, 30}, {3}, "CPU");
  Tensor y = a * 2 + b;  // broadcast over rows
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{12, 24, 36, 18, 30, 42}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  Tensor s = a.sum({1});
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{6, 15}));
  Tensor i = Tensor::from(std::vector<int32_t>{1, -2, 3}, {3}, "CPU");
  EXPECT_EQ((i * i).to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 9}));
  EXPECT_EQ(i.gt(0).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(a.cast(dtypes::float64).to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  std::vector<float> h = {1.5f, -2, 65504};  // a half buffer read back as float (not computed on)
  EXPECT_EQ(Tensor::from(h, {3}, dtypes::float16, "CPU").to_vector<float>(), h);
}

TEST(TensorRealize, RealizeTwiceAndFeedFurtherOps) {
  Tensor a = Tensor::from(std::vector<float>{1, 2, 3, 4}, {2, 2}, "CPU");
  Tensor y = (a + 1).exp2();
  Tensor& r = y.realize();
  EXPECT_EQ(&r, &y);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.dtype(), dtypes::float32);
  std::vector<float> first = y.to_vector<float>();
  EXPECT_EQ(first, (std::vector<float>{4, 8, 16, 32}));
  y.realize();
  EXPECT_EQ(y.to_vector<float>(), first);
  Tensor z = y.transpose() - a;  // the realized buffer feeds a view and an op
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{3, 14, 5, 28}));
}

TEST(TensorRealize, ItemOnASum) {
  Tensor a = Tensor::from(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}, "CPU");
  EXPECT_EQ(a.sum().item<int32_t>(), 21);
  EXPECT_FLOAT_EQ(a.cast(dtypes::float32).mean().item<float>(), 3.5f);
}

TEST(TensorRealize, ItemOnManyElementsThrows) {
  Tensor a = Tensor::zeros({2, 3}, dtypes::float32, "CPU");
  EXPECT_EQ(message_of<ValueError>([&] { a.item<float>(); }),
            "[item] tensor of shape (2, 3) has 6 elements, item() needs 1");
}

TEST(TensorRealize, ToVectorWrongTypeThrows) {
  Tensor a = Tensor::ones({3}, dtypes::float32, "CPU");
  std::string msg = message_of<DTypeError>([&] { a.to_vector<int32_t>(); });
  EXPECT_NE(msg.find("[to_vector] tensor is "), std::string::npos) << msg;
  EXPECT_NE(msg.find("asked for int32_t"), std::string::npos) << msg;
  EXPECT_THROW(a.to_vector<double>(), DTypeError);
  EXPECT_THROW(a.sum().item<int64_t>(), DTypeError);
}

TEST(DeviceRegistry, UnknownDeviceListsAvailable) {
  std::string msg = message_of<DeviceError>([] { open_device("TPU"); });
  EXPECT_NE(msg.find("TPU"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CPU"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NULL"), std::string::npos) << msg;
  // An absent device names itself and why it is absent.
  for (const DeviceInfo& d : list_devices()) {
    if (d.available) continue;
    msg = message_of<DeviceError>([&] { realizer(d.name); });
    EXPECT_NE(msg.find(d.name), std::string::npos) << msg;
    EXPECT_NE(msg.find(d.reason), std::string::npos) << msg;
  }
}

TEST(DeviceRegistry, OpensOncePerCanonicalName) {
  EXPECT_EQ(&open_device("cpu"), &open_device("CPU:0"));
  EXPECT_EQ(&realizer("cpu"), &realizer("CPU"));
  EXPECT_EQ(&realizer("CPU").device(), &open_device("CPU"));
  EXPECT_NE(&open_device("NULL"), &open_device("CPU"));
}

TEST(DeviceRegistry, ListsDevices) {
  std::vector<DeviceInfo> devs = list_devices();
  ASSERT_GE(devs.size(), 6u);
  EXPECT_EQ(devs[0].name, "CUDA");  // DESIGN.md §5's order of preference
  auto find = [&](const std::string& name) {
    for (const DeviceInfo& d : devs)
      if (d.name == name) return d;
    ADD_FAILURE() << name << " not listed";
    return DeviceInfo{};
  };
  EXPECT_TRUE(find("CPU").available);
  EXPECT_TRUE(find("NULL").available);
  for (const DeviceInfo& d : devs) EXPECT_EQ(d.available, d.reason.empty()) << d.name << ": " << d.reason;
}

TEST(DeviceRegistry, DefaultDeviceIsTheFirstAvailableRealOne) {
  // DESIGN.md §5: the registry's order, NULL never, and a GPU API emulated on the CPU only after CPU.
  const char* env = std::getenv("SLUICE_DEVICE");
  if (env && *env) GTEST_SKIP() << "SLUICE_DEVICE is set";
  const std::string def = default_device();
  EXPECT_EQ(Tensor::ones({2}).device(), def);
  ASSERT_NE(def, "NULL");
  EXPECT_TRUE(def == "CPU" || !open_device(def).properties().software) << def << " is an emulation";
  for (const DeviceInfo& d : list_devices()) {
    if (d.name == def) break;
    if (!d.available || d.name == "NULL") continue;
    // An available kind ranked before the default is one that emulates a GPU on the CPU.
    EXPECT_TRUE(open_device(d.name).properties().software) << d.name << " ranks before " << def;
  }
}

TEST(DeviceRegistry, RealizesOnNull) {  // the path runs; NULL's values are whatever its memory holds
  Tensor y = Tensor::ones({4}, dtypes::float32, "NULL") + 1;
  y.realize();
  EXPECT_EQ(y.device(), "NULL");
  EXPECT_EQ(y.to_vector<float>().size(), 4u);
}

}  // namespace
}  // namespace sluice
