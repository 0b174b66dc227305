// f8e4m3fn and f8e5m2 end to end, on the threaded runtime over several
// devices: Arrays (generate, from_shards, to_host keep every bit), literals
// and arithmetic in kernels (computed in f32, rounded once per op; e4m3fn
// overflow gives NaN, e5m2 inf), in-kernel casts (the same bits as the host
// conversion, which fp8_conversions_test checks against the format), dot with
// an f32 accumulator (preferred_element_type) and with f8 results rounded
// once, collectives (sums round once per hop in the element type, as for
// bf16; max and data movement exact), combining copies and Ref accumulation,
// and the printer, DOT, timeline and debug_print names and values.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <refx/ir/eval.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/passes/pipeline.hpp>

#include "support/collectives_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

template <class T>
std::vector<std::uint8_t> bits_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> out;
  for (T x : v) out.push_back(x.bits());
  return out;
}

template <class T>
class Fp8 : public ::testing::Test {};
using Fp8Types = ::testing::Types<f8e4m3fn, f8e5m2>;
TYPED_TEST_SUITE(Fp8, Fp8Types);

constexpr bool is_e4m3fn(DType t) { return t == DType::f8e4m3fn; }

// ---------------------------------------------------------------- Arrays and kernels

TYPED_TEST(Fp8, ArraysKeepEveryCode) {
  using T = TypeParam;
  // All 256 codes, NaNs and -0 included, through from_shards / generate and back.
  std::vector<T> codes;
  for (int b = 0; b < 256; ++b) codes.push_back(T::from_bits(static_cast<std::uint8_t>(b)));
  const Array a = Array::from_shards<T>({codes, codes}, Shape{16, 16});
  EXPECT_EQ(a.dtype(), dtype_v<T>);
  EXPECT_EQ(a.shard(1).bytes(), 256u);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(bits_of(a.template to_host<T>(d)), bits_of(codes));
  const Array g =
      Array::generate<T>(3, Shape{5}, [](int d, std::int64_t i) { return 0.3f * static_cast<float>(d * 5 + i); });
  for (int d = 0; d < 3; ++d)
    for (std::int64_t i = 0; i < 5; ++i)
      EXPECT_EQ(g.template to_host<T>(d)[static_cast<std::size_t>(i)].bits(),
                T(0.3f * static_cast<float>(d * 5 + i)).bits());
}

TYPED_TEST(Fp8, KernelArithmeticRoundsOncePerOpAndOverflowsAsMlDtypes) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "f8 arithmetic");
  // a = x * 1.5 + 0.1 (a C++ float and a double literal, each rounded into T),
  // b = x * k with a Scalar<T> from a float, c = x * x: e4m3fn's 20 * 20 = 400
  // rounds to 384, 24 * 24 = 576 is NaN; e5m2 overflows to inf instead.
  auto exe = kernel([](VmemRef<const T, 6> x, VmemRef<T, 6> a, VmemRef<T, 6> b, VmemRef<T, 6> c) {
               a.store(x.load() * 1.5f + 0.1);
               const Scalar<T> k = 0.3f;
               b.store(x.load() * k);
               c.store(x.load() * x.load());
             }).compile(Mesh{{"x", 2}});
  const float big = std::is_same_v<T, f8e4m3fn> ? 24.0f : 320.0f;  // big * big overflows
  const std::vector<T> xs{T(1.0f), T(20.0f), T(-3.0f), T(0x1p-9f), T(big), T(-0.0f)};
  const auto out = exe(Array::from_shards<T>({xs, xs}, Shape{6}));
  for (int d = 0; d < 2; ++d) {
    const auto a = out[0].template to_host<T>(d), b = out[1].template to_host<T>(d), c = out[2].template to_host<T>(d);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const T prod(float(xs[i]) * float(T(1.5f)));
      EXPECT_EQ(a[i].bits(), T(float(prod) + float(T(0.1))).bits()) << i;
      EXPECT_EQ(b[i].bits(), T(float(xs[i]) * float(T(0.3f))).bits()) << i;
      EXPECT_EQ(c[i].bits(), T(float(xs[i]) * float(xs[i])).bits()) << i;
    }
    if constexpr (std::is_same_v<T, f8e4m3fn>) {
      EXPECT_EQ(float(c[1]), 384.0f);
      EXPECT_EQ(c[4].bits(), 0x7f);  // 576: NaN, not 448
    } else {
      EXPECT_EQ(float(c[1]), 384.0f);
      EXPECT_EQ(c[4].bits(), 0x7c);  // 102400: inf
    }
  }
}

