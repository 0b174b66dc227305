// Reads in place (passes/read_in_place.hpp): a load whose region nothing
// changes before the value's last use hands out the Ref's own memory (a
// borrowed Buffer) instead of a copy; a write, accumulation or copy into the
// region in between, a value that outlives its block and a strided region
// keep the copy, and the value then holds the data of the load's moment.
// Results are bit-identical with and without the pass (dot, reductions,
// fused elementwise loops, the threaded runtime with its race detector and
// lazy copies).
//
// What a consumer sees is observed through a user primitive
// (`test_record_address`) that records the address of its input's data and
// passes the input through.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "support/graph_testing.hpp"
#include "support/runtime_testing.hpp"
#include <refx/extend.hpp>
#include <refx/runtime/runtime.hpp>

using namespace refx;
using namespace refx::testing;
using namespace refx::graph_testing;

namespace {

std::vector<const std::byte*> g_addresses;  // one per run of test_record_address

void record_abstract(AbstractContext& c) { c.add_output(c.input(0)); }
ExecStatus record_impl(ExecContext& ctx, const Op& op) {
  const Buffer& in = ctx.in(op, 0);
  g_addresses.push_back(in.data());
  Buffer& out = ctx.out(op, 0);
  std::memcpy(out.data(), in.data(), in.bytes());
  return ExecStatus::done;
}
const Primitive& record_p =
    define_primitive(Primitive{.name = "test_record_address", .abstract_eval = record_abstract, .impl = record_impl});

/// The value itself, after recording where its data lies.
template <class T, class E>
Value<T, E> recorded(const Value<T, E>& v) {
  return extend::bind<T, E>(record_p, v);
}

passes::Options copying() {
  passes::Options o;
  o.read_in_place = false;
  return o;
}

/// How many loads of `g`'s blocks read in place.
std::size_t loads_in_place(const Graph& g) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < g.num_blocks(); ++b)
    for (OpId o : g.block(static_cast<BlockId>(b)).ops) n += prim::load_reads_in_place(g, g.op(o)) ? 1 : 0;
  return n;
}

