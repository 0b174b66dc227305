// The Pallas forms of a pallas_call that published TPU kernels use, as
// pipeline_kernel takes them (issue 60): squeezed block dimensions (`None`),
// unblocked Hbm operands (`memory_space=pl.ANY`) the body copies from
// itself, scalar operands that are floats or that the body writes (state kept
// across steps), and output blocks larger than their array (padding dropped).
// Each is run through the runtime against a host computation, with the race
// detector and lazy copies on.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

const RuntimeOptions kModes[] = {RuntimeOptions{}, RuntimeOptions{.detect_races = true},
                                 RuntimeOptions{.lazy_copies = true}};

float xval(std::int64_t e) { return float(e % 89) - 30.0f; }

/// grid(n), rolled or unrolled.
template <bool Rolled>
auto grid_of(I n) {
  if constexpr (Rolled) return grid(n).rolled();
  else return grid(n).unrolled();
}
/// What `f` throws (an Error's message), or "no error".
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// Pallas' block (None, 8, 128): the body's block is (8, 128), and the index
// map's first index is an element index. A squeezed middle dimension too:
// (2, None, 64) over (4, 3, 64) visits every (row pair, plane).
TEST(Squeezed, LeadingAndMiddleDimensionsDropFromTheBodysBlock) {
  const auto k = pipeline_kernel<HbmRef<const float, 4, 8, 128>, HbmRef<const float, 4, 3, 64>, HbmRef<float, 4, 8, 128>,
                                 HbmRef<float, 4, 3, 64>>(
      grid(4, 3),
      [](VmemRef<const float, 8, 128> a, VmemRef<const float, 2, 64> b, VmemRef<float, 8, 128> za,
         VmemRef<float, 2, 64> zb) {
        za.store(a.load() * 2.0f);
        zb.store(b.load() + 1.0f);
      },
      block<squeezed, 8, 128>([](I i, I) { return std::array<I, 3>{i, 0, 0}; }),
      block<2, squeezed, 64>([](I i, I j) { return std::array<I, 3>{i / 2, j, 0}; }),
      block<squeezed, 8, 128>([](I i, I) { return std::array<I, 3>{i, 0, 0}; }),
      block<2, squeezed, 64>([](I i, I j) { return std::array<I, 3>{i / 2, j, 0}; }));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    const Array a = Array::generate<float>(1, Shape{4, 8, 128}, [](int, I e) { return xval(e); }, rt);
    const Array b = Array::generate<float>(1, Shape{4, 3, 64}, [](int, I e) { return xval(3 * e); }, rt);
    const auto out = exe(a, b);
    const auto za = out[0].to_host<float>(0), zb = out[1].to_host<float>(0);
    for (I e = 0; e < 4 * 8 * 128; ++e) ASSERT_EQ(za[static_cast<std::size_t>(e)], 2.0f * xval(e)) << e;
    for (I e = 0; e < 4 * 3 * 64; ++e) ASSERT_EQ(zb[static_cast<std::size_t>(e)], xval(3 * e) + 1.0f) << e;
  }
}

