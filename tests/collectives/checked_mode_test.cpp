// Every collective under the runtime's checked mode: the happens-before race
// detector (no unordered conflicting accesses may be reported) and lazy
// copies (a copy runs only when someone waits for it, which exposes code that
// reads before it waits). Results must still match the host reference.

#include <gtest/gtest.h>

#include "support/collectives_testing.hpp"
#include <refx/runtime/runtime.hpp>

namespace {
using namespace refx;
using namespace refx::testing;

template <class T>
using Vec = Ref<T, extents<dyn>, Hbm>;

struct Mode {
  const char* name;
  RuntimeOptions options;
};
const Mode kModes[] = {{"races", RuntimeOptions{.detect_races = true}},
                       {"lazy", RuntimeOptions{.lazy_copies = true}},
                       {"races_lazy", RuntimeOptions{.detect_races = true, .lazy_copies = true}}};

struct Case {
  int n;
  int mode;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return "N" + std::to_string(info.param.n) + "_" + kModes[info.param.mode].name;
}

class CheckedMode : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { dog_ = std::make_unique<Watchdog>(kTestLimit, case_name({GetParam(), 0})); }
  void TearDown() override { dog_.reset(); }
  int n() const { return GetParam().n; }
  Mesh mesh() const { return Mesh{{"x", n()}}; }

  Runtime rt_{kModes[GetParam().mode].options};
  std::unique_ptr<Watchdog> dog_;
};

TEST_P(CheckedMode, RingAndDirectAllReduce) {
  const std::int64_t m = 11;
  for (Algorithm alg : {Algorithm::ring, Algorithm::direct, Algorithm::ring_direct})
    for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
      SCOPED_TRACE(std::string(name_of(alg)) + " " + name_of(dir));
      const auto exe = kernel([=](Vec<std::int32_t> x) { collectives::all_reduce(x, "x", ReduceOp::sum, dir, alg); })
                           .compile(mesh(), {Shape{m}}, rt_);
      const auto host = inputs<std::int32_t>(n(), m);
      Array x = array_of(host, Shape{m}, rt_);
      exe.call_in_place({x});
      const auto want = reduce(host, ReduceOp::sum);
      for (int d = 0; d < n(); ++d) ASSERT_TRUE(matches(x.to_host<std::int32_t>(d), want, "device " + std::to_string(d)));
    }
}

// Out of place, the ring reads x and adds it to each block that arrives.
TEST_P(CheckedMode, RingAllReduceAndReduceScatterOutOfPlace) {
  const std::int64_t m = 11;
  for (Algorithm alg : {Algorithm::ring, Algorithm::ring_direct}) {
    for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
      SCOPED_TRACE(std::string(name_of(alg)) + " " + name_of(dir));
      const auto exe = kernel([=](Vec<const std::int32_t> x, Vec<std::int32_t> out, Vec<std::int32_t> part) {
                         collectives::all_reduce(x, out, "x", ReduceOp::sum, dir, alg);
                         collectives::reduce_scatter(x, part, "x", ReduceOp::max, dir, Algorithm::ring);
                       }).compile(mesh(), {Shape{m}, Shape{m}, Shape{(m + n() - 1) / n()}}, rt_);
      const auto host = inputs<std::int32_t>(n(), m);
      const Array x = array_of(host, Shape{m}, rt_);
      const auto outs = exe(x);
      const auto sum = reduce(host, ReduceOp::sum), max = reduce(host, ReduceOp::max);
      for (int d = 0; d < n(); ++d) {
        ASSERT_TRUE(matches(outs[0].to_host<std::int32_t>(d), sum, "all_reduce, device " + std::to_string(d)));
        const Chunk k = chunk_of(m, n(), d);
        ASSERT_TRUE(matches(outs[1].to_host<std::int32_t>(d), 0, max, k.start, k.len, "reduce_scatter, device " + std::to_string(d)));
      }
    }
  }
}

// ring_direct's all-gather has no barrier or handshake of its own: the next
// collective on the same buffer (not at kernel entry) must still find every
// peer done with it.
TEST_P(CheckedMode, RingDirectAllReduceTwiceOnOneBuffer) {
  const std::int64_t m = 11;
  for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
    SCOPED_TRACE(name_of(dir));
    const auto exe = kernel([=](Vec<std::int32_t> x) {
                       collectives::all_reduce(x, "x", ReduceOp::sum, dir, Algorithm::ring_direct);
                       collectives::all_reduce(x, "x", ReduceOp::sum, dir, Algorithm::ring_direct);
                     }).compile(mesh(), {Shape{m}}, rt_);
    const auto host = inputs<std::int32_t>(n(), m);
    Array x = array_of(host, Shape{m}, rt_);
    exe.call_in_place({x});
    auto want = reduce(host, ReduceOp::sum);
    for (auto& v : want.value) v *= n();
    for (int d = 0; d < n(); ++d) ASSERT_TRUE(matches(x.to_host<std::int32_t>(d), want, "device " + std::to_string(d)));
  }
}