TEST(Fp8Casts, InKernelCastsMatchTheHostConversionOnFourDevices) {
  Watchdog dog(kTestLimit, "f8 casts");
  // f32 values around f8 boundaries on 4 devices (a quarter each), cast to
  // both f8 types, back to f32 and to bf16, f16 and i32.
  constexpr std::int64_t m = 64;
  const auto value = [](int d, std::int64_t i) {
    const float base[] = {448.0f, 464.0f, 61440.0f, 0x1p-10f, 0x1p-17f, 17.0f, 9.0f, 0.1f};
    const float x = base[i % 8] * (1.0f + static_cast<float>((i / 8) % 4 - 2) * 0x1p-20f);
    return (d % 2 == 0 ? x : -x) * (d < 2 ? 1.0f : 0.5f);
  };
  auto exe = kernel([](VmemRef<const float, m> x, VmemRef<f8e4m3fn, m> a, VmemRef<f8e5m2, m> b, VmemRef<float, m> back,
                       VmemRef<bf16, m> h, VmemRef<f16, m> g, VmemRef<std::int32_t, m> i) {
               a.store(cast<f8e4m3fn>(x.load()));
               b.store(cast<f8e5m2>(x.load()));
               back.store(cast<float>(a.load()));
               h.store(cast<bf16>(b.load()));
               g.store(cast<f16>(b.load()));
               i.store(cast<std::int32_t>(a.load()));
             }).compile(Mesh{{"x", 4}});
  const auto out = exe(Array::generate<float>(4, Shape{m}, value));
  for (int d = 0; d < 4; ++d) {
    const auto a = out[0].to_host<f8e4m3fn>(d);
    const auto b = out[1].to_host<f8e5m2>(d);
    const auto back = out[2].to_host<float>(d);
    const auto h = out[3].to_host<bf16>(d);
    const auto g = out[4].to_host<f16>(d);
    const auto i32 = out[5].to_host<std::int32_t>(d);
    for (std::int64_t k = 0; k < m; ++k) {
      const auto j = static_cast<std::size_t>(k);
      const float x = value(d, k);
      ASSERT_EQ(a[j].bits(), f8e4m3fn(x).bits()) << "device " << d << " element " << k;
      ASSERT_EQ(b[j].bits(), f8e5m2(x).bits()) << "device " << d << " element " << k;
      const float ax = f8e4m3fn(x);
      ASSERT_TRUE(std::isnan(ax) ? std::isnan(back[j]) : back[j] == ax) << k;
      ASSERT_EQ(h[j].bits(), bf16(float(f8e5m2(x))).bits()) << k;
      ASSERT_EQ(g[j].bits(), static_cast<std::uint16_t>(f8e5m2(x).bits() << 8)) << k;
      ASSERT_EQ(i32[j], std::isnan(ax) ? 0 : static_cast<std::int32_t>(ax)) << k;
    }
  }
  // 464 -> 448 (the tie to even) and beyond -> NaN, on the device side too.
  EXPECT_EQ(out[0].to_host<f8e4m3fn>(0)[1 + 16].bits(), 0x7e);
  EXPECT_EQ(out[0].to_host<f8e4m3fn>(0)[1 + 24].bits(), 0x7f);
}

// ---------------------------------------------------------------- dot

/// Values k / 8 for k in [-40, 40]: exact in both f8 types only for some k,
/// so the operands are rounded into T first; their products are multiples
/// of 2^-6 below 25, and a sum of 24 of them is exact in f32 in any order.
template <class T>
std::vector<T> dot_operand(std::int64_t n, int salt) {
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(T(static_cast<float>((i * 37 + salt * 11) % 81 - 40) / 8.0f));
  return v;
}