// Paged attention's pattern: a table (read-only Smem), a float scale (Smem),
// a step counter and a buffer index the body writes (writable Smem scalar
// operands), an unblocked Hbm operand (any()) whose rows the body copies
// into a double-buffered Vmem scratch itself, prefetching the next step's.
// Row i of z = scale * x[table[i]] + (the step counter's initial value + i).
constexpr I kRows = 6, kCols = 128, kSteps = 5;
const auto gather_scaled =
    pipeline_kernel<SmemRef<const i32, kSteps>, SmemRef<const float, 1>, SmemRef<i32, 1>, SmemRef<i32, 1>,
                    HbmRef<const float, kRows, kCols>, HbmRef<float, kSteps, kCols>>(
        grid(kSteps),
        [](SmemRef<const i32, kSteps> table, SmemRef<const float, 1> scale, SmemRef<i32, 1> step,
           SmemRef<i32, 1> buffer, HbmRef<const float, kRows, kCols> x, VmemRef<float, 1, kCols> zb,
           VmemRef<float, 2, kCols> rows, DmaSemaphores<2> sems) {
          const auto i = traced_program_id(0);
          const auto fetch = [&](Scalar<i32> at, Scalar<i32> slot) {
            return make_async_copy(x.at(table.at(at).load()), rows.at(slot), sems.at(slot));
          };
          // step and buffer start as the caller passed them.
          when(i == 0, [&] { fetch(i, buffer.at(0).load()).start(); });
          const auto slot = buffer.at(0).load();
          when(i + 1 < kSteps, [&] {
            const auto next = cond(slot == 0, [] { return Scalar<i32>(1); }, [] { return Scalar<i32>(0); });
            fetch(i + 1, next).start();
            buffer.at(0).store(next);
          });
          fetch(i, slot).wait();
          zb.at(0).store(rows.at(slot).load() * scale.at(0).load() + cast<float>(step.at(0).load()));
          step.at(0).store(step.at(0).load() + 1);
        },
        any(), block<1, kCols>([](I i, auto&&...) { return std::array<I, 2>{i, 0}; }),
        scratch<VmemRef<float, 2, kCols>>(), scratch<DmaSemaphores<2>>());

TEST(AnyOperand, TheBodyCopiesFromAnUnblockedHbmOperandWithWritableSmemState) {
  const std::vector<i32> table{4, 0, 0, 5, 2};
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(gather_scaled).compile(Mesh{{"x", 1}}, {}, rt);
    // Only z has blocks: one write-back per step, no fetches by the pipeline.
    EXPECT_EQ(exe.pipeline_report().copies, (std::vector<int>{0, kSteps, 0, 0}));
    const Array t = Array::from_shards<i32>({table}, Shape{kSteps}, rt);
    const Array scale = Array::from_shards<float>({{0.5f}}, Shape{1}, rt);
    const Array x = Array::generate<float>(1, Shape{kRows, kCols}, [](int, I e) { return xval(e); }, rt);
    // The writable Smem operands are inputs too (Pallas passes zeros); the
    // body's writes stay in its Smem copy: z is the only output.
    const Array step0 = Array::from_shards<i32>({{10}}, Shape{1}, rt);
    const Array buffer0 = Array::from_shards<i32>({{1}}, Shape{1}, rt);
    const auto out = exe(t, scale, step0, buffer0, x);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(step0.to_host<i32>(0), (std::vector<i32>{10}));
    const auto z = out[0].to_host<float>(0);
    for (I r = 0; r < kSteps; ++r)
      for (I c = 0; c < kCols; ++c)
        ASSERT_EQ(z[static_cast<std::size_t>(r * kCols + c)],
                  0.5f * xval(table[static_cast<std::size_t>(r)] * kCols + c) + float(10 + r))
            << r << "," << c;
  }
}

// Paged attention's m and l outputs, [B, H, 1], reuse q's (None, H, 128)
// block: each step writes a (H, 128) block of which lane 0 lies in the array;
// the write-back drops the rest. An input block that large is still refused
// (it would read padding): tests/pipeline/operands_test.cpp, Partial.*.
TEST(PaddedOutput, ABlockLargerThanItsOutputWritesOnlyWhatLiesInTheArray) {
  constexpr I kB = 3, kH = 8, kD = 128;
  const auto k = pipeline_kernel<HbmRef<const float, kB, kH, kD>, HbmRef<float, kB, kH, 1>>(
      grid(kB),
      [](VmemRef<const float, kH, kD> q, VmemRef<float, kH, kD> m) {
        m.store(broadcast_to<kH, kD>(reduce_max<1>(q.load(), keepdims)));
      },
      block<squeezed, kH, kD>([](I b) { return std::array<I, 3>{b, 0, 0}; }),
      block<squeezed, kH, kD>([](I b) { return std::array<I, 3>{b, 0, 0}; }));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    const Array q = Array::generate<float>(1, Shape{kB, kH, kD}, [](int, I e) { return xval(7 * e); }, rt);
    const auto m = exe(q)[0].to_host<float>(0);
    ASSERT_EQ(m.size(), std::size_t(kB * kH));
    for (I r = 0; r < kB * kH; ++r) {
      float want = xval(7 * r * kD);
      for (I c = 0; c < kD; ++c) want = std::max(want, xval(7 * (r * kD + c)));
      ASSERT_EQ(m[static_cast<std::size_t>(r)], want) << r;
    }
  }
}
}  // namespace

