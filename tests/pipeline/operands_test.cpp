// emit_pipeline over every element type, blocks that do not divide the
// shape, traced block indices (axis_index), pipelines inside run_scoped and
// fori_loop, the top-level pipeline_kernel, checked mode (race detector),
// and the trace-time errors.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <refx/ir/interpret.hpp>
#include <refx/pipeline.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;

const auto same = [](std::int64_t i) { return i; };
using I = std::int64_t;

template <class T>
class EveryType : public ::testing::Test {};
using Types = ::testing::Types<bf16, f16, std::int8_t, std::uint8_t, std::uint32_t, std::int32_t, std::int64_t, float, double>;
TYPED_TEST_SUITE(EveryType, Types);

// z = x + x block by block, a 2-D grid, against the host: small values, so
// every type holds the sum exactly.
TYPED_TEST(EveryType, DoublesEachBlock) {
  using T = TypeParam;
  const auto k = [](HbmRef<const T, 8, 64> x, HbmRef<T, 8, 64> z) {
    const auto map = [](I i, I j) { return std::array{i, j}; };
    emit_pipeline(grid(2, 4), [](VmemRef<const T, 4, 16> xb, VmemRef<T, 4, 16> zb) {
      zb.store(xb.load() + xb.load());
    })(in(x, block<4, 16>(map)), out(z, block<4, 16>(map)));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 2}});
  const auto value = [](int d, std::int64_t i) { return T(static_cast<float>((i * 7 + d) % 50)); };
  const auto z = exe(Array::generate<T>(2, Shape{8, 64}, value))[0];
  for (int d = 0; d < 2; ++d) {
    const std::vector<T> got = z.template to_host<T>(d);
    for (std::int64_t i = 0; i < 8 * 64; ++i)
      EXPECT_EQ(static_cast<double>(got[static_cast<std::size_t>(i)]), 2.0 * static_cast<double>(value(d, i))) << i;
  }
}

