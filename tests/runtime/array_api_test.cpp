// Arrays (one buffer per device) and calling an Executable with them:
// from_shards / generate / to_host round trips, and the refx::Error each
// misuse raises (at the call, before anything runs).

#include <gtest/gtest.h>

#include <refx/refx.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

using In = HbmRef<const float, 4, 8>;
using Out = HbmRef<float, 4, 8>;

Executable copier(int n) {
  return kernel([](In x, Out y) { sync_copy(x, y); }).name("copier").compile(Mesh{{"x", n}});
}

class ArrayApi : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, ArrayApi, device_counts(), DeviceCountName{});

TEST_P(ArrayApi, FromShardsRoundTrip) {
  Watchdog dog(kTestLimit, "from_shards");
  const int n = GetParam();
  std::vector<std::vector<std::int32_t>> shards;
  for (int d = 0; d < n; ++d) {
    std::vector<std::int32_t> s(6);
    for (int i = 0; i < 6; ++i) s[static_cast<std::size_t>(i)] = d * 10 - i;
    shards.push_back(s);
  }
  const Array a = Array::from_shards(shards, Shape{2, 3});
  EXPECT_EQ(a.num_devices(), n);
  EXPECT_EQ(a.dtype(), DType::i32);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_TRUE(a.is_ready());
  for (int d = 0; d < n; ++d) EXPECT_EQ(a.to_host<std::int32_t>(d), shards[static_cast<std::size_t>(d)]);
}

TEST_P(ArrayApi, GenerateAndCallRoundTrip) {
  Watchdog dog(kTestLimit, "generate");
  const int n = GetParam();
  const Array x = Array::generate<float>(n, Shape{4, 8}, [](int d, std::int64_t i) { return d - 0.25f * static_cast<float>(i); });
  EXPECT_EQ(x.dtype(), DType::f32);
  auto out = copier(n)(x);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].num_devices(), n);
  EXPECT_EQ(out[0].shape(), (Shape{4, 8}));
  EXPECT_EQ(out[0].dtype(), DType::f32);
  EXPECT_TRUE(all_shards_match<float>(out[0], [](int d, std::int64_t i) { return d - 0.25f * static_cast<float>(i); }));
  EXPECT_TRUE(out[0].is_ready());
  // block_until_ready returns the Array itself (for chaining).
  EXPECT_EQ(&out[0].block_until_ready(), &out[0]);
}

TEST_P(ArrayApi, WrongNumberOfInputs) {
  const int n = GetParam();
  const Executable exe = copier(n);
  const Array x = Array::generate<float>(n, Shape{4, 8}, tag);
  std::string msg = error_of([&] { (void)exe(x, x); });
  EXPECT_NE(msg.find("kernel 'copier' takes 1 input Arrays (its read-only Ref parameters), 2 given"), std::string::npos)
      << msg;
  msg = error_of([&] { (void)exe(std::vector<Array>{}); });
  EXPECT_NE(msg.find("takes 1 input Arrays"), std::string::npos) << msg;
  msg = error_of([&] { exe.call_in_place({x}); });
  EXPECT_NE(msg.find("kernel 'copier' has 2 parameters, call_in_place got 1 Arrays"), std::string::npos) << msg;
}

TEST_P(ArrayApi, WrongShape) {
  const int n = GetParam();
  const Executable exe = copier(n);
  const std::string msg = error_of([&] { (void)exe(Array::generate<float>(n, Shape{8, 4}, tag)); });
  EXPECT_NE(msg.find("kernel 'copier': argument 0 is f32[8,4] per device but the kernel expects f32[4,8]"),
            std::string::npos)
      << msg;
}

TEST_P(ArrayApi, WrongDtype) {
  const int n = GetParam();
  const Executable exe = copier(n);
  const std::string msg = error_of([&] { (void)exe(Array::generate<double>(n, Shape{4, 8}, tag)); });
  EXPECT_NE(msg.find("argument 0 is f64[4,8] per device but the kernel expects f32[4,8]"), std::string::npos) << msg;
}

TEST_P(ArrayApi, WrongDeviceCount) {
  const int n = GetParam();
  const Executable exe = copier(n);
  const std::string msg = error_of([&] { (void)exe(Array::generate<float>(n + 1, Shape{4, 8}, tag)); });
  EXPECT_NE(msg.find(fmt::format("argument 0 has {} shards but the mesh {{x={}}} has {} devices", n + 1, n, n)),
            std::string::npos)
      << msg;
}