TYPED_TEST(Fp8, DotAccumulatesInF32) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "f8 dot");
  constexpr std::int64_t m = 8, k = 24, n = 16;
  auto exe = kernel([](VmemRef<const T, m, k> a, VmemRef<const T, k, n> b, VmemRef<const T, n, k> bt,
                       VmemRef<float, m, n> wide, VmemRef<T, m, n> narrow, VmemRef<float, m, n> wide_t) {
               wide.store(dot<float>(a.load(), b.load()));
               narrow.store(dot(a.load(), b.load()));
               wide_t.store(dot<float>(a.load(), bt.load(), trans_b));
             }).compile(Mesh{{"x", 2}});
  std::vector<std::vector<T>> as, bs, bts;
  for (int d = 0; d < 2; ++d) {
    as.push_back(dot_operand<T>(m * k, d));
    bs.push_back(dot_operand<T>(k * n, d + 2));
    std::vector<T> t(static_cast<std::size_t>(n * k));
    for (std::int64_t p = 0; p < k; ++p)
      for (std::int64_t j = 0; j < n; ++j)
        t[static_cast<std::size_t>(j * k + p)] = bs.back()[static_cast<std::size_t>(p * n + j)];
    bts.push_back(t);
  }
  const auto out = exe(array_of(as, Shape{m, k}), array_of(bs, Shape{k, n}), array_of(bts, Shape{n, k}));
  int inexact = 0;  // f8 results that the single rounding changed
  for (int d = 0; d < 2; ++d) {
    const auto wide = out[0].template to_host<float>(d), wide_t = out[2].template to_host<float>(d);
    const auto narrow = out[1].template to_host<T>(d);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (std::int64_t p = 0; p < k; ++p)
          sum += double(float(as[d][static_cast<std::size_t>(i * k + p)])) *
                 double(float(bs[d][static_cast<std::size_t>(p * n + j)]));
        const auto at = static_cast<std::size_t>(i * n + j);
        ASSERT_EQ(double(wide[at]), sum) << "device " << d << " (" << i << ", " << j << ")";
        ASSERT_EQ(double(wide_t[at]), sum) << "device " << d << " (" << i << ", " << j << ") trans_b";
        ASSERT_EQ(narrow[at].bits(), T(sum).bits()) << "device " << d << " (" << i << ", " << j << ")";
        inexact += double(float(narrow[at])) != sum;
      }
  }
  EXPECT_GT(inexact, 10);
}

// ---------------------------------------------------------------- collectives

TYPED_TEST(Fp8, AllReduceSumsExactlyWhenEveryPartialSumIsAnF8) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "f8 all-reduce");
  constexpr std::int64_t len = 37;
  for (int n : {2, 4}) {
    // Integers in [-2, 2]: every partial sum of up to 4 is in [-8, 8], exact in both types.
    std::vector<std::vector<T>> x(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d)
      for (std::int64_t i = 0; i < len; ++i)
        x[static_cast<std::size_t>(d)].push_back(T(static_cast<float>((d * 7 + i * 3) % 5 - 2)));
    for (Algorithm alg : {Algorithm::ring, Algorithm::direct, Algorithm::one_shot})
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
        const Array out = collectives::all_reduce_program<T>(Mesh{{"x", n}}, len,
                                                             {.op = op, .algorithm = alg})(array_of(x, Shape{len}))[0];
        for (std::int64_t i = 0; i < len; ++i) {
          float want = op == ReduceOp::sum ? 0.0f : -INFINITY;
          for (const auto& s : x)
            want = op == ReduceOp::sum ? want + float(s[static_cast<std::size_t>(i)])
                                       : std::max(want, float(s[static_cast<std::size_t>(i)]));
          ASSERT_EQ(float(out.template to_host<T>(n - 1)[static_cast<std::size_t>(i)]), want)
              << "N=" << n << " " << refx::testing::name_of(alg) << " " << refx::testing::name_of(op) << " element "
              << i;
        }
        ASSERT_TRUE(bitwise_identical_across_devices(out)) << refx::testing::name_of(alg);
      }
  }
}

