// Copies of the new element types on the threaded runtime: local and remote
// copies (contiguous and strided) move every element type bit for bit; a
// combining copy into bf16 / f16 rounds once per arriving block
// (dst = half(f32(dst) + f32(src))), as hardware adding in the destination's
// type would, and start(accumulate_max) keeps the maximum (NaN wins); Ref
// accum rounds the same way; DMA semaphores count bytes (2 per half).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 96;

/// A deterministic element of type T for device d, index i: halves get
/// values with all their mantissa bits in use, and some of each sign.
template <class T>
T sample(int d, std::int64_t i) {
  const std::int64_t k = (d * 7919 + i * 104729) % 1000;
  if constexpr (std::is_same_v<T, bool>) return k % 3 == 0;
  else if constexpr (is_floating_v<T>) return T(static_cast<double>(k - 500) * 0.013671875 + 0.001953125 * d);
  else return static_cast<T>(k * 37 - 11000 + d);  // wraps for the narrow types
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if constexpr (std::is_same_v<T, bool>) return a == b;
  else return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
class EveryType : public ::testing::Test {};
using AllTypes = ::testing::Types<bool, std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, bf16, f16,
                                  float, double, f8e4m3fn, f8e5m2>;
TYPED_TEST_SUITE(EveryType, AllTypes);

TYPED_TEST(EveryType, LocalCopiesContiguousAndStrided) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "local copies");
  // y[0:48] = x[0:96:2] (strided source), y[48:96] = x[1:49] (contiguous).
  auto exe = kernel([](HbmRef<const T, kBlock> x, HbmRef<T, kBlock> y) {
               run_scoped([&](DmaSemaphore a, DmaSemaphore b) {
                 const auto even = make_async_copy(x.at(ds(0, kBlock / 2, 2)), y.at(ds(0, kBlock / 2)), a);
                 const auto run = make_async_copy(x.at(ds(1, kBlock / 2)), y.at(ds(kBlock / 2, kBlock / 2)), b);
                 even.start();
                 run.start();
                 even.wait();
                 run.wait();
               });
             })
                 .compile(Mesh{{"x", 1}});
  const Array x = Array::generate<T>(1, Shape{kBlock}, [](int d, std::int64_t i) { return sample<T>(d, i); });
  const std::vector<T> in = x.template to_host<T>(0);
  std::vector<T> want;
  for (std::int64_t i = 0; i < kBlock / 2; ++i) want.push_back(in[static_cast<std::size_t>(2 * i)]);
  for (std::int64_t i = 0; i < kBlock / 2; ++i) want.push_back(in[static_cast<std::size_t>(1 + i)]);
  EXPECT_TRUE(same_bits(exe(x)[0].template to_host<T>(0), want));
}

TYPED_TEST(EveryType, RemoteCopiesAroundTheRing) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "remote copies");
  for (int n : {2, 4}) {
    auto exe = kernel([](HbmRef<const T, kBlock> x, HbmRef<T, kBlock> y) {
                 const auto me = axis_index("x"), n = axis_size("x");
                 run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                   semaphore_signal(ready, 1, DeviceId((me + n - 1) % n));
                   semaphore_wait(ready, 1);
                   const auto c = make_async_remote_copy(x, y, send, recv, DeviceId((me + 1) % n));
                   c.start();
                   c.wait();
                 });
               })
                   .compile(Mesh{{"x", n}});
    const Array x = Array::generate<T>(n, Shape{kBlock}, [](int d, std::int64_t i) { return sample<T>(d, i); });
    const auto out = exe(x)[0];
    for (int d = 0; d < n; ++d)
      EXPECT_TRUE(same_bits(out.template to_host<T>(d), x.template to_host<T>(mod(d - 1, n)))) << "N=" << n << " device " << d;
  }
}

// ---------------------------------------------------------------- combining copies into halves

template <class H>
class Halves : public ::testing::Test {};
using HalfTypes = ::testing::Types<bf16, f16>;
TYPED_TEST_SUITE(Halves, HalfTypes);