namespace {
// Pallas' None among the operands (flash attention's ab=None, the l and m
// outputs without save_residuals): the kernel has no parameter for it, the
// body gets refx::None and tests it at compile time.
template <bool kWithBias>
std::vector<float> biased_double(const std::vector<float>& x, const std::vector<float>& bias) {
  using Bias = std::conditional_t<kWithBias, HbmRef<const float, 4, 128>, None>;
  const auto map = [](I i) { return std::array<I, 2>{i, 0}; };
  const auto bias_spec = [&] {
    if constexpr (kWithBias) return block<1, 128>(map);
    else return none;
  }();
  const auto k = pipeline_kernel<HbmRef<const float, 4, 128>, Bias, HbmRef<float, 4, 128>, None>(
      grid(4),
      [](VmemRef<const float, 1, 128> xb, auto bias_ref, VmemRef<float, 1, 128> zb, auto residual) {
        static_assert(is_none_v<decltype(residual)>);
        if constexpr (is_none_v<decltype(bias_ref)>) zb.store(xb.load() * 2.0f);
        else zb.store(xb.load() * 2.0f + bias_ref.load());
      },
      block<1, 128>(map), bias_spec, block<1, 128>(map), none);
  Runtime rt(RuntimeOptions{.detect_races = true});
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
  EXPECT_EQ(exe.num_inputs(), kWithBias ? 2u : 1u);
  std::vector<Array> in{Array::from_shards<float>({x}, Shape{4, 128}, rt)};
  if (kWithBias) in.push_back(Array::from_shards<float>({bias}, Shape{4, 128}, rt));
  const auto out = exe(in);
  EXPECT_EQ(out.size(), 1u);  // the None output is not returned
  return out[0].to_host<float>(0);
}

TEST(OptionalOperands, ANoneParameterIsNoKernelParameterAndTheBodyGetsNone) {
  std::vector<float> x(4 * 128), bias(4 * 128);
  for (std::size_t e = 0; e < x.size(); ++e) {
    x[e] = xval(static_cast<I>(e));
    bias[e] = float(e % 7);
  }
  const auto plain = biased_double<false>(x, bias), biased = biased_double<true>(x, bias);
  for (std::size_t e = 0; e < x.size(); ++e) {
    ASSERT_EQ(plain[e], 2.0f * x[e]) << e;
    ASSERT_EQ(biased[e], 2.0f * x[e] + bias[e]) << e;
  }
}
}  // namespace