/// Traces `f` twice, compiles it with and without reads in place, runs both
/// on copies of `args` and checks every argument ends bit-identical. Returns
/// the in-place graph; `args` holds its results.
template <class F>
Graph in_place_matches_copying(F&& f, std::vector<Buffer>& args) {
  Compiled g = passes_match(std::forward<F>(f), args, copying(), passes::Options{});
  EXPECT_EQ(loads_in_place(g.reference), 0u);
  return std::move(g.changed);
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

constexpr std::int64_t kN = 8;
using Vec = VmemRef<float, kN>;

// ------------------------------------------------- writes between load and use

// The value must be the data of the load's moment whatever happens to the
// Ref afterwards: each kernel writes the loaded region between the load and
// the value's use. Checked with the pass on and off (off is what every load
// did before the pass existed), against the host.
TEST(ReadInPlace, AWriteBetweenLoadAndUseLeavesTheLoadedData) {
  const std::vector<float> x0 = random_floats(kN, 1);
  const auto check = [&](auto kernel, const char* what) {
    for (const passes::Options& o : {passes::Options{}, copying()}) {
      Graph g = trace(kernel);
      passes::run_pipeline(g, o);
      EXPECT_EQ(loads_in_place(g), 0u) << what << "\n" << to_text(g);
      std::vector<Buffer> args;
      args.push_back(make_buffer<float>(Shape{kN}, x0));
      args.push_back(make_buffer<float>(Shape{kN}, std::vector<float>(kN, 5.0f)));
      args.emplace_back(DType::f32, Shape{kN});
      g_addresses.clear();
      const std::vector<Buffer> out = run_on_copies(g, args);
      EXPECT_EQ(contents<float>(out[2]), x0) << what << (o.read_in_place ? " (in place)" : " (copying)");
      ASSERT_EQ(g_addresses.size(), 1u) << what;
      const auto* x = out[0].data();
      EXPECT_TRUE(g_addresses[0] < x || g_addresses[0] >= x + out[0].bytes()) << what << ": the value is x's memory";
    }
  };
  check(
      [](Vec x, Vec, Vec y) {
        auto v = x.load();
        x.store(0.0f);
        y.store(recorded(v));
      },
      "a store");
  check(
      [](Vec x, Vec, Vec y) {
        auto v = x.load();
        x.at(ds(2, 3)) += 1.0f;
        y.store(recorded(v));
      },
      "an accumulation into part of it");
  check(
      [](Vec x, Vec z, Vec y) {
        auto v = x.load();
        sync_copy(z, x);
        y.store(recorded(v));
      },
      "a copy into it");
  check(
      [](Vec x, Vec z, Vec y) {
        auto v = x.load();
        run_scoped([&](DmaSemaphore sem) {
          auto c = make_async_copy(z, x, sem);
          c.start();
          c.wait();
        });
        y.store(recorded(v));
      },
      "a copy started and waited in a scope");
  check(
      [](Vec x, Vec, Vec y) {
        auto v = x.load();
        fori_loop(0, 2, [&](Scalar<std::int32_t> i) { x.at(i).store(-1.0f); });
        y.store(recorded(v));
      },
      "a loop that writes it");
  check(
      [](Vec x, Vec, Vec y) {
        auto v = x.load();
        fori_loop(0, 1, [&](Scalar<std::int32_t>) {
          x.at(ds(1, 2)).store(7.0f);
          y.store(recorded(v));
        });
      },
      "a loop body that writes it before the use");
}

// A store of a loaded region into a shifted window of the same Ref reads all
// of it before writing (the copy is needed: the windows overlap).
TEST(ReadInPlace, AShiftedStoreIntoTheSameRefCopies) {
  const std::vector<float> x0 = random_floats(kN, 2);
  std::vector<float> want = x0;
  for (std::int64_t i = kN - 1; i >= 1; --i) want[static_cast<std::size_t>(i)] = x0[static_cast<std::size_t>(i - 1)];
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{kN}, x0));
  Graph g = in_place_matches_copying([](Vec x) { x.at(ds(1, kN - 1)).store(x.at(ds(0, kN - 1)).load()); }, args);
  EXPECT_EQ(loads_in_place(g), 0u) << to_text(g);
  EXPECT_EQ(contents<float>(args[0]), want);
}

// A value that is a loop's carry outlives the iteration that loaded it.
TEST(ReadInPlace, ALoadedLoopCarryCopies) {
  const std::vector<float> x0 = random_floats(kN, 3);
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{kN}, x0));
  args.emplace_back(DType::f32, Shape{kN});
  Graph g = in_place_matches_copying(
      [](Vec x, Vec y) {
        auto last = fori_loop(
            0, 3,
            [&](Scalar<std::int32_t>, Value<float, extents<kN>> c) {
              auto v = x.load();
              x.store(v + c);
              return v;
            },
            x.load());
        y.store(last);
      },
      args);
  EXPECT_EQ(loads_in_place(g), 0u) << to_text(g);
  // x: x0 -> 2 x0 -> 3 x0 -> 5 x0; the last carry is the third load, 3 x0.
  const auto x = contents<float>(args[0]), y = contents<float>(args[1]);
  for (std::size_t i = 0; i < x0.size(); ++i) {
    EXPECT_EQ(y[i], x0[i] + x0[i] + x0[i]) << i;
    EXPECT_EQ(x[i], x0[i] + x0[i] + x0[i] + (x0[i] + x0[i])) << i;
  }
}

// ------------------------------------------------------------ reads in place