TYPED_TEST(Fp8, AllReduceRoundsPerHopInTheElementType) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "f8 rounding per hop");
  // Element j has `base` on device j and 1 elsewhere (base: where the spacing
  // is 2, so base + 1 is a tie back to base). One-shot sums in device order:
  // base, base, then 1 + 1 + base + 1 = (base + 2) + 1, a tie to the even
  // base + 4 (both types). Direct starts from the owner's own base.
  const float base = std::is_same_v<T, f8e4m3fn> ? 16.0f : 8.0f;
  std::vector<std::vector<T>> x(4, std::vector<T>(4, T(1.0f)));
  for (std::size_t j = 0; j < 4; ++j) x[j][j] = T(base);
  const std::vector<float> one_shot{base, base, base + 4, base + 4}, direct{base, base, base, base};
  for (Algorithm a : {Algorithm::one_shot, Algorithm::direct}) {
    const Array out = collectives::all_reduce_program<T>(Mesh{{"x", 4}}, 4, {.algorithm = a})(array_of(x, Shape{4}))[0];
    std::vector<float> got;
    for (T v : out.template to_host<T>(0)) got.push_back(v);
    EXPECT_EQ(got, a == Algorithm::one_shot ? one_shot : direct) << refx::testing::name_of(a);
    EXPECT_TRUE(bitwise_identical_across_devices(out)) << refx::testing::name_of(a);
  }
  // A sum beyond the largest finite value: NaN for e4m3fn (no saturation), inf for e5m2.
  const float big = is_e4m3fn(dtype_v<T>) ? 256.0f : 40960.0f;
  const Array out =
      collectives::all_reduce_program<T>(Mesh{{"x", 2}}, 1, {})(array_of<T>({{T(big)}, {T(big)}}, Shape{1}))[0];
  EXPECT_EQ(out.template to_host<T>(1)[0].bits(), is_e4m3fn(dtype_v<T>) ? 0x7f : 0x7c);
}

TYPED_TEST(Fp8, GatherAndPermuteMoveTheBits) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "f8 all-gather and ppermute");
  constexpr std::int64_t m = 45;
  for (int n : {2, 4}) {
    std::vector<std::vector<T>> x(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d)
      for (std::int64_t i = 0; i < m; ++i)
        x[static_cast<std::size_t>(d)].push_back(T::from_bits(static_cast<std::uint8_t>((d * 91 + i * 13) % 256)));
    std::vector<T> gathered;
    for (const auto& s : x) gathered.insert(gathered.end(), s.begin(), s.end());
    const Array g = collectives::all_gather_program<T>(Mesh{{"x", n}}, m)(array_of(x, Shape{m}))[0];
    for (int d = 0; d < n; ++d) ASSERT_EQ(bits_of(g.template to_host<T>(d)), bits_of(gathered)) << "device " << d;
    using V = Ref<T, extents<dyn>, Hbm>;
    using CV = Ref<const T, extents<dyn>, Hbm>;
    const auto exe = kernel([](CV a, V b) {
                       ppermute_done(ppermute_start(a, b, "x", -1));
                     }).compile(Mesh{{"x", n}}, {Shape{m}, Shape{m}});
    const auto out = exe(array_of(x, Shape{m}))[0];
    for (int d = 0; d < n; ++d)
      ASSERT_EQ(bits_of(out.template to_host<T>(d)), bits_of(x[static_cast<std::size_t>((d + 1) % n)]));
  }
}

TYPED_TEST(Fp8, InKernelAllReduceAndAllGather) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "in-kernel f8 collectives");
  constexpr std::int64_t m = 21;
  for (int n : {2, 4}) {
    const auto exe = kernel([](VmemRef<const T, m> x, VmemRef<T, m> sum, Ref<T, extents<dyn, m>, Vmem> all) {
                       sum.store(x.load() * T(0.5f));
                       collectives::all_reduce(sum, "x", ReduceOp::sum);
                       sum.store(sum.load() + 0.25f);
                       collectives::all_gather(x, all, "x");
                     }).compile(Mesh{{"x", n}}, {Shape{m}, Shape{m}, Shape{n, m}});
    std::vector<std::vector<T>> x(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d)
      for (std::int64_t i = 0; i < m; ++i)
        x[static_cast<std::size_t>(d)].push_back(T(static_cast<float>((d + i) % 5 - 2)));
    const auto out = exe(array_of(x, Shape{m}));
    std::vector<T> gathered;
    for (const auto& s : x) gathered.insert(gathered.end(), s.begin(), s.end());
    for (int d = 0; d < n; ++d) {
      const auto s = out[0].template to_host<T>(d);
      for (std::int64_t i = 0; i < m; ++i) {
        float half_sum = 0;  // halves of [-2, 2], summed: every partial sum is exact in both types
        for (const auto& b : x) half_sum += 0.5f * float(b[static_cast<std::size_t>(i)]);
        ASSERT_EQ(s[static_cast<std::size_t>(i)].bits(), T(half_sum + 0.25f).bits())
            << "N=" << n << " device " << d << " element " << i;
      }
      ASSERT_EQ(bits_of(out[1].template to_host<T>(d)), bits_of(gathered));
    }
  }
}