/// Device 0's y starts as x0; devices 1..n-1 send their x into it one after
/// the other (each waits for the one before: a token passes along the ring),
/// with start(accumulate). The copies go to y.at(ds(0, len, stride)) so both
/// the contiguous and the strided combine are exercised.
template <class H>
Executable accumulate_in_turn(int n, CopyReduce reduce, std::int64_t stride, Runtime& rt = Runtime::global()) {
  return kernel([n, reduce, stride](HbmRef<const H, kBlock> x, HbmRef<H, kBlock * 2> y) {
           const auto me = axis_index("x");
           const auto dst = y.at(ds(0, kBlock, stride));
           run_scoped([&](RegularSemaphore turn, DmaSemaphore send, DmaSemaphore recv) {
             when(me == 0, [&] {
               sync_copy(x, dst);
               semaphore_signal(turn, 1, DeviceId(1));  // device 1's turn
               // n-1 blocks arrive, one after the other; one wait takes all their bytes.
               for (int k = 1; k < n; ++k) make_async_copy(x, dst, recv).wait();
             });
             when(me > 0, [&] {
               semaphore_wait(turn, 1);
               const auto c = make_async_remote_copy(x, dst, send, recv, DeviceId(0));
               c.start(Accumulate{reduce});
               c.wait_send();
               // The block has landed when the send completes: the next device may go.
               when(me + 1 < n, [&] { semaphore_signal(turn, 1, DeviceId(me + 1)); });
             });
           });
         })
      .compile(Mesh{{"x", n}}, {}, rt);
}

/// A runtime that splits every copy into 64-byte chunks run by pool tasks
/// (the copy engine's chunked path combines each chunk separately).
RuntimeOptions tiny_chunks() {
  RuntimeOptions o;
  o.workers = 2;
  o.inline_copy_bytes = 0;
  o.copy_chunk_bytes = 64;
  return o;
}

TYPED_TEST(Halves, AccumulatingCopiesRoundOncePerBlock) {
  using H = TypeParam;
  Watchdog dog(kTestLimit, "accumulating copies");
  Runtime chunky(tiny_chunks());
  for (Runtime* rt : {&Runtime::global(), &chunky})  // copies whole, and in 64-byte chunks
  for (int n : {2, 4})
    for (std::int64_t stride : {1, 2}) {
      // Element 0: 256 + 1 + 1 + 1 -- per-block rounding gives 256 for bf16
      // (each +1 is a tie back to even), an f32 accumulator 259 -> 260.
      const Array x = Array::generate<H>(n, Shape{kBlock}, [](int d, std::int64_t i) {
        if (i == 0) return H(d == 0 ? 256.0f : 1.0f);
        if (i == 1) return H(d == 0 ? 2048.0f : 1.0f);  // f16's tie at 2048 (spacing 2)
        return sample<H>(d, i);
      }, *rt);
      const auto y = accumulate_in_turn<H>(n, CopyReduce::sum, stride, *rt)(x)[0].template to_host<H>(0);
      std::vector<H> want = x.template to_host<H>(0);
      for (int d = 1; d < n; ++d) {
        const std::vector<H> xd = x.template to_host<H>(d);
        for (std::size_t i = 0; i < want.size(); ++i) want[i] = H(static_cast<float>(want[i]) + static_cast<float>(xd[i]));
      }
      for (std::int64_t i = 0; i < kBlock; ++i)
        ASSERT_EQ(y[static_cast<std::size_t>(i * stride)].bits(), want[static_cast<std::size_t>(i)].bits())
            << "N=" << n << " stride " << stride << (rt == &chunky ? " (64-byte chunks)" : "") << " element " << i << ": got " << float(y[static_cast<std::size_t>(i * stride)])
            << ", expected " << float(want[static_cast<std::size_t>(i)]);
      if constexpr (std::is_same_v<H, bf16>) {
        EXPECT_EQ(float(y[0]), 256.0f) << "bf16: each +1 ties back to 256";
      } else {
        EXPECT_EQ(float(y[static_cast<std::size_t>(stride)]), 2048.0f) << "f16: each +1 ties back to 2048";
      }
    }
}

TYPED_TEST(Halves, AccumulateMaxKeepsTheMaximumAndNaNWins) {
  using H = TypeParam;
  Watchdog dog(kTestLimit, "accumulate_max");
  const int n = 4;
  const Array x = Array::generate<H>(n, Shape{kBlock}, [](int d, std::int64_t i) {
    if (i == 0 && d == 2) return std::numeric_limits<H>::quiet_NaN();
    if (i == 1) return H(-1.0f * static_cast<float>(d + 1));  // all negative: the max is -1 (device 0)
    if (i == 2) return d == 3 ? std::numeric_limits<H>::infinity() : H(5.0f);
    return sample<H>(d, i);
  });
  const auto y = accumulate_in_turn<H>(n, CopyReduce::max, 1)(x)[0].template to_host<H>(0);
  EXPECT_TRUE(std::isnan(float(y[0])));
  EXPECT_EQ(float(y[1]), -1.0f);
  EXPECT_TRUE(std::isinf(float(y[2])));
  for (std::int64_t i = 3; i < kBlock; ++i) {
    float want = -1e30f;
    for (int d = 0; d < n; ++d) want = std::max(want, float(sample<H>(d, i)));
    ASSERT_EQ(float(y[static_cast<std::size_t>(i)]), want) << "element " << i;
  }
}

