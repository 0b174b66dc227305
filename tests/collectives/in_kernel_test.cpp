// Collectives used from inside a user kernel on the user's own Refs,
// compiled with refx::kernel(...).compile(mesh): compute before and after
// the collective, collectives repeated in a traced loop, and collectives
// along one axis of a 2-D mesh.

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

// Static extents: see the report (arithmetic between a dynamic-extent Value
// and a scalar does not compile at the time of writing).
constexpr std::int64_t kRows = 37;  // not divisible by any ring size > 1 here
constexpr std::int64_t kTiny = 3;   // smaller than most ring sizes

struct Case {
  int n;
  Algorithm alg;
  Direction dir;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "N" + std::to_string(c.n) + "_" + name_of(c.alg) + "_" + name_of(c.dir);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int n : kRingSizes) {
    out.push_back({n, Algorithm::ring, Direction::unidirectional});
    out.push_back({n, Algorithm::ring, Direction::bidirectional});
    out.push_back({n, Algorithm::direct, Direction::unidirectional});
    out.push_back({n, Algorithm::automatic, Direction::bidirectional});
  }
  return out;
}

class InKernel : public ::testing::TestWithParam<Case> {};

// x <- 2 x on every device, all_reduce in place, then x <- x + 1.
TEST_P(InKernel, ScaleThenAllReduceThenAddOne) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  auto run = [&]<std::int64_t M>(std::integral_constant<std::int64_t, M>) {
    auto exe = kernel([c](VmemRef<float, M> x) {
                 x.store(x.load() * 2.0f);
                 collectives::all_reduce(x, "x", ReduceOp::sum, c.dir, c.alg);
                 x.store(x.load() + 1.0f);
               }).compile(Mesh{{"x", c.n}});
    auto host = inputs<float>(c.n, M);
    Array x = array_of(host, Shape{M});
    exe.call_in_place({x});
    for (auto& b : host)
      for (float& v : b) v *= 2.0f;
    Expected<float> want = reduce(host, ReduceOp::sum);
    for (std::size_t i = 0; i < want.value.size(); ++i) {
      want.value[i] += 1.0f;
      want.tolerance[i] += std::numeric_limits<float>::epsilon() * (std::fabs(want.value[i]) + 1.0);
    }
    for (int d = 0; d < c.n; ++d) ASSERT_TRUE(matches(x.to_host<float>(d), want, "M" + std::to_string(M) + " device " + std::to_string(d)));
    EXPECT_TRUE(bitwise_identical_across_devices(x));
  };
  run(std::integral_constant<std::int64_t, kRows>{});
  run(std::integral_constant<std::int64_t, kTiny>{});
}

// A collective inside a traced loop reuses its scoped semaphores every
// iteration while neighbours drift apart: x <- max over devices of x, plus
// this device's index + 1, six times.
TEST_P(InKernel, AllReduceInAForiLoop) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  constexpr int kSteps = 6;
  auto exe = kernel([c](VmemRef<std::int32_t, kRows> x) {
               fori_loop(0, kSteps, [&](Scalar<std::int32_t>) {
                 collectives::all_reduce(x, "x", ReduceOp::max, c.dir, c.alg);
                 x.store(x.load() + (axis_index("x") + 1));
               });
             }).compile(Mesh{{"x", c.n}});
  auto host = inputs<std::int32_t>(c.n, kRows);
  Array x = array_of(host, Shape{kRows});
  exe.call_in_place({x});
  for (int s = 0; s < kSteps; ++s) {
    const auto m = reduce(host, ReduceOp::max).value;
    for (int d = 0; d < c.n; ++d)
      for (std::int64_t i = 0; i < kRows; ++i) host[static_cast<std::size_t>(d)][static_cast<std::size_t>(i)] = m[static_cast<std::size_t>(i)] + d + 1;
  }
  for (int d = 0; d < c.n; ++d) ASSERT_TRUE(matches(x.to_host<std::int32_t>(d), host[static_cast<std::size_t>(d)], "device " + std::to_string(d)));
}

INSTANTIATE_TEST_SUITE_P(Sweep, InKernel, ::testing::ValuesIn(cases()), case_name);