TEST_P(CheckedMode, ReduceScatterInPlace) {
  const std::int64_t m = 11;
  for (Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
    SCOPED_TRACE(name_of(dir));
    const auto exe = collectives::reduce_scatter_program<std::int32_t>(mesh(), m, {.op = ReduceOp::max, .direction = dir, .in_place = true}, rt_);
    const auto host = inputs<std::int32_t>(n(), m);
    Array x = array_of(host, Shape{m}, rt_);
    exe.call_in_place({x});
    const auto want = reduce(host, ReduceOp::max);
    for (int d = 0; d < n(); ++d) {
      const Chunk k = chunk_of(m, n(), d);
      ASSERT_TRUE(matches(x.to_host<std::int32_t>(d), k.start, want, k.start, k.len, "device " + std::to_string(d)));
    }
  }
}

TEST_P(CheckedMode, AllGatherAndAllToAll) {
  const std::int64_t b = 5;
  const auto gather = collectives::all_gather_program<float>(mesh(), b, {}, rt_);
  const auto a2a = collectives::all_to_all_program<float>(mesh(), b, {}, rt_);
  const auto host = inputs<float>(n(), b);
  const auto host2 = inputs<float>(n(), n() * b, 1);
  const Array g = gather(array_of(host, Shape{b}, rt_))[0];
  const Array t = a2a(array_of(host2, Shape{n(), b}, rt_))[0];
  std::vector<float> all;
  for (const auto& h : host) all.insert(all.end(), h.begin(), h.end());
  for (int d = 0; d < n(); ++d) {
    ASSERT_TRUE(matches(g.to_host<float>(d), all, "all_gather, device " + std::to_string(d)));
    std::vector<float> want;
    for (const auto& xj : host2) want.insert(want.end(), xj.begin() + d * b, xj.begin() + (d + 1) * b);
    ASSERT_TRUE(matches(t.to_host<float>(d), want, "all_to_all, device " + std::to_string(d)));
  }
}

TEST_P(CheckedMode, StatefulPermuteLoop) {
  constexpr std::int64_t b = 4;
  constexpr int steps = 5;
  const auto exe = kernel([](HbmRef<const float, b> x, HbmRef<float, b> y) {
                     run_scoped([&](DoubleBuffer<float, b> buf) {
                       sync_copy(x, buf.at(0));
                       fori_loop(0, steps, [&](Scalar<std::int32_t> i) {
                         when(i % 2 == 0, [&] { ppermute_done(ppermute_start(buf.at(0), buf.at(1), "x", 1)); });
                         when(i % 2 == 1, [&] { ppermute_done(ppermute_start(buf.at(1), buf.at(0), "x", 1)); });
                       });
                       sync_copy(buf.at(steps % 2), y);
                     });
                   }).compile(mesh(), {}, rt_);
  const auto host = inputs<float>(n(), b);
  const Array y = exe(array_of(host, Shape{b}, rt_))[0];
  for (int d = 0; d < n(); ++d)
    ASSERT_TRUE(matches(y.to_host<float>(d), host[static_cast<std::size_t>(permute_source(d, steps, n()))], "device " + std::to_string(d)));
}

TEST_P(CheckedMode, CollectiveMatmul) {
  using M = Ref<float, extents<dyn, dyn>, Vmem>;
  using CM = Ref<const float, extents<dyn, dyn>, Vmem>;
  const std::int64_t rows = 2, k = 3, cols = 2;
  const auto exe = kernel([](CM a, CM b, M out) { collectives::collective_matmul(a, b, out, "x"); })
                       .compile(mesh(), {Shape{rows, k}, Shape{k, cols}, Shape{n() * rows, cols}}, rt_);
  // Small integers: every product and sum is exact in float.
  auto small = [&](int salt) {
    auto v = inputs<std::int32_t>(n(), 6, salt);
    std::vector<std::vector<float>> out;
    for (auto& d : v) {
      out.emplace_back();
      for (auto e : d) out.back().push_back(static_cast<float>(e % 10));
    }
    return out;
  };
  const auto a = small(1), b = small(2);
  std::vector<float> gathered;
  for (const auto& ad : a) gathered.insert(gathered.end(), ad.begin(), ad.end());
  const Array out = exe(array_of(a, Shape{rows, k}, rt_), array_of(b, Shape{k, cols}, rt_))[0];
  for (int d = 0; d < n(); ++d)
    ASSERT_TRUE(matches(out.to_host<float>(d), matmul(gathered, b[static_cast<std::size_t>(d)], n() * rows, k, cols),
                        "device " + std::to_string(d)));
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int n : {1, 2, 3, 4, 5})
    for (int mode = 0; mode < 3; ++mode) out.push_back({n, mode});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, CheckedMode, ::testing::ValuesIn(cases()), case_name);

}  // namespace
