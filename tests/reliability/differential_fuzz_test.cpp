// Differential fuzzing of the threaded runtime against the reference: random
// valid SPMD programs (spmd_programs.hpp: random permutations and rings,
// random sizes and regions, remote and local copies with balanced
// semaphores, compute, fori_loops, `when`s, barriers, in-kernel all-reduces,
// ordered and unordered host effects) run on the threaded runtime under varied interleavings
// (worker counts, lazy copies, chunked copies, the race detector, a fresh
// shuffle seed per run) and must equal the sequential MeshInterpreter on the
// traced graph, bit for bit, host effects included.
//
// REFX_FUZZ_PROGRAMS (default 2000; 800 in sanitizer builds) programs from
// seed REFX_FUZZ_SEED (default 1), split over 8 tests so that ctest runs them
// in parallel. A longer run (docs/reliability.md):
//   REFX_FUZZ_PROGRAMS=100000 REFX_FUZZ_SEED=5000 build/default/tests/bin/reliability_differential_fuzz_test

#include <gtest/gtest.h>

#include "reliability/spmd_programs.hpp"
#include <refx/runtime/runtime.hpp>

namespace {

using namespace refx;
using namespace refx::testing;
using namespace refx::testing::spmd;

constexpr int kShards = 8;
constexpr int kRunsPerProgram = 3;

struct Coverage {
  int remote = 0, remote_combining = 0, loops = 0, whens = 0, barriers = 0, callbacks = 0, prints = 0, meshes_2d = 0,
      ints = 0, chunky = 0, all_reduces = 0;
};

void count(const Built& b, bool is_int, Coverage& c) {
  const Graph& g = b.traced;
  bool remote = false, combining = false;
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim == &prim::dma_start && prim::dma_start_attrs(g, op).remote) {
      remote = true;
      combining = combining || prim::dma_start_attrs(g, op).reduce != CopyReduce::none;
    }
  }
  c.remote += remote;
  c.remote_combining += combining;
  c.loops += count_ops(g, "fori_loop") > 0;
  c.whens += count_ops(g, "when") > 0;
  c.barriers += count_ops(g, "barrier_semaphore") > 0;
  c.callbacks += count_ops(g, "io_callback") > 0;
  c.prints += count_ops(g, "debug_print") > 0;
  c.meshes_2d += b.spec.axes.size() == 2;
  c.ints += is_int;
  c.chunky += b.spec.rows * b.spec.cols * 4 > 1024;
  c.all_reduces += b.all_reduces > 0;
}

template <class T>
void fuzz_one(std::uint32_t seed, std::mt19937_64& rng, Coverage& cov, int& runs) {
  const Spec spec = draw_spec(seed, false);
  const Built b = build<T>(spec);
  count(b, std::is_integral_v<T>, cov);
  const Outcome want = reference<T>(b);
  if (env_count("REFX_FUZZ_VERBOSE", 0) != 0) {
    fmt::print("{}: {} ops, {} host effects\n{}\n", spec.describe(), b.traced.num_ops(), want.log.size(), to_text(b.traced));
    for (std::size_t k = 0; k < want.outputs.size(); ++k)
      fmt::print("output {} device 0: {}\n", k, fmt::join(want.outputs[k][0].template span<const T>(), " "));
  }
  // The program must not depend on timing: a shuffled schedule with copies
  // landing only when waited for gives the same results (else the generator
  // made a racy program, which is a bug of this test, not of refx).
  ASSERT_TRUE(same_outputs<T>(reference<T>(b, rng() | 1, true), want))
      << spec.describe() << ": the generated program races (a generator bug)\n" << to_text(b.traced);
  std::vector<std::size_t> configs(runtime_configs().size());
  for (std::size_t k = 0; k < configs.size(); ++k) configs[k] = k;
  std::shuffle(configs.begin(), configs.end(), rng);
  for (int r = 0; r < kRunsPerProgram; ++r) {
    const std::size_t c = configs[static_cast<std::size_t>(r)];
    Runtime& rt = runtime(c);
    const std::uint64_t shuffle = rng() % 8 == 0 ? 0 : (rng() | 1);
    rt.pool().set_shuffle(shuffle);
    Outcome got;
    try {
      got = collect(dispatch<T>(b, rt), rt);
    } catch (const std::exception& e) {
      FAIL() << spec.describe() << " on '" << runtime_configs()[c].name << "' (shuffle seed " << shuffle
             << ") failed: " << e.what() << "\nreproduce: REFX_FUZZ_SEED=" << seed
             << " REFX_FUZZ_PROGRAMS=1 reliability_differential_fuzz_test\n"
             << to_text(b.traced);
    }
    ++runs;
    ASSERT_TRUE(same_outputs<T>(got, want))
        << spec.describe() << " on '" << runtime_configs()[c].name << "' (shuffle seed " << shuffle
        << ")\nreproduce: REFX_FUZZ_SEED=" << seed << " REFX_FUZZ_PROGRAMS=1 reliability_differential_fuzz_test\n"
        << to_text(b.traced);
  }
}

class DifferentialFuzz : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Shards, DifferentialFuzz, ::testing::Range(0, kShards));