// The consumer reads the Ref's memory itself: the address it sees is the
// region's place in the argument buffer.
TEST(ReadInPlace, AnUnchangedRegionIsReadWhereItLies) {
  constexpr std::int64_t r = 4, c = 16;
  const std::vector<float> x0 = random_floats(r * c, 4);
  Graph g = trace([](VmemRef<const float, r, c> x, VmemRef<float, r, c> whole, VmemRef<float, c> row,
                     VmemRef<float, 2, c> rows, VmemRef<float, 4> part) {
    whole.store(recorded(x.load()));
    row.store(recorded(x.at(2).load()));
    rows.store(recorded(x.at(ds(1, 2)).load()));
    part.at(ds(0, 4)).store(recorded(x.at(3, ds(5, 4)).load()));
  });
  passes::run_pipeline(g);
  EXPECT_EQ(loads_in_place(g), 4u) << to_text(g);
  Buffer bx = make_buffer<float>(Shape{r, c}, x0), b0(DType::f32, Shape{r, c}), b1(DType::f32, Shape{c}),
         b2(DType::f32, Shape{2, c}), b3(DType::f32, Shape{4});
  g_addresses.clear();
  interpret(g, bx, b0, b1, b2, b3);
  const float* base = bx.data<float>();
  ASSERT_EQ(g_addresses.size(), 4u);
  EXPECT_EQ(g_addresses[0], reinterpret_cast<const std::byte*>(base));
  EXPECT_EQ(g_addresses[1], reinterpret_cast<const std::byte*>(base + 2 * c));
  EXPECT_EQ(g_addresses[2], reinterpret_cast<const std::byte*>(base + c));
  EXPECT_EQ(g_addresses[3], reinterpret_cast<const std::byte*>(base + 3 * c + 5));
  EXPECT_EQ(contents<float>(b0), x0);
  EXPECT_EQ(contents<float>(b1), std::vector<float>(x0.begin() + 2 * c, x0.begin() + 3 * c));
  EXPECT_EQ(contents<float>(b2), std::vector<float>(x0.begin() + c, x0.begin() + 3 * c));
  EXPECT_EQ(contents<float>(b3), std::vector<float>(x0.begin() + 3 * c + 5, x0.begin() + 3 * c + 9));
}

// A write elsewhere in the Ref between the load and the use does not force a
// copy; a strided region (not one dense run) is marked too, but copied when
// the load runs.
TEST(ReadInPlace, DisjointWritesKeepTheReadInPlaceAndStridedRegionsCopy) {
  const std::vector<float> x0 = random_floats(kN, 5);
  Graph g = trace([](Vec x, VmemRef<float, 4> y, VmemRef<float, 4> z) {
    auto low = x.at(ds(0, 4)).load();
    auto even = x.at(ds(0, 4, 2)).load();
    x.at(7).store(0.0f);
    y.store(recorded(low));
    z.store(recorded(even));
  });
  passes::run_pipeline(g);
  EXPECT_EQ(loads_in_place(g), 2u) << to_text(g);
  Buffer bx = make_buffer<float>(Shape{kN}, x0), by(DType::f32, Shape{4}), bz(DType::f32, Shape{4});
  g_addresses.clear();
  interpret(g, bx, by, bz);
  ASSERT_EQ(g_addresses.size(), 2u);
  EXPECT_EQ(g_addresses[0], bx.data());
  EXPECT_TRUE(g_addresses[1] < bx.data() || g_addresses[1] >= bx.data() + bx.bytes());
  EXPECT_EQ(contents<float>(by), std::vector<float>(x0.begin(), x0.begin() + 4));
  EXPECT_EQ(contents<float>(bz), (std::vector<float>{x0[0], x0[2], x0[4], x0[6]}));
  EXPECT_EQ(contents<float>(bx)[7], 0.0f);
}

// A bitcast view reinterprets bytes: it is copied.
TEST(ReadInPlace, ABitcastViewCopies) {
  Graph g = trace([](VmemRef<const float, kN> x, VmemRef<std::uint32_t, kN> y) {
    y.store(recorded(x.bitcast<std::uint32_t>().load()));
  });
  passes::run_pipeline(g);
  EXPECT_EQ(loads_in_place(g), 0u) << to_text(g);
}