TYPED_TEST(Halves, RefAccumRoundsOncePerAccumulation) {
  using H = TypeParam;
  // acc starts at 256 (bf16) or 2048 (f16), where the spacing is 2: adding
  // 1.0 eight times stays there (each sum is a tie back to even: a sequential
  // half accumulator stalls), adding 2.0 does not, adding 1.5 rounds up to +2
  // each time; `acc += x * 0.5` is fused into one loop and still rounds the
  // product, then the sum.
  const float base = std::is_same_v<H, bf16> ? 256.0f : 2048.0f;
  auto exe = kernel([base](VmemRef<const H, 4> x, VmemRef<H, 4> acc) {
               acc.store(Scalar<H>(H(base)));
               fori_loop(0, 8, [&](Scalar<std::int32_t>) { acc += x.load() * H(0.5f); });
             })
                 .compile(Mesh{{"x", 1}});
  const std::vector<H> xs{H(2.0f), H(4.0f), H(1.0f), H(3.0f)};
  const auto got = exe(Array::from_shards<H>({xs}, Shape{4}))[0].template to_host<H>(0);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    H want(base);
    for (int k = 0; k < 8; ++k) want = H(float(want) + float(H(float(xs[i]) * 0.5f)));
    EXPECT_EQ(got[i].bits(), want.bits()) << "element " << i << ": got " << float(got[i]) << ", expected " << float(want);
  }
  EXPECT_EQ(float(got[0]), base);          // +1: ties back every time
  EXPECT_EQ(float(got[1]), base + 16.0f);  // +2: exact
  EXPECT_EQ(float(got[2]), base);          // +0.5: lost
  EXPECT_EQ(float(got[3]), base + 16.0f);  // +1.5: rounds to +2
}

// ---------------------------------------------------------------- semaphores count bytes

TYPED_TEST(Halves, DmaSemaphoresCountTwoBytesPerElement) {
  using H = TypeParam;
  Watchdog dog(kTestLimit, "byte counts");
  Runtime rt;
  const StatsDelta delta(rt);
  // Device 1 sends kBlock halves to device 0 and says so; device 0 reads its
  // receive semaphore before waiting (2 * kBlock bytes), then takes them in
  // two waits of half the block each (kBlock bytes each).
  auto exe = kernel([](HbmRef<const H, kBlock> x, HbmRef<H, kBlock> y, VmemRef<std::int32_t, 3> counts) {
               const auto me = axis_index("x");
               counts.store(Scalar<std::int32_t>(-1));
               run_scoped([&](RegularSemaphore sent, DmaSemaphore send, DmaSemaphore recv) {
                 when(me == 1, [&] {
                   const auto c = make_async_remote_copy(x, y, send, recv, DeviceId(0));
                   c.start();
                   c.wait_send();
                   semaphore_signal(sent, 1, DeviceId(0));
                 });
                 when(me == 0, [&] {
                   semaphore_wait(sent, 1);
                   counts.at(0).store(semaphore_read(recv));
                   make_async_copy(y.at(ds(0, kBlock / 2)), y.at(ds(0, kBlock / 2)), recv).wait();
                   counts.at(1).store(semaphore_read(recv));
                   make_async_copy(y.at(ds(0, kBlock / 2)), y.at(ds(0, kBlock / 2)), recv).wait();
                   counts.at(2).store(semaphore_read(recv));
                 });
               });
             })
                 .compile(Mesh{{"x", 2}}, {}, rt);
  const Array x = Array::generate<H>(2, Shape{kBlock}, [](int d, std::int64_t i) { return sample<H>(d, i); }, rt);
  const auto out = exe(x);
  const auto counts = out[1].template to_host<std::int32_t>(0);
  EXPECT_EQ(counts[0], kBlock * 2);
  EXPECT_EQ(counts[1], kBlock);
  EXPECT_EQ(counts[2], 0);
  EXPECT_TRUE(same_bits(out[0].template to_host<H>(0), x.template to_host<H>(1)));
  EXPECT_EQ(delta.get().bytes_copied, kBlock * 2);
  EXPECT_EQ(delta.get().copies, 1);
}

}  // namespace