namespace {
// gmm's grid=(tiles_n, num_active_tiles, tiles_k): an extent read from a
// scalar operand when the kernel runs, through one compiled kernel: every
// step below it runs (rows 0 .. n-1 doubled), none past it; 0 runs none;
// above the bound it is a run-time error naming the dimension.
TEST(DynamicGrid, AnExtentReadFromDataBoundsTheStepsAtRunTime) {
  const auto k = pipeline_kernel<SmemRef<const i32, 1>, HbmRef<const float, 8, 128>, HbmRef<float, 8, 128>>(
      grid(2, scalar_extent(0, 0, 4)),
      [](SmemRef<const i32, 1>, VmemRef<const float, 1, 128> xb, VmemRef<float, 1, 128> zb) {
        zb.store(xb.load() * 2.0f);
      },
      block<1, 128>([](auto i, auto j, auto&&...) { return std::tuple{i * 4 + j, I{0}}; }),
      block<1, 128>([](auto i, auto j, auto&&...) { return std::tuple{i * 4 + j, I{0}}; }));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    EXPECT_TRUE(exe.pipeline_report().rolled);
    const Array x = Array::generate<float>(1, Shape{8, 128}, [](int, I e) { return xval(e); }, rt);
    for (i32 n : {0, 1, 3, 4}) {
      Array z = Array::generate<float>(1, Shape{8, 128}, [](int, I) { return -7.0f; }, rt);
      exe.call_in_place({Array::from_shards<i32>({{n}}, Shape{1}, rt), x, z});
      const auto got = z.to_host<float>(0);
      for (I r = 0; r < 8; ++r)
        for (I c = 0; c < 128; ++c) {
          const bool ran = r % 4 < n;  // grid point (r / 4, r % 4)
          ASSERT_EQ(got[static_cast<std::size_t>(r * 128 + c)], ran ? 2.0f * xval(r * 128 + c) : -7.0f)
              << "n " << n << " row " << r;
        }
    }
    std::string msg = "no error";
    try {
      exe(Array::from_shards<i32>({{5}}, Shape{1}, rt), x)[0].block_until_ready();
    } catch (const Error& e) {
      msg = e.what();
    }
    EXPECT_NE(msg.find("pipeline_kernel: the extent of grid dimension 1, read from data, must lie in [0, 4]"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("pallas_forms_test.cpp"), std::string::npos) << msg;
  }
}

// The same grid in an emit_pipeline: the extent is a traced value of the
// kernel (traced_extent); a grid whose maps take integers only cannot roll,
// and an extent from data needs a rolled grid: a trace-time error.
TEST(DynamicGrid, TracedExtentInAnEmitPipeline) {
  const auto k = [](SmemRef<const i32, 1> n, HbmRef<const float, 4, 128> x, HbmRef<float, 4, 128> z) {
    emit_pipeline(grid(traced_extent(n[0], 4)), [](VmemRef<const float, 1, 128> xb, VmemRef<float, 1, 128> zb) {
      zb.store(xb.load() + 1.0f);
    })(in(x, block<1, 128>([](auto i) { return std::tuple{i, I{0}}; })),
       out(z, block<1, 128>([](auto i) { return std::tuple{i, I{0}}; })));
  };
  Runtime rt;
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(1, Shape{4, 128}, [](int, I e) { return xval(e); }, rt);
  Array z = Array::generate<float>(1, Shape{4, 128}, [](int, I) { return 0.5f; }, rt);
  exe.call_in_place({Array::from_shards<i32>({{2}}, Shape{1}, rt), x, z});
  const auto got = z.to_host<float>(0);
  for (I e = 0; e < 4 * 128; ++e) ASSERT_EQ(got[static_cast<std::size_t>(e)], e < 256 ? xval(e) + 1.0f : 0.5f) << e;

  const auto integer_maps = [](SmemRef<const i32, 1> n, HbmRef<const float, 4, 128> x, HbmRef<float, 4, 128> z) {
    emit_pipeline(grid(traced_extent(n[0], 4)), [](VmemRef<const float, 1, 128> xb, VmemRef<float, 1, 128> zb) {
      zb.store(xb.load());
    })(in(x, block<1, 128>([](I i) { return std::array<I, 2>{i, 0}; })),
       out(z, block<1, 128>([](I i) { return std::array<I, 2>{i, 0}; })));
  };
  std::string msg = "no error";
  try {
    (void)trace(integer_maps);
  } catch (const TraceError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("emit_pipeline: a grid extent known only at run time needs a rolled grid"), std::string::npos)
      << msg;
}

// Pallas' pl.Element(n): the index map gives the element a block starts at.
// Overlapping windows (a halo): step i reads rows [8 i, 8 i + 16) and
// writes row r of its 8-row block as x[8 i + r] + x[8 i + r + 8]; unrolled
// and rolled (where the element start is traced).
template <bool Rolled>
void check_halo_windows() {
  const auto map_x = [](auto i) { return std::tuple{i * 8, I{0}}; };
  const auto map_z = [](auto i) { return std::tuple{i, I{0}}; };
  const auto k = pipeline_kernel<HbmRef<const float, 40, 128>, HbmRef<float, 32, 128>>(
      grid_of<Rolled>(4),
      [](VmemRef<const float, 16, 128> w, VmemRef<float, 8, 128> zb) {
        zb.store(w.at(ds<8>(0), all).load() + w.at(ds<8>(8), all).load());
      },
      block<element(16), 128>(map_x), block<8, 128>(map_z));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    EXPECT_EQ(exe.pipeline_report().rolled, Rolled);
    const Array x = Array::generate<float>(1, Shape{40, 128}, [](int, I e) { return xval(e); }, rt);
    const auto z = exe(x)[0].to_host<float>(0);
    for (I e = 0; e < 32 * 128; ++e) ASSERT_EQ(z[static_cast<std::size_t>(e)], xval(e) + xval(e + 8 * 128)) << e;
  }
}
TEST(ElementDimension, OverlappingWindowsUnrolledAndRolled) {
  check_halo_windows<false>();
  check_halo_windows<true>();
}