// Checklist E.3: (7,5) with block (2,3), grid (4,2): the last row and column
// blocks are partial; copied in and written back with their true extent.
TEST(Partial, BlocksThatDoNotDivideTheShape) {
  const auto k = [](HbmRef<const float, 7, 5> x, HbmRef<float, 7, 5> z) {
    const auto map = [](I i, I j) { return std::array{i, j}; };
    emit_pipeline(grid(4, 2), [](VmemRef<const float, 2, 3> xb, VmemRef<float, 2, 3> zb) {
      zb.store(xb.load() + static_cast<float>(10 * program_id(0) + program_id(1)));
    })(in(x, block<2, 3>(map)), out(z, block<2, 3>(map)));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  const auto z = exe(Array::generate<float>(1, Shape{7, 5}, [](int, std::int64_t i) { return float(1000 * i); }))[0]
                     .to_host<float>(0);
  ASSERT_EQ(z.size(), 35u);
  for (std::int64_t r = 0; r < 7; ++r)
    for (std::int64_t c = 0; c < 5; ++c)
      EXPECT_EQ(z[static_cast<std::size_t>(r * 5 + c)], float(1000 * (r * 5 + c) + 10 * (r / 2) + c / 3)) << r << "," << c;
}

// Checklist E.4, as issue 52 settled it: a block larger than the array
// along a dimension pads every block there past the array's end (a column
// max over the padding reads what the slot held). With static extents it does
// not compile (compile_fail/pipeline_block_larger_than_array.cpp); with
// extents known only while tracing it is a TraceError naming the in(...) /
// out(...) line. A block of exactly the array's extent is accepted.
TEST(Partial, BlockLargerThanTheArray) {
  int line = 0;
  const auto k = [&](Ref<const float, extents<dyn, 128>, Hbm> x, HbmRef<float, 1, 128> m) {
    const auto map = [](I) { return std::array{I{0}, I{0}}; };
    line = __LINE__ + 1;
    const auto rows = in(x, block<128, 128>(map));
    emit_pipeline(grid(1), [](VmemRef<const float, 128, 128> xb, VmemRef<float, 1, 128> mb) {
      mb.store(reduce_max<0>(xb.load(), keepdims));
    })(rows, out(m, block<1, 128>(map)));
  };
  std::string msg = "no error";
  try {
    (void)trace(k, {Shape{96, 128}, Shape{1, 128}});
  } catch (const TraceError& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("refx: emit_pipeline: operand 0 (input, shape [96,128], block [128, 128]): the block is larger "
                     "than the array along dimension 0 (128 > 96), so every block there would be padded past the "
                     "array's end (at pipeline/operands_test.cpp:" +
                     std::to_string(line) + "); give a block extent at most 96 there"),
            std::string::npos)
      << msg;
  // The same block over 128 rows: accepted.
  EXPECT_NO_THROW((void)trace(k, {Shape{128, 128}, Shape{1, 128}}));
}

// Issue 52: the rows of a partial last input block past the array's end read
// NaN (floating point) or the integer minimum, in the interpreter and in the
// runtime with and without checked mode, also when the slot held an earlier
// block (one buffer: without the fill, the stale x[2], x[3] came through).
template <class T>
std::vector<T> padded_block_read(int mode, int buffers) {
  const auto k = [buffers](HbmRef<const T, 6> x, HbmRef<T, 8> z) {
    emit_pipeline(grid(2), [](VmemRef<const T, 4> xb, VmemRef<T, 4> zb) { zb.store(xb.load()); })(
        in(x, block<4>(same).buffered(buffers)), out(z, block<4>(same)));
  };
  const std::vector<T> xs{1, 2, 3, 4, 5, 6};
  if (mode == 0) {
    Buffer bx = Buffer::from<T>(Shape{6}, xs), bz(dtype_v<T>, Shape{8});
    bz.fill_zero();
    interpret(trace(k), bx, bz);
    return bz.to_vector<T>();
  }
  RuntimeOptions options;
  options.detect_races = mode == 2;
  Runtime rt(options);
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}}, {}, rt);
  return exe(Array::from_shards<T>({xs}, Shape{6}))[0].template to_host<T>(0);
}

TEST(Partial, PaddedReadIsPoisonedInEveryMode) {
  for (int mode = 0; mode < 3; ++mode) {
    for (int buffers : {1, 2}) {
      const std::vector<float> f = padded_block_read<float>(mode, buffers);
      ASSERT_EQ(f.size(), 8u);
      for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(f[i], float(i + 1)) << mode << " " << buffers;
      EXPECT_TRUE(std::isnan(f[6]) && std::isnan(f[7])) << mode << " " << buffers << ": " << f[6] << " " << f[7];
      const std::vector<std::int32_t> n = padded_block_read<std::int32_t>(mode, buffers);
      EXPECT_EQ(n[6], std::numeric_limits<std::int32_t>::min()) << mode << " " << buffers;
      EXPECT_EQ(n[7], std::numeric_limits<std::int32_t>::min()) << mode << " " << buffers;
    }
  }
}