// Several collectives in one kernel on different Refs: gather a block, reduce
// another, then all-to-all the gathered blocks back (each device gets its own
// row of every device's gathered copy, i.e. N copies of its own block).
TEST(InKernelComposition, GatherReduceAllToAllInOneKernel) {
  Watchdog dog(kTestLimit, "composition");
  constexpr std::int64_t b = 4;
  for (int n : {1, 2, 3, 5}) {
    auto exe = kernel([](Ref<const std::int64_t, extents<b>, Vmem> x, Ref<std::int64_t, extents<b>, Vmem> sum,
                         Ref<std::int64_t, extents<dyn, b>, Vmem> gathered, Ref<std::int64_t, extents<dyn, b>, Vmem> back) {
                 collectives::all_gather(x, gathered, "x");
                 sum.store(x.load());
                 collectives::all_reduce(sum, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::ring);
                 collectives::all_to_all(gathered, back, "x");
               }).compile(Mesh{{"x", n}}, {Shape{b}, Shape{b}, Shape{n, b}, Shape{n, b}});
    const auto host = inputs<std::int64_t>(n, b);
    const std::vector<Array> out = exe(array_of(host, Shape{b}));
    const auto want_sum = reduce(host, ReduceOp::sum);
    for (int d = 0; d < n; ++d) {
      ASSERT_TRUE(matches(out[0].to_host<std::int64_t>(d), want_sum, "sum, device " + std::to_string(d)));
      std::vector<std::int64_t> all, mine;
      for (const auto& h : host) all.insert(all.end(), h.begin(), h.end());
      for (int j = 0; j < n; ++j) mine.insert(mine.end(), host[static_cast<std::size_t>(d)].begin(), host[static_cast<std::size_t>(d)].end());
      ASSERT_TRUE(matches(out[1].to_host<std::int64_t>(d), all, "gathered, device " + std::to_string(d)));
      ASSERT_TRUE(matches(out[2].to_host<std::int64_t>(d), mine, "all_to_all, device " + std::to_string(d)));
    }
  }
}

// A 2-D mesh {x: 2, y: 3}: reducing along "y" sums each row of the mesh;
// reducing along "x" then "y" sums over every device.
TEST(InKernelMesh, AllReduceAlongOneAxisThenTheOther) {
  Watchdog dog(kTestLimit, "2-D mesh");
  const Mesh mesh{{"x", 2}, {"y", 3}};  // device id = x * 3 + y
  for (Algorithm alg : {Algorithm::ring, Algorithm::direct}) {
    auto along_y = kernel([alg](Ref<std::int32_t, extents<5>, Hbm> x) {
                     collectives::all_reduce(x, "y", ReduceOp::sum, Direction::unidirectional, alg);
                   }).compile(mesh);
    auto both = kernel([alg](Ref<std::int32_t, extents<5>, Hbm> x) {
                  collectives::all_reduce(x, "x", ReduceOp::sum, Direction::unidirectional, alg);
                  collectives::all_reduce(x, "y", ReduceOp::sum, Direction::bidirectional, alg);
                }).compile(mesh);
    const auto host = inputs<std::int32_t>(6, 5);
    Array a = array_of(host, Shape{5}), b = array_of(host, Shape{5});
    along_y.call_in_place({a});
    both.call_in_place({b});
    const auto total = reduce(host, ReduceOp::sum);
    for (int d = 0; d < 6; ++d) {
      const int row = d / 3;
      const std::vector<std::vector<std::int32_t>> group(host.begin() + row * 3, host.begin() + row * 3 + 3);
      ASSERT_TRUE(matches(a.to_host<std::int32_t>(d), reduce(group, ReduceOp::sum), std::string(name_of(alg)) + " along y, device " + std::to_string(d)));
      ASSERT_TRUE(matches(b.to_host<std::int32_t>(d), total, std::string(name_of(alg)) + " along x then y, device " + std::to_string(d)));
    }
  }
}