TEST_P(DifferentialFuzz, RuntimeMatchesTheReferenceOnRandomPrograms) {
  const std::int64_t total = env_count("REFX_FUZZ_PROGRAMS", kSanitized ? 800 : 2000);
  const auto base = static_cast<std::uint32_t>(env_count("REFX_FUZZ_SEED", 1));
  const int shard = GetParam();
  const std::int64_t begin = total * shard / kShards, end = total * (shard + 1) / kShards;
  Heartbeat dog(std::chrono::seconds(kSanitized ? 100 : 60));  // below ctest's 120 s
  std::mt19937_64 rng(base * 1000003ULL + static_cast<std::uint64_t>(shard));
  Coverage cov;
  int runs = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const auto seed = static_cast<std::uint32_t>(base + i);
    dog.beat(fmt::format("differential fuzz, seed {}", seed));
    // One program in four computes in int32, one in eight in bf16 (rounded
    // per op), one in eight in u8 (wrapping); the rest in f32.
    if (seed % 4 == 0) fuzz_one<std::int32_t>(seed, rng, cov, runs);
    else if (seed % 8 == 2) fuzz_one<bf16>(seed, rng, cov, runs);
    else if (seed % 8 == 6) fuzz_one<std::uint8_t>(seed, rng, cov, runs);
    else fuzz_one<float>(seed, rng, cov, runs);
    if (HasFatalFailure()) return;
  }
  const auto n = static_cast<int>(end - begin);
  report(n, "programs fuzzed (differential: runtime vs reference)");
  report(runs, "runtime runs compared with the reference");
  std::printf("shard %d: %d programs: remote copies in %d (combining %d), loops %d, whens %d, barriers %d, "
              "all-reduces %d, callbacks %d, prints %d, 2-D meshes %d, integer %d, >1 KiB buffers %d\n",
              shard, n, cov.remote, cov.remote_combining, cov.loops, cov.whens, cov.barriers, cov.all_reduces,
              cov.callbacks, cov.prints, cov.meshes_2d, cov.ints, cov.chunky);
  // The generator must exercise what it claims to (checked on full shards).
  if (n >= 100) {
    EXPECT_GT(cov.remote, n / 2);
    EXPECT_GT(cov.remote_combining, n / 10);
    EXPECT_GT(cov.loops, n / 2);
    EXPECT_GT(cov.whens, n / 4);
    EXPECT_GT(cov.barriers, n / 10);
    EXPECT_GT(cov.all_reduces, n / 10);
    EXPECT_GT(cov.callbacks, n / 4);
    EXPECT_GT(cov.prints, n / 10);
    EXPECT_GT(cov.meshes_2d, n / 10);
  }
}

}  // namespace

namespace {

using namespace refx;
using namespace refx::testing;

// Pinned from the fuzzer (seed 378): a combining copy that the runtime ran
// as contiguous chunks kept the destination where the source held NaN
// (max), and added integers with signed overflow (sum); the interpreter's
// copies let NaN win and wrap. Both paths must agree.
template <class T>
Executable combining_copy(CopyReduce op, Runtime& rt) {
  constexpr std::int64_t n = 1024;
  return kernel([op](VmemRef<const T, n> x, VmemRef<const T, n> init, VmemRef<T, n> y) {
           y.store(init.load());
           run_scoped([&](DmaSemaphore s) {
             const auto c = make_async_copy(x, y, s);
             c.start(Accumulate{op});
             c.wait();
           });
         })
      .compile(Mesh{{"x", 2}}, {}, rt);
}

TEST(CombiningCopies, ChunkedAndWholeCopiesCombineLikeTheInterpreter) {
  Watchdog dog(kTestLimit, "combining copies");
  constexpr std::int64_t n = 1024;
  RuntimeOptions chunked;
  chunked.workers = 2;
  chunked.inline_copy_bytes = 0;
  chunked.copy_chunk_bytes = 64;
  Runtime rt_chunked(chunked), rt_inline(RuntimeOptions{.workers = 2});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (Runtime* rt : {&rt_chunked, &rt_inline}) {
    const Array x = Array::generate<float>(2, Shape{n}, [&](int, std::int64_t i) { return i % 3 == 0 ? nan : float(i % 7) - 3; }, *rt);
    const Array init = Array::generate<float>(2, Shape{n}, [&](int, std::int64_t i) { return i % 5 == 0 ? nan : 1.0f; }, *rt);
    const Array y = combining_copy<float>(CopyReduce::max, *rt)(x, init)[0];
    for (int d = 0; d < 2; ++d) {
      const auto got = y.to_host<float>(d);
      for (std::int64_t i = 0; i < n; ++i) {
        const bool want_nan = i % 3 == 0 || i % 5 == 0;
        const float want = std::max(1.0f, float(i % 7) - 3);
        ASSERT_TRUE(want_nan ? std::isnan(got[static_cast<std::size_t>(i)]) : got[static_cast<std::size_t>(i)] == want)
            << "max, element " << i << ": got " << got[static_cast<std::size_t>(i)];
      }
    }
    const std::int32_t big = std::numeric_limits<std::int32_t>::max();
    const Array xi = Array::generate<std::int32_t>(2, Shape{n}, [&](int, std::int64_t i) { return i % 2 ? big : -big; }, *rt);
    const Array ii = Array::generate<std::int32_t>(2, Shape{n}, [&](int, std::int64_t i) { return i % 2 ? 5 : -5; }, *rt);
    const Array yi = combining_copy<std::int32_t>(CopyReduce::sum, *rt)(xi, ii)[0];
    for (int d = 0; d < 2; ++d) {
      const auto got = yi.to_host<std::int32_t>(d);
      for (std::int64_t i = 0; i < n; ++i) {  // wraps around, two's complement
        const auto want = static_cast<std::int32_t>(static_cast<std::uint32_t>(i % 2 ? big : -big) +
                                                    static_cast<std::uint32_t>(i % 2 ? 5 : -5));
        ASSERT_EQ(got[static_cast<std::size_t>(i)], want) << "sum, element " << i;
      }
    }
  }
}

}  // namespace