// ---------------------------------------------------------------- combining copies and accumulation

TYPED_TEST(Fp8, CombiningCopiesRoundOncePerBlock) {
  using T = TypeParam;
  Watchdog dog(kTestLimit, "f8 combining copies");
  constexpr std::int64_t m = 5;
  // Device 1 sends its x into device 0's y (which holds device 0's x) with
  // start(accumulate) and start(accumulate_max).
  const auto run = [](CopyReduce reduce, const std::vector<std::vector<T>>& x) {
    auto exe = kernel([reduce](HbmRef<const T, m> a, HbmRef<T, m> y) {
                 const auto me = axis_index("x");
                 sync_copy(a, y);
                 run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                   when(me == 0, [&] {
                     semaphore_signal(ready, 1, DeviceId(1));
                     make_async_copy(a, y, recv).wait();
                   });
                   when(me == 1, [&] {
                     semaphore_wait(ready, 1);
                     const auto c = make_async_remote_copy(a, y, send, recv, DeviceId(0));
                     c.start(Accumulate{reduce});
                     c.wait_send();
                   });
                 });
               }).compile(Mesh{{"x", 2}});
    return exe(array_of(x, Shape{m}))[0].template to_host<T>(0);
  };
  const T big(is_e4m3fn(dtype_v<T>) ? 448.0f : 57344.0f), nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<std::vector<T>> x{{T(16.0f), big, T(-3.0f), T(0.75f), T(1.0f)},
                                      {T(1.0f), big, T(-5.0f), T(0x1p-9f), nan}};
  const auto sum = run(CopyReduce::sum, x), mx = run(CopyReduce::max, x);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(sum[i].bits(), T(float(x[0][i]) + float(x[1][i])).bits()) << i;
  EXPECT_EQ(float(sum[0]), 16.0f);                                // 17: a tie back to even 16 in both types
  EXPECT_EQ(sum[1].bits(), is_e4m3fn(dtype_v<T>) ? 0x7f : 0x7c);  // 896 / 114688: NaN / inf
  EXPECT_TRUE(std::isnan(float(sum[4])));
  EXPECT_EQ(float(mx[2]), -3.0f);
  EXPECT_EQ(float(mx[3]), 0.75f);
  EXPECT_TRUE(std::isnan(float(mx[4])));  // a NaN wins the maximum
}

TYPED_TEST(Fp8, RefAccumRoundsOncePerAccumulation) {
  using T = TypeParam;
  // acc starts where the spacing is 2: adding 1 stalls there (ties back to
  // even), adding 2 does not, 1.5 rounds up to 2 each time.
  const float base = is_e4m3fn(dtype_v<T>) ? 16.0f : 8.0f;
  auto exe = kernel([base](VmemRef<const T, 3> x, VmemRef<T, 3> acc) {
               acc.store(Scalar<T>(T(base)));
               fori_loop(0, 4, [&](Scalar<std::int32_t>) { acc += x.load(); });
             }).compile(Mesh{{"x", 1}});
  const std::vector<T> xs{T(1.0f), T(2.0f), T(1.5f)};
  const auto got = exe(Array::from_shards<T>({xs}, Shape{3}))[0].template to_host<T>(0);
  EXPECT_EQ(float(got[0]), base);
  EXPECT_EQ(float(got[1]), base + 8.0f);
  EXPECT_EQ(got[2].bits(), T(float(T(float(T(float(T(base + 1.5f)) + 1.5f)) + 1.5f)) + 1.5f).bits());
}

// ---------------------------------------------------------------- bitcast views