// A block index from axis_index: device d reads row block (d + i) % N.
constexpr int N = 4;
TEST(Traced, BlockIndexFromAxisIndex) {
  const auto k = [](HbmRef<const float, N, 16> x, HbmRef<float, N, 16> z) {
    const auto me = axis_index("x");
    emit_pipeline(grid(N), [](VmemRef<const float, 1, 16> xb, VmemRef<float, 1, 16> zb) { zb.store(xb.load() * 3.0f); })(
        in(x, block<1, 16>([me](I i) { return std::make_tuple((me + static_cast<std::int32_t>(i)) % N, 0); })),
        out(z, block<1, 16>([](I i) { return std::array{i, I{0}}; })));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", N}});
  const auto z = exe(Array::generate<float>(N, Shape{N, 16}, [](int d, std::int64_t i) { return float(d * 1000 + i); }))[0];
  for (int d = 0; d < N; ++d) {
    const auto v = z.to_host<float>(d);
    for (std::int64_t i = 0; i < N; ++i)
      for (std::int64_t c = 0; c < 16; ++c)
        EXPECT_EQ(v[static_cast<std::size_t>(i * 16 + c)], 3.0f * float(d * 1000 + ((d + i) % N) * 16 + c)) << d << i;
  }
}

// Inside run_scoped (a Vmem scratch besides the pipeline's) and inside a
// traced fori_loop whose index picks the half of x the pipeline reads.
TEST(Nesting, InsideRunScopedAndForiLoop) {
  const auto k = [](HbmRef<const float, 2, 64> x, HbmRef<float, 2, 64> z) {
    run_scoped([&](VmemRef<float, 16> bias) {
      bias.store(5.0f);
      fori_loop(0, 2, [&](Scalar<std::int32_t> h) {
        emit_pipeline(grid(4), [&](VmemRef<const float, 1, 16> xb, VmemRef<float, 1, 16> zb) {
          zb.store(xb.load() + reshape<1, 16>(bias.load()));
        })(in(x, block<1, 16>([h](I i) { return std::make_tuple(h, i); })),
           out(z, block<1, 16>([h](I i) { return std::make_tuple(h, i); })));
      });
    });
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 1}});
  const auto z = exe(Array::generate<float>(1, Shape{2, 64}, [](int, std::int64_t i) { return float(i); }))[0].to_host<float>(0);
  for (std::int64_t i = 0; i < 128; ++i) EXPECT_EQ(z[static_cast<std::size_t>(i)], float(i + 5)) << i;
}

// The top-level form: a kernel whose body sees blocks (pallas_call).
TEST(TopLevel, PipelineKernel) {
  const auto k = pipeline_kernel<HbmRef<const std::int32_t, 12, 8>, HbmRef<const std::int32_t, 12, 8>, HbmRef<std::int32_t, 12, 8>>(
      grid(3, 2),
      [](VmemRef<const std::int32_t, 4, 4> a, VmemRef<const std::int32_t, 4, 4> b, VmemRef<std::int32_t, 4, 4> c) {
        c.store(a.load() * b.load());
      },
      block<4, 4>([](I i, I j) { return std::array{i, j}; }), block<4, 4>([](I i, I j) { return std::array{i, j}; }),
      block<4, 4>([](I i, I j) { return std::array{i, j}; }));
  const Executable exe = kernel(k).compile(Mesh{{"x", 2}});
  const auto f = [](int d, std::int64_t i) { return std::int32_t(i + d); };
  const auto c = exe(Array::generate<std::int32_t>(2, Shape{12, 8}, f), Array::generate<std::int32_t>(2, Shape{12, 8}, f))[0];
  for (int d = 0; d < 2; ++d) {
    const auto v = c.to_host<std::int32_t>(d);
    for (std::int64_t i = 0; i < 96; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)], f(d, i) * f(d, i));
  }
}

// Checked mode: the race detector follows every block copy; a generated
// pipeline (depth 3 in, 2 out, a revisited output) reports no race.
TEST(Checked, NoRaceReported) {
  Runtime checked(RuntimeOptions{.detect_races = true});
  const auto k = [](HbmRef<const float, 8, 32> x, HbmRef<float, 4, 32> z) {
    emit_pipeline(grid(4, 2), [](VmemRef<const float, 1, 32> xb, VmemRef<float, 1, 32> zb) {
      if (program_id(1) == 0) zb.store(xb.load());
      else zb += xb.load();
    })(in(x, block<1, 32>([](I i, I j) { return std::array{2 * i + j, I{0}}; }).buffered(3)),
       out(z, block<1, 32>([](I i, I) { return std::array{i, I{0}}; })));
  };
  const Executable exe = kernel(k).compile(Mesh{{"x", 2}}, {}, checked);
  const auto z = exe(Array::generate<float>(2, Shape{8, 32}, [](int d, std::int64_t i) { return float(i + d); }, checked))[0];
  for (int d = 0; d < 2; ++d) {
    const auto v = z.to_host<float>(d);
    for (std::int64_t r = 0; r < 4; ++r)
      for (std::int64_t c = 0; c < 32; ++c)
        EXPECT_EQ(v[static_cast<std::size_t>(r * 32 + c)], float((2 * r) * 32 + c + d + (2 * r + 1) * 32 + c + d));
  }
}