// The ops a collective traces (its axis index, ring arithmetic, copies and
// handshakes) belong to the user's call, not to lines inside refx's headers:
// printed graphs, the timeline and trace errors point at the user's line.
TEST(Attribution, EveryOpOfACollectiveIsAtTheCallersLine) {
  constexpr int n = 4;
  const Mesh mesh{{"x", n}};
  using Block = VmemRef<const float, 8>;
  const auto refx_lines = [](const Graph& g) {
    std::vector<std::string> found;
    for (std::size_t o = 0; o < g.num_ops(); ++o) {
      const Op& op = g.op(static_cast<OpId>(o));
      if (std::string_view(op.loc.file).find("include/refx/") != std::string_view::npos)
        found.push_back(fmt::format("{} at {}", op.prim->name, op.loc));
    }
    return found;
  };
  const auto gather = kernel([](Block x, VmemRef<float, n, 8> out) { collectives::all_gather(x, out, "x"); }).compile(mesh);
  const auto ring = kernel([](Block x, VmemRef<float, 8> out) {
                      collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::bidirectional, Algorithm::ring);
                    }).compile(mesh);
  const auto direct = kernel([](Block x, VmemRef<float, 8> out) {
                        collectives::all_reduce(x, out, "x", ReduceOp::max, Direction::unidirectional, Algorithm::direct);
                      }).compile(mesh);
  const auto scatter = kernel([](VmemRef<const float, n * 2> x, VmemRef<float, 2> out) {
                         collectives::reduce_scatter(x, out, "x");
                       }).compile(mesh);
  const auto matmul = kernel([](VmemRef<const float, 2, 4> a, VmemRef<const float, 4, 3> b, VmemRef<float, n * 2, 3> out) {
                        collectives::collective_matmul(a, b, out, "x");
                      }).compile(mesh);
  for (const auto* exe : {&gather, &ring, &direct, &scatter, &matmul}) {
    ASSERT_GT(exe->graph().num_ops(), 0u);
    EXPECT_EQ(refx_lines(exe->graph()), std::vector<std::string>{}) << to_text(exe->graph());
  }
}

// The same, read from the printed graph (what a user sees), for the
// collectives and forms the test above leaves out: in-place forms, the
// one-shot and direct algorithms, all_to_all, ppermute, and the ready-made
// *_program kernels (whose ops belong to the line that asked for the
// program). No op may print a location in a refx header.
TEST(Attribution, PrintedGraphsNameNoRefxHeader) {
  constexpr int n = 4;
  const Mesh mesh{{"x", n}};
  const std::regex in_a_header(R"(# [A-Za-z0-9_./-]+\.hpp:[0-9]+)");
  const auto header_lines = [&](const Graph& g) {
    std::vector<std::string> found;
    const std::string text = to_text(g);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), in_a_header); it != std::sregex_iterator(); ++it)
      found.push_back(it->str());
    return found;
  };
  std::vector<std::pair<std::string, Executable>> exes;
  exes.emplace_back("all_reduce in place, one_shot", kernel([](VmemRef<float, 8> x) {
                      collectives::all_reduce(x, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::one_shot);
                    }).compile(mesh));
  exes.emplace_back("all_reduce in place, ring", kernel([](VmemRef<float, 8> x) {
                      collectives::all_reduce(x, "x", ReduceOp::sum, Direction::bidirectional, Algorithm::ring);
                    }).compile(mesh));
  exes.emplace_back("all_gather, direct", kernel([](VmemRef<const float, 8> x, VmemRef<float, n, 8> out) {
                      collectives::all_gather(x, out, "x", Algorithm::direct);
                    }).compile(mesh));
  exes.emplace_back("all_gather_in_place", kernel([](VmemRef<float, n, 8> x) {
                      collectives::all_gather_in_place(x, "x", Algorithm::ring);
                    }).compile(mesh));
  exes.emplace_back("reduce_scatter, direct", kernel([](VmemRef<const float, n * 2> x, VmemRef<float, 2> out) {
                      collectives::reduce_scatter(x, out, "x", ReduceOp::sum, Direction::unidirectional,
                                                  Algorithm::direct);
                    }).compile(mesh));
  exes.emplace_back("reduce_scatter_in_place", kernel([](VmemRef<float, n * 2> x) {
                      collectives::reduce_scatter_in_place(x, "x");
                    }).compile(mesh));
  exes.emplace_back("all_to_all", kernel([](VmemRef<const float, n, 2> x, VmemRef<float, n, 2> out) {
                      collectives::all_to_all(x, out, "x");
                    }).compile(mesh));
  exes.emplace_back("ppermute", kernel([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
                      ppermute_done(ppermute_start(x, y, "x", 1));
                    }).compile(mesh));
  exes.emplace_back("all_reduce_program", collectives::all_reduce_program<float>(mesh, 8));
  exes.emplace_back("all_gather_program", collectives::all_gather_program<float>(mesh, 8));
  exes.emplace_back("reduce_scatter_program", collectives::reduce_scatter_program<float>(mesh, 8));
  exes.emplace_back("all_to_all_program", collectives::all_to_all_program<float>(mesh, 2));
  exes.emplace_back("collective_matmul_program", collectives::collective_matmul_program<float>(mesh, 2, 4, 3));
  for (const auto& [what, exe] : exes) {
    ASSERT_GT(exe.graph().num_ops(), 0u) << what;
    EXPECT_EQ(header_lines(exe.graph()), std::vector<std::string>{}) << what << ":\n" << to_text(exe.graph());
    // ...and the lines it does name are this file's.
    EXPECT_NE(to_text(exe.graph()).find("# collectives/in_kernel_test.cpp:"), std::string::npos) << what;
  }
}

}  // namespace