TEST_P(ArrayApi, WrongInPlaceOutput) {
  const int n = GetParam();
  const Executable exe = copier(n);
  const Array x = Array::generate<float>(n, Shape{4, 8}, tag);
  const std::string msg = error_of([&] { exe.call_in_place({x, Array::generate<std::int32_t>(n, Shape{4, 8}, tag)}); });
  EXPECT_NE(msg.find("argument 1 is i32[4,8] per device but the kernel expects f32[4,8]"), std::string::npos) << msg;
}

TEST_P(ArrayApi, SameArrayAsInputAndInPlaceOutputIsRejected) {
  const int n = GetParam();
  const Executable exe = copier(n);
  const Array x = Array::generate<float>(n, Shape{4, 8}, tag);
  const std::string msg = error_of([&] { exe.call_in_place({x, x}); });
  EXPECT_NE(msg.find("kernel 'copier': the same Array is passed as arguments 0 and 1, and one of them is written"),
            std::string::npos)
      << msg;
  // The rejected call did not run: x is unchanged and still usable.
  EXPECT_TRUE(all_shards_match<float>(x, tag));
  Array y = Array::generate<float>(n, Shape{4, 8}, [](int, std::int64_t) { return 0.0f; });
  exe.call_in_place({x, y});
  EXPECT_TRUE(all_shards_match<float>(y, tag));
}

TEST_P(ArrayApi, SameArrayTwiceAsReadOnlyInputsIsFine) {
  Watchdog dog(kTestLimit, "same input twice");
  const int n = GetParam();
  auto exe = kernel([](VmemRef<const float, 8> a, VmemRef<const float, 8> b, VmemRef<float, 8> c) {
               c.store(a.load() + b.load());
             })
                 .compile(Mesh{{"x", n}});
  const Array x = Array::generate<float>(n, Shape{8}, tag);
  EXPECT_TRUE(all_shards_match<float>(exe(x, x)[0], [](int d, std::int64_t i) { return 2 * tag(d, i); }));
}

TEST_P(ArrayApi, InPlaceCallUpdatesTheArray) {
  Watchdog dog(kTestLimit, "in place");
  const int n = GetParam();
  auto exe = kernel([](VmemRef<const float, 8> a, VmemRef<float, 8> acc) { acc.store(acc.load() + a.load()); })
                 .compile(Mesh{{"x", n}});
  const Array x = Array::generate<float>(n, Shape{8}, tag);
  Array acc = Array::generate<float>(n, Shape{8}, [](int, std::int64_t) { return 1.0f; });
  for (int k = 0; k < 5; ++k) exe.call_in_place({x, acc});
  EXPECT_TRUE(all_shards_match<float>(acc, [](int d, std::int64_t i) { return 1.0f + 5 * tag(d, i); }));
}

TEST(ArrayApiErrors, FromShardsWithAWrongShardSize) {
  const std::string msg = error_of([] {
    (void)Array::from_shards(std::vector<std::vector<float>>{{1, 2, 3, 4}, {1, 2, 3}}, Shape{2, 2});
  });
  EXPECT_NE(msg.find("Array::from_shards: shard 1 has 3 elements but the shape [2,2] needs 4"), std::string::npos)
      << msg;
}

TEST(ArrayApiErrors, NoDevices) {
  std::string msg = error_of([] { (void)Array::from_shards(std::vector<std::vector<float>>{}, Shape{2}); });
  EXPECT_NE(msg.find("an Array needs at least one device, got 0"), std::string::npos) << msg;
  msg = error_of([] { (void)Array::generate<float>(0, Shape{2}, tag); });
  EXPECT_NE(msg.find("at least one device"), std::string::npos) << msg;
}

TEST(ArrayApiErrors, EmptyArray) {
  const Array empty;
  EXPECT_FALSE(empty.valid());
  std::string msg = error_of([&] { (void)empty.to_host<float>(0); });
  EXPECT_NE(msg.find("this Array is empty"), std::string::npos) << msg;
  msg = error_of([&] { (void)copier(2)(empty); });
  EXPECT_NE(msg.find("argument 0 is an empty Array"), std::string::npos) << msg;
}

TEST(ArrayApiErrors, ToHostWithTheWrongElementType) {
  const Array x = Array::generate<float>(2, Shape{3}, tag);
  const std::string msg = error_of([&] { (void)x.to_host<std::int32_t>(0); });
  EXPECT_NE(msg.find("to_vector<i32> on a f32 buffer"), std::string::npos) << msg;
}

TEST(ArrayApiErrors, ToHostOfADeviceOutsideTheArray) {
  const Array x = Array::generate<float>(2, Shape{3}, tag);
  try {
    (void)x.to_host<float>(2);
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device 2"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a refx::Error: " << e.what();
  }
}

}  // namespace