// Ragged starts read from a scalar operand (a traced element index): block
// i is rows [starts[i], starts[i] + 8). A start that puts the window past
// the array stops the run naming the operand, the step and the line.
TEST(ElementDimension, StartsReadFromDataAreCheckedAtRunTime) {
  const int line = __LINE__ + 6;  // the block<element(8), 128> line
  const auto k = pipeline_kernel<SmemRef<const i32, 4>, HbmRef<const float, 40, 128>, HbmRef<float, 32, 128>>(
      grid(4),
      [](SmemRef<const i32, 4>, VmemRef<const float, 8, 128> w, VmemRef<float, 8, 128> zb) {
        zb.store(w.load() * 2.0f);
      },
      block<element(8), 128>([](I i, const auto& starts) { return std::tuple{starts.at(i).load(), I{0}}; }),
      block<8, 128>([](I i, auto&&...) { return std::tuple{i, I{0}}; }));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    const Array x = Array::generate<float>(1, Shape{40, 128}, [](int, I e) { return xval(e); }, rt);
    const std::vector<i32> starts{3, 0, 17, 32};
    const auto z = exe(Array::from_shards<i32>({starts}, Shape{4}, rt), x)[0].to_host<float>(0);
    for (I i = 0; i < 4; ++i)
      for (I e = 0; e < 8 * 128; ++e)
        ASSERT_EQ(z[static_cast<std::size_t>(i * 8 * 128 + e)], 2.0f * xval(starts[static_cast<std::size_t>(i)] * 128 + e))
            << i << " " << e;
    const std::string msg =
        error_of([&] { exe(Array::from_shards<i32>({{0, 33, 0, 0}}, Shape{4}, rt), x)[0].block_until_ready(); });
    EXPECT_NE(msg.find("pipeline_kernel: operand 0 (input, shape [40,128], block [8, 128]): the element start at step "
                       "1 of the grid puts the block outside the array: index 33"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(fmt::format("pallas_forms_test.cpp:{}", line)), std::string::npos) << msg;
  }
}