TEST(Fp8Bitcast, BytesViewedAsF8AndBack) {
  // A u8 buffer of codes read as f8e4m3fn (and f8e5m2 written through a u8
  // view), as a quantised KV cache stored as bytes is.
  const Graph g = trace([](VmemRef<std::uint8_t, 8> codes, VmemRef<float, 8> values, VmemRef<std::uint8_t, 8> out) {
    values.store(cast<float>(codes.bitcast<f8e4m3fn>().load()));
    out.bitcast<f8e5m2>().store(cast<f8e5m2>(values.load()));
  });
  EXPECT_TRUE(contains(to_text(g), "as f8e4m3fn[8]")) << to_text(g);
  std::vector<std::uint8_t> codes{0x38, 0x7e, 0xfe, 0x01, 0x7f, 0x80, 0x1d, 0x59};
  Buffer c = Buffer::from<std::uint8_t>(Shape{8}, codes), v(DType::f32, Shape{8}), o(DType::u8, Shape{8});
  interpret(g, c, v, o);
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const float want = f8e4m3fn::from_bits(codes[i]);
    const float got = v.data<float>()[i];
    EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << i;
    EXPECT_EQ(o.data<std::uint8_t>()[i], f8e5m2(want).bits()) << i;
  }
}

// ---------------------------------------------------------------- printer, DOT, timeline, debug_print

TEST(Fp8Names, PrinterDotTimelineAndDebugPrint) {
  const Graph g = trace([](VmemRef<const f8e4m3fn, 8> x, VmemRef<f8e5m2, 8> y, VmemRef<float, 8> z) {
    y.store(cast<f8e5m2>(x.load() * f8e4m3fn(1.5f)));
    z.store(cast<float>(y.load()));
  });
  const std::string text = to_text(g);
  for (std::string_view part : {"Ref{f8e4m3fn[8]", "Ref{f8e5m2[8]", "f8e4m3fn[8]", "f8e5m2[8]", "1.5"})
    EXPECT_TRUE(contains(text, part)) << "missing \"" << part << "\" in\n" << text;
  const std::string dot = to_dot(g, passes::dependency_edges(g));  // DOT names ops, not types
  EXPECT_TRUE(contains(dot, "convert")) << dot;
  EXPECT_EQ(fmt::format("{} {}", DType::f8e4m3fn, DType::f8e5m2), "f8e4m3fn f8e5m2");
  EXPECT_EQ(size_of(DType::f8e4m3fn), 1u);
  EXPECT_TRUE(is_floating(DType::f8e5m2));

  Watchdog dog(kTestLimit, "timeline of an f8 copy");
  Runtime rt;
  auto exe = kernel([](HbmRef<const f8e5m2, 300> x, HbmRef<f8e5m2, 300> y) { sync_copy(x, y); })
                 .name("f8_copy")
                 .compile(Mesh{{"x", 1}}, {}, rt);
  rt.start_timeline();
  const auto out = exe(Array::generate<f8e5m2>(
      1, Shape{300}, [](int, std::int64_t i) { return static_cast<float>(i); }, rt));
  EXPECT_EQ(float(out[0].to_host<f8e5m2>(0)[299]), 320.0f);  // 299 -> 320 (spacing 64 above 256)
  const std::string json = rt.stop_timeline().json();
  EXPECT_TRUE(contains(json, "\"copy_bytes\":300")) << json.substr(0, 2000);

  std::vector<std::string> lines;
  const Graph p = trace([](VmemRef<const f8e4m3fn, 3> x) { debug_print("x={} s={}", x.load(), x.at(1).load()); });
  Buffer bx =
      Buffer::from<f8e4m3fn>(Shape{3}, std::vector<f8e4m3fn>{f8e4m3fn(1.0f), f8e4m3fn(0.1f), f8e4m3fn(-448.0f)});
  struct Capture : ExecEnv {
    std::vector<std::string>* lines;
    void host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) override {
      if (auto error = perform_host_effect(*e, op, [this](std::string_view s) { lines->emplace_back(s); }))
        std::rethrow_exception(error);
    }
  } env;
  env.lines = &lines;
  interpret(p, std::vector<Buffer*>{&bx}, env);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "x=[1, 0.1015625, -448] s=0.1015625");  // f8 values print as their f32 value
}

}  // namespace