// ------------------------------------------------------------ kernel entry
// A collective traced before anything else the kernel does skips its entry
// barrier (at_kernel_entry): nothing of this launch has touched a peer's
// buffers yet, and every earlier launch has ended on every device.

TEST(KernelEntry, HoldsOnlyBeforeAnyEffectAtTheTopLevel) {
  std::vector<std::pair<std::string, bool>> seen;
  auto k = kernel([&](VmemRef<float, 4> x) {
    seen.emplace_back("top", at_kernel_entry());
    const auto me = axis_index("x");  // pure: no effect
    seen.emplace_back("after a pure op", at_kernel_entry());
    when(me == 0, [&] { seen.emplace_back("in a branch", at_kernel_entry()); });
    fori_loop(0, 2, [&](Scalar<std::int32_t>) { seen.emplace_back("in a loop", at_kernel_entry()); });
    run_scoped([&](RegularSemaphore) { seen.emplace_back("in a scope", at_kernel_entry()); });
    seen.emplace_back("after bodies without effects", at_kernel_entry());
    const auto v = x.load();
    seen.emplace_back("after a read", at_kernel_entry());
    x.store(v + 1.0f);
  });
  (void)k.compile(Mesh{{"x", 2}});
  const std::vector<std::pair<std::string, bool>> want{
      {"top", true},           {"after a pure op", true}, {"in a branch", false},
      {"in a loop", false},    {"in a scope", false},     {"after bodies without effects", true},
      {"after a read", false}};
  EXPECT_EQ(seen, want);
}

// Out of place, the ring reads x and writes out only by the peers' copies, so
// at kernel entry it skips its first handshake as the in-place ring does.
TEST(KernelEntry, OutOfPlaceRingAllReduceSkipsItsFirstHandshakeAtEntry) {
  constexpr int n = 4;
  const Mesh mesh{{"x", n}};
  using Block = VmemRef<const float, 10>;
  using Out = VmemRef<float, 10>;
  const auto first = kernel([](Block x, Out out) {
                       collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::ring);
                     }).compile(mesh);
  const auto later = kernel([](Block x, Out out) {
                       (void)x.load();  // a read: no longer the kernel's entry
                       collectives::all_reduce(x, out, "x", ReduceOp::sum, Direction::unidirectional, Algorithm::ring);
                     }).compile(mesh);
  // One handshake (one signal) per step, 2 (N-1) steps.
  EXPECT_EQ(count_ops(first.graph(), "semaphore_signal"), std::size_t{2 * (n - 1) - 1});
  EXPECT_EQ(count_ops(later.graph(), "semaphore_signal"), std::size_t{2 * (n - 1)});
  const auto host = inputs<float>(n, 10);
  const auto want = reduce(host, ReduceOp::sum);
  const Array x = array_of(host, Shape{10});
  for (int i = 0; i < 20; ++i) {
    const Array a = first(x)[0], b = later(x)[0];
    for (int d = 0; d < n; ++d) {
      ASSERT_TRUE(matches(a.to_host<float>(d), want, "first, device " + std::to_string(d)));
      ASSERT_TRUE(matches(b.to_host<float>(d), want, "later, device " + std::to_string(d)));
    }
  }
}