TEST(ElementDimension, AStartPastTheArrayIsATraceError) {
  const auto k = pipeline_kernel<HbmRef<const float, 40, 128>, HbmRef<float, 32, 128>>(
      grid(4), [](VmemRef<const float, 16, 128> w, VmemRef<float, 8, 128> zb) { zb.store(w.at(ds<8>(0), all).load()); },
      block<element(16), 128>([](I i) { return std::array<I, 2>{i * 9, 0}; }),
      block<8, 128>([](I i) { return std::array<I, 2>{i, 0}; }));
  const std::string msg = error_of([&] { (void)kernel(k).compile(Mesh{{"x", 1}}); });
  EXPECT_NE(msg.find("the index map gives element 27 along dimension 0 (an element(16) dimension) at grid step (3), "
                     "so the block [27, 43) lies outside the array's 40 elements there; return a start in [0, 24]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("pallas_forms_test.cpp"), std::string::npos) << msg;
}

// A block index read from data on a dimension the block does not divide
// (Pallas allows it; gmm's row tiles): blocks of 8 rows over 20, picked by a
// table, so block 2 is the partial last one (rows 16-19, then padding). Its
// rows past the array read as poison (NaN) in every mode, as a partial
// block at an integer index does; unrolled and rolled. A block index past
// the last block stops the run naming the operand and the step.
template <bool Rolled>
void check_traced_partial_blocks() {
  const auto k = pipeline_kernel<SmemRef<const i32, 4>, HbmRef<const float, 20, 128>, HbmRef<float, 32, 128>>(
      grid_of<Rolled>(4), [](SmemRef<const i32, 4>, VmemRef<const float, 8, 128> xb, VmemRef<float, 8, 128> zb) { zb.store(xb.load() + 1.0f); },
      block<8, 128>([](auto i, const auto& table) { return std::tuple{table.at(i).load(), I{0}}; }),
      block<8, 128>([](auto i, auto&&...) { return std::tuple{i, I{0}}; }));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    EXPECT_EQ(exe.pipeline_report().rolled, Rolled);
    const Array x = Array::generate<float>(1, Shape{20, 128}, [](int, I e) { return xval(e); }, rt);
    const std::vector<i32> table{2, 0, 2, 1};
    const auto z = exe(Array::from_shards<i32>({table}, Shape{4}, rt), x)[0].to_host<float>(0);
    for (I step = 0; step < 4; ++step)
      for (I r = 0; r < 8; ++r)
        for (I c = 0; c < 128; ++c) {
          const I row = table[static_cast<std::size_t>(step)] * 8 + r;
          const float got = z[static_cast<std::size_t>((step * 8 + r) * 128 + c)];
          if (row < 20) ASSERT_EQ(got, xval(row * 128 + c) + 1.0f) << Rolled << " step " << step << " row " << r;
          else ASSERT_TRUE(std::isnan(got)) << Rolled << " step " << step << " row " << r << ": " << got;
        }
    const std::string msg =
        error_of([&] { exe(Array::from_shards<i32>({{0, 1, 3, 0}}, Shape{4}, rt), x)[0].block_until_ready(); });
    EXPECT_NE(msg.find("pipeline_kernel: operand 0 (input, shape [20,128], block [8, 128]): the block index at"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find(Rolled ? "a step of the rolled grid" : "step 2 of the grid"), std::string::npos) << msg;
    EXPECT_NE(msg.find("pallas_forms_test.cpp"), std::string::npos) << msg;
  }
}
TEST(PartialBlock, ATracedBlockIndexMayPickThePartialLastBlock) {
  check_traced_partial_blocks<false>();
  check_traced_partial_blocks<true>();
}

// An output's partial last block at a traced index stays refused: its
// write-back would have no size known while tracing.
TEST(PartialBlock, AnOutputsTracedPartialBlockIsATraceError) {
  const auto k = pipeline_kernel<SmemRef<const i32, 3>, HbmRef<const float, 24, 128>, HbmRef<float, 20, 128>>(
      grid(3), [](SmemRef<const i32, 3>, VmemRef<const float, 8, 128> xb, VmemRef<float, 8, 128> zb) { zb.store(xb.load()); },
      block<8, 128>([](I i, auto&&...) { return std::tuple{i, I{0}}; }),
      block<8, 128>([](I i, const auto& table) { return std::tuple{table.at(i).load(), I{0}}; }));
  const std::string msg = error_of([&] { (void)kernel(k).compile(Mesh{{"x", 1}}); });
  EXPECT_NE(msg.find("the output's block index there is traced, so the write-back of its partial last block cannot be "
                     "sized while tracing"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("pallas_forms_test.cpp"), std::string::npos) << msg;
}

// Pallas' pl.BoundedSlice(16): step i's slice of rows [start, start + size)
// is read from a table. The body's 16-row block starts at `start`; past the
// array its rows are poison (NaN). A size above the bound, or a start past
// the array, stops the run naming the operand and the step.
template <bool Rolled>
void check_bounded_slices() {
  const auto k = pipeline_kernel<SmemRef<const i32, 3>, SmemRef<const i32, 3>, HbmRef<const float, 40, 128>,
                                 HbmRef<float, 48, 128>>(
      grid_of<Rolled>(3),
      [](SmemRef<const i32, 3>, SmemRef<const i32, 3>, VmemRef<const float, 16, 128> w, VmemRef<float, 16, 128> zb) {
        zb.store(w.load());
      },
      block<bounded_slice(16), 128>([](auto i, const auto& start, const auto& size) {
        return std::tuple{bounded(start.at(i).load(), size.at(i).load()), I{0}};
      }),
      block<16, 128>([](auto i, auto&&...) { return std::tuple{i, I{0}}; }));
  for (const RuntimeOptions& o : kModes) {
    Runtime rt(o);
    const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
    const Array x = Array::generate<float>(1, Shape{40, 128}, [](int, I e) { return xval(e); }, rt);
    const std::vector<i32> starts{5, 30, 0}, sizes{16, 10, 3};
    const auto z = exe(Array::from_shards<i32>({starts}, Shape{3}, rt), Array::from_shards<i32>({sizes}, Shape{3}, rt),
                       x)[0]
                       .to_host<float>(0);
    for (I step = 0; step < 3; ++step)
      for (I r = 0; r < 16; ++r) {
        const I row = starts[static_cast<std::size_t>(step)] + r;
        const float got = z[static_cast<std::size_t>((step * 16 + r) * 128 + 7)];
        if (row < 40) ASSERT_EQ(got, xval(row * 128 + 7)) << Rolled << " step " << step << " row " << r;
        else ASSERT_TRUE(std::isnan(got)) << Rolled << " step " << step << " row " << r << ": " << got;
      }
    const auto run_with = [&](std::vector<i32> st, std::vector<i32> sz) {
      return error_of([&] {
        exe(Array::from_shards<i32>({st}, Shape{3}, rt), Array::from_shards<i32>({sz}, Shape{3}, rt), x)[0]
            .block_until_ready();
      });
    };
    const std::string big = run_with({0, 0, 0}, {16, 17, 1});
    EXPECT_NE(big.find(Rolled ? "pipeline_kernel: operand 0 (input) at a step of the rolled grid: the index map's "
                                "bounded slice size along dimension 0 lies outside [0, 16]"
                              : "pipeline_kernel: operand 0 (input) at grid step (1): the index map's bounded slice "
                                "size along dimension 0 lies outside [0, 16]"),
              std::string::npos)
        << big;
    const std::string past = run_with({0, 40, 0}, {1, 1, 1});
    EXPECT_NE(past.find("the element start at"), std::string::npos) << past;
    EXPECT_NE(past.find("pallas_forms_test.cpp"), std::string::npos) << past;
  }
}
TEST(BoundedSlice, SlicesReadFromDataUnrolledAndRolled) {
  check_bounded_slices<false>();
  check_bounded_slices<true>();
}

TEST(BoundedSlice, AStartPastTheArrayOrAPlainIndexIsATraceError) {
  const auto traced = [](auto map) {
    const auto k = pipeline_kernel<HbmRef<const float, 40, 128>, HbmRef<float, 32, 128>>(
        grid(2), [](VmemRef<const float, 16, 128> w, VmemRef<float, 16, 128> zb) { zb.store(w.load()); },
        block<bounded_slice(16), 128>(map), block<16, 128>([](I i) { return std::array<I, 2>{i, 0}; }));
    return error_of([&] { (void)kernel(k).compile(Mesh{{"x", 1}}); });
  };
  const std::string past = traced([](I i) { return std::tuple{bounded(i * 45, I{3}), I{0}}; });
  EXPECT_NE(past.find("the index map's bounded slice along dimension 0 starts at 45 at grid step (1), outside the "
                      "array's 40 elements there"),
            std::string::npos)
      << past;
  const std::string big = traced([](I i) { return std::tuple{bounded(i, I{17}), I{0}}; });
  EXPECT_NE(big.find("pipeline_kernel: operand 0 (input) at grid step (0): the index map's bounded slice along "
                     "dimension 0 has size 17, outside [0, 16]"),
            std::string::npos)
      << big;
  const std::string plain = traced([](I i) { return std::array<I, 2>{i, 0}; });
  EXPECT_NE(plain.find("dimension 0 is a bounded_slice(16): its index map returns bounded(start, size) there"),
            std::string::npos)
      << plain;
  EXPECT_NE(plain.find("pallas_forms_test.cpp"), std::string::npos) << plain;
}
}  // namespace