// The tutorial's "what can go wrong": a reduction along the *outer* grid
// axis. With two column blocks and two slots each block happens to get its
// own slot back and the sums are right; with three they are not (a revisited
// output block gets another block's window; outputs are never re-read).
TEST(Revisit, ReductionOnTheOuterAxisNeedsConsecutiveVisits) {
  const auto run = []<I Cols>(std::integral_constant<I, Cols>) {
    const auto k = [](HbmRef<const float, 8, Cols> x, HbmRef<float, 1, Cols> s) {
      emit_pipeline(grid(8, Cols / 4), [](VmemRef<const float, 1, 4> xb, VmemRef<float, 1, 4> sb) {
        if (program_id(0) == 0) sb.store(0.0f);
        sb += xb.load();
      })(in(x, block<1, 4>([](I r, I j) { return std::array{r, j}; })),
         out(s, block<1, 4>([](I, I j) { return std::array{I{0}, j}; })));
    };
    const auto value = [](int, std::int64_t i) { return float(i); };
    const auto got = kernel(k).compile(Mesh{{"x", 1}})(Array::generate<float>(1, Shape{8, Cols}, value))[0].template to_host<float>(0);
    bool right = true;
    for (I c = 0; c < Cols; ++c) {
      float want = 0;
      for (I r = 0; r < 8; ++r) want += value(0, r * Cols + c);
      right = right && got[static_cast<std::size_t>(c)] == want;
    }
    return right;
  };
  EXPECT_TRUE(run(std::integral_constant<I, 8>{}));    // two column blocks: each gets its own slot back
  EXPECT_FALSE(run(std::integral_constant<I, 12>{}));  // three: a revisit gets another block's window
}

template <class F>
std::string trace_error(F&& f) {
  try {
    const Mesh mesh{{"x", 4}};
    (void)trace(std::forward<F>(f), TraceOptions{{}, &mesh, -1});
  } catch (const TraceError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Errors, BlockIndexOutOfRange) {
  const std::string msg = trace_error([](HbmRef<const float, 64> x, HbmRef<float, 64> z) {
    emit_pipeline(grid(5), [](VmemRef<const float, 16> a, VmemRef<float, 16> b) { b.store(a.load()); })(
        in(x, block<16>(same)), out(z, block<16>([](I) { return 0; })));
  });
  EXPECT_NE(msg.find("refx: emit_pipeline: operand 0 (input, shape [64], block [16]): the index map gives block index 4 "
                     "along dimension 0 at grid step (4)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("operands_test.cpp"), std::string::npos) << msg;
}

// An input's partial block at a traced index is fetched
// (pallas_forms_test.cpp, PartialBlock); an output's is refused.
TEST(Errors, TracedIndexWithPartialOutputBlock) {
  const std::string msg = trace_error([](HbmRef<const float, 64> x, HbmRef<float, 60> z) {
    const auto me = axis_index("x");
    emit_pipeline(grid(4), [](VmemRef<const float, 16> a, VmemRef<float, 16> b) { b.store(a.load()); })(
        in(x, block<16>(same)), out(z, block<16>([me](I) { return me; })));
  });
  EXPECT_NE(msg.find("refx: emit_pipeline: operand 1 (output, shape [60], block [16]): the block does not divide "
                     "dimension 0 and the output's block index there is traced"),
            std::string::npos)
      << msg;
}

TEST(Errors, ProgramIdOutsideAPipeline) {
  const std::string msg = trace_error([](HbmRef<float, 4>) { (void)program_id(0); });
  EXPECT_NE(msg.find("refx: program_id(0) outside a pipeline body"), std::string::npos) << msg;
}

}  // namespace