// dot, reductions and fused elementwise loops over loaded values give the
// same bits as with copies, and their loads read in place.
TEST(ReadInPlace, DotReductionsAndElementwiseMatchCopies) {
  constexpr std::int64_t m = 24, k = 40, n = 16;
  std::vector<Buffer> args;
  args.push_back(make_buffer<float>(Shape{m, k}, random_floats(m * k, 6)));
  args.push_back(make_buffer<float>(Shape{k, n}, random_floats(k * n, 7)));
  args.emplace_back(DType::f32, Shape{m, n});
  args.emplace_back(DType::f32, Shape{k});
  args.emplace_back(DType::f32, Shape{m});
  args.emplace_back(DType::f32, Shape{m, k});
  args.emplace_back(DType::f32, Shape{m, k});
  Graph g = in_place_matches_copying(
      [](VmemRef<const float, m, k> a, VmemRef<const float, k, n> b, VmemRef<float, m, n> c, VmemRef<float, k> s,
         VmemRef<float, m> mx, VmemRef<float, m, k> e1, VmemRef<float, m, k> e2) {
        c.store(dot(a.load(), b.load()));
        auto v = a.load();  // two uses: neither the reductions nor the fused loops absorb it
        s.store(reduce_sum<0>(v));
        mx.store(reduce_max<1>(v));
        e1.store(max(v * 2.0f + 1.0f, 0.0f));
        e2.store(exp(v) * 0.5f);
      },
      args);
  // Every load reads in place (the tracer may merge the two loads of a).
  EXPECT_GE(loads_in_place(g), 2u) << to_text(g);
  EXPECT_EQ(loads_in_place(g), live_ops(g, "load")) << to_text(g);
}

// Copies into Vmem, loads and dot, on the threaded runtime: with the race
// detector and lazy copies (which land a copy only when it is waited) the
// results are those of the copying loads and no race is reported.
TEST(ReadInPlace, RuntimeWithRaceDetectorAndLazyCopiesMatchesCopies) {
  Watchdog dog(kTestLimit, "read in place on the runtime");
  constexpr std::int64_t m = 16, k = 32, n = 8;
  const auto f = [](HbmRef<const float, m, k> a, HbmRef<const float, k, n> b, HbmRef<float, m, n> c) {
    run_scoped([&](VmemRef<float, m, k> va, VmemRef<float, k, n> vb, VmemRef<float, m, n> vc, DmaSemaphore sa,
                   DmaSemaphore sb) {
      auto ca = make_async_copy(a, va, sa);
      auto cb = make_async_copy(b, vb, sb);
      ca.start();
      cb.start();
      ca.wait();
      auto x = va.load();
      cb.wait();
      vc.store(dot(x, vb.load()));  // vb's wait between x's load and its use does not touch va
      sync_copy(vc, c);
    });
  };
  constexpr int devices = 2;
  for (const RuntimeOptions& options :
       {RuntimeOptions{.workers = 2}, RuntimeOptions{.workers = 2, .detect_races = true, .lazy_copies = true}}) {
    Runtime rt(options);
    auto in_place = kernel(f).compile(Mesh{{"x", devices}}, {}, rt);
    auto copy = kernel(f).passes(copying()).compile(Mesh{{"x", devices}}, {}, rt);
    EXPECT_EQ(loads_in_place(in_place.graph()), 2u) << to_text(in_place.graph());
    for (int call = 0; call < 3; ++call) {  // later calls reuse the device states
      const auto gen = [call](int d, std::int64_t i) { return static_cast<float>((i * 7 + d * 3 + call) % 11) - 5.0f; };
      Array a = Array::generate<float>(devices, Shape{m, k}, gen, rt);
      Array b = Array::generate<float>(devices, Shape{k, n}, gen, rt);
      auto want = copy(a, b);
      auto got = in_place(a, b);
      for (int d = 0; d < devices; ++d) EXPECT_EQ(got[0].to_host<float>(d), want[0].to_host<float>(d)) << d;
    }
  }
}

}  // namespace