TEST(KernelEntry, CollectiveMatmulSkipsItsFirstHandshakeAtEntry) {
  constexpr int n = 4;
  const Mesh mesh{{"x", n}};
  using A = VmemRef<const float, 2, 3>;
  using B = VmemRef<const float, 3, 2>;
  using Out = VmemRef<float, n * 2, 2>;
  const auto first = kernel([](A a, B b, Out out) { collectives::collective_matmul(a, b, out, "x"); }).compile(mesh);
  const auto later = kernel([](A a, B b, Out out) {
                       (void)a.load();  // a read: no longer the kernel's entry
                       collectives::collective_matmul(a, b, out, "x");
                     }).compile(mesh);
  // One handshake (one signal) per step that sends: N - 1 of them.
  EXPECT_EQ(count_ops(first.graph(), "semaphore_signal"), std::size_t{n - 2});
  EXPECT_EQ(count_ops(later.graph(), "semaphore_signal"), std::size_t{n - 1});
  // Small integers: the products are exact in float.
  const auto small = [](int salt) {
    return Array::generate<float>(n, Shape{salt == 0 ? 2 : 3, salt == 0 ? 3 : 2}, [salt](int d, std::int64_t i) {
      return static_cast<float>((d * 5 + i * 3 + salt) % 7 - 3);
    });
  };
  const Array a = small(0), b = small(1);
  std::vector<float> gathered;
  for (int d = 0; d < n; ++d) {
    const auto ad = a.to_host<float>(d);
    gathered.insert(gathered.end(), ad.begin(), ad.end());
  }
  for (int i = 0; i < 20; ++i) {
    const Array x = first(a, b)[0], y = later(a, b)[0];
    for (int d = 0; d < n; ++d) {
      const auto want = matmul(gathered, b.to_host<float>(d), n * 2, 3, 2);
      ASSERT_TRUE(matches(x.to_host<float>(d), want, "first, device " + std::to_string(d)));
      ASSERT_TRUE(matches(y.to_host<float>(d), want, "later, device " + std::to_string(d)));
    }
  }
}

TEST(KernelEntry, AFirstCollectiveHasNoEntryBarrierALaterOneHasIt) {
  constexpr int n = 4;
  const Mesh mesh{{"x", n}};
  using Block = VmemRef<const float, 8>;
  using Gathered = Ref<float, extents<n, 8>, Vmem>;
  for (Algorithm alg : {Algorithm::direct, Algorithm::ring}) {
    SCOPED_TRACE(name_of(alg));
    const auto first = kernel([alg](Block x, Gathered out) { collectives::all_gather(x, out, "x", alg); }).compile(mesh);
    const auto later = kernel([alg](Block x, Gathered out) {
                         (void)x.load();  // a read: no longer the kernel's entry
                         collectives::all_gather(x, out, "x", alg);
                       }).compile(mesh);
    // The direct barrier signals every device; the ring's entry handshake, the left neighbour.
    EXPECT_EQ(count_ops(first.graph(), "semaphore_signal"), 0U);
    EXPECT_EQ(count_ops(later.graph(), "semaphore_signal"), alg == Algorithm::direct ? std::size_t{n} : 1U);
    // Both gather right, called back to back.
    const auto host = inputs<float>(n, 8);
    const Array x = array_of(host, Shape{8});
    std::vector<float> all;
    for (const auto& b : host) all.insert(all.end(), b.begin(), b.end());
    for (int i = 0; i < 20; ++i) {
      const Array a = first(x)[0], b = later(x)[0];
      for (int d = 0; d < n; ++d) {
        ASSERT_TRUE(matches(a.to_host<float>(d), all, "first, device " + std::to_string(d)));
        ASSERT_TRUE(matches(b.to_host<float>(d), all, "later, device " + std::to_string(d)));
      }
    }
  }
}
