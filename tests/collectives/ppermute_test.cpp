// ppermute_start / ppermute_done: device me's src lands in dst on device
// me + shift (shifts +-1 and +-2, every ring size), with independent work
// between start and done; and the stateful loop of the async design note: a
// DoubleBuffer whose slots alternate as send and receive buffers, so after K
// steps slot K % 2 holds device (me - K * shift) mod N's block.

#include <gtest/gtest.h>


#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

const std::vector<int> kShifts{1, -1, 2, -2};

// ---------------------------------------------------------------- one permute

struct Case {
  int n;
  int shift;
  std::int64_t block;
  Elem elem;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "N" + std::to_string(c.n) + "_shift" + (c.shift < 0 ? "m" : "p") + std::to_string(std::abs(c.shift)) +
         "_block" + std::to_string(c.block) + "_" + name_of(c.elem);
}

class Ppermute : public ::testing::TestWithParam<Case> {};

TEST_P(Ppermute, DeviceMePlusShiftReceivesMyBlock) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    const int shift = c.shift;
    auto exe = kernel([shift](Ref<const T, extents<dyn>, Hbm> x, Ref<T, extents<dyn>, Hbm> y) {
                 ppermute_done(ppermute_start(x, y, "x", shift));
               }).compile(Mesh{{"x", c.n}}, {Shape{c.block}, Shape{c.block}});
    const auto host = inputs<T>(c.n, c.block);
    const Array y = exe(array_of(host, Shape{c.block}))[0];
    for (int d = 0; d < c.n; ++d)
      ASSERT_TRUE(matches(y.to_host<T>(d), host[permute_source(d, c.shift, c.n)], "device " + std::to_string(d)));
  });
}

std::vector<Case> cases() {
  std::vector<Case> out;
  int k = 0;
  for (int n : kRingSizes)
    for (int s : kShifts)
      for (std::int64_t b : {1, 7, 1000}) out.push_back({n, s, b, kElems[static_cast<std::size_t>(k++ % 4)]});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, Ppermute, ::testing::ValuesIn(cases()), case_name);

// Work between start and done runs while the copy is in flight; it may read
// the source (the permute only reads it) and write other Refs.
TEST(PpermuteOverlap, IndependentWorkBetweenStartAndDone) {
  Watchdog dog(kTestLimit, "ppermute overlap");
  constexpr std::int64_t b = 64;
  for (int n : {1, 2, 5}) {
    // Static extents: see the report (a dynamic-extent Value times a scalar does not compile).
    auto exe = kernel([](VmemRef<const float, b> x, VmemRef<float, b> y, VmemRef<float, b> z) {
                 const auto f = ppermute_start(x, y, "x", 1);
                 z.store(x.load() * 3.0f + 1.0f);
                 ppermute_done(f);
                 z.store(z.load() + y.load());  // y is complete after done
               }).compile(Mesh{{"x", n}});
    const auto host = inputs<float>(n, b);
    const std::vector<Array> out = exe(array_of(host, Shape{b}));
    for (int d = 0; d < n; ++d) {
      const auto& mine = host[static_cast<std::size_t>(d)];
      const auto& left = host[static_cast<std::size_t>(permute_source(d, 1, n))];
      std::vector<float> z(mine.size());
      for (std::size_t i = 0; i < z.size(); ++i) z[i] = mine[i] * 3.0f + 1.0f + left[i];
      ASSERT_TRUE(matches(out[0].to_host<float>(d), left, "y on device " + std::to_string(d)));
      ASSERT_TRUE(matches(out[1].to_host<float>(d), z, "z on device " + std::to_string(d)));
    }
  }
}

// ---------------------------------------------------------------- the stateful loop

enum class Loop { unrolled, fori_when, fori_slots };
const char* name_of(Loop l) {
  switch (l) {
    case Loop::unrolled: return "unrolled";
    case Loop::fori_when: return "fori_when";
    case Loop::fori_slots: return "fori_slots";
  }
  return "?";
}

struct LoopCase {
  int n;
  int steps;
  int shift;
  Loop loop;
};

std::string loop_name(const ::testing::TestParamInfo<LoopCase>& info) {
  const LoopCase& c = info.param;
  return "N" + std::to_string(c.n) + "_K" + std::to_string(c.steps) + "_shift" + (c.shift < 0 ? "m" : "p") +
         std::to_string(std::abs(c.shift)) + "_" + name_of(c.loop);
}

constexpr std::int64_t kBlock = 5;

/// x (block) goes into slot 0 of a DoubleBuffer, `steps` permutes alternate
/// the slots, and y (2, block) receives both slots.
Executable loop_program(const LoopCase& c) {
  return kernel([c](Ref<const float, extents<dyn>, Hbm> x, Ref<float, extents<dyn, dyn>, Hbm> y) {
           run_scoped({Shape{2, kBlock}}, [&](DoubleBuffer<float, dyn> buf) {
             sync_copy(x, buf.at(0));
             switch (c.loop) {
               case Loop::unrolled:  // plain C++ steps: static slot indices
                 for (int k = 0; k < c.steps; ++k)
                   ppermute_done(ppermute_start(buf.at(k % 2), buf.at((k + 1) % 2), "x", c.shift));
                 break;
               case Loop::fori_when:  // one traced body; each branch names its slots statically
                 fori_loop(0, c.steps, [&](Scalar<std::int32_t> i) {
                   when(i % 2 == 0, [&] { ppermute_done(ppermute_start(buf.at(0), buf.at(1), "x", c.shift)); });
                   when(i % 2 == 1, [&] { ppermute_done(ppermute_start(buf.at(1), buf.at(0), "x", c.shift)); });
                 });
                 break;
               case Loop::fori_slots:  // slots selected by the traced step
                 fori_loop(0, c.steps, [&](Scalar<std::int32_t> i) {
                   ppermute_done(ppermute_start(working_slot(buf, i), receiving_slot(buf, i), "x", c.shift));
                 });
                 break;
             }
             sync_copy(buf, y);
           });
         })
      .compile(Mesh{{"x", c.n}}, {Shape{kBlock}, Shape{2, kBlock}});
}

class StatefulLoop : public ::testing::TestWithParam<LoopCase> {};

TEST_P(StatefulLoop, SlotKMod2HoldsTheBlockFromKStepsAway) {
  const LoopCase c = GetParam();
  Watchdog dog(kTestLimit, loop_name({c, 0}));
  const Executable exe = loop_program(c);
  const auto host = inputs<float>(c.n, kBlock);
  const Array y = exe(array_of(host, Shape{kBlock}))[0];
  for (int d = 0; d < c.n; ++d) {
    const auto got = y.to_host<float>(d);
    const int now = c.steps % 2, before = (c.steps + 1) % 2;
    // The slot that received last holds the block from K steps away; the
    // other one still holds what this device sent in the last step.
    const auto& want_now = host[static_cast<std::size_t>(permute_source(d, c.steps * c.shift, c.n))];
    const auto& want_before = host[static_cast<std::size_t>(permute_source(d, (c.steps - 1) * c.shift, c.n))];
    ASSERT_TRUE(matches(got, now * kBlock, Expected<float>{want_now, {}}, 0, kBlock, "slot K%2, device " + std::to_string(d)));
    ASSERT_TRUE(matches(got, before * kBlock, Expected<float>{want_before, {}}, 0, kBlock,
                        "slot (K+1)%2, device " + std::to_string(d)));
  }
}

std::vector<LoopCase> loop_cases() {
  std::vector<LoopCase> out;
  int k = 0;
  const Loop loops[] = {Loop::unrolled, Loop::fori_when, Loop::fori_slots};
  for (int n : kRingSizes)
    for (int steps : {1, 2, 5, 16})
      for (int s : kShifts) out.push_back({n, steps, s, loops[k++ % 3]});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, StatefulLoop, ::testing::ValuesIn(loop_cases()), loop_name);

// Many calls of one loop program, every result checked: the interleavings in
// which a neighbour's handshake or copy is counted on the wrong semaphore
// show up here.
TEST(StatefulLoopStress, ManyCallsAreAllExact) {
  Watchdog dog(kTestLimit, "stateful loop stress");
  for (const LoopCase& c : {LoopCase{8, 5, 1, Loop::unrolled}, LoopCase{16, 16, -1, Loop::fori_when}}) {
    const Executable exe = loop_program(c);
    const auto host = inputs<float>(c.n, kBlock);
    const Array x = array_of(host, Shape{kBlock});
    std::vector<Array> ys;
    for (int i = 0; i < 150; ++i) ys.push_back(exe(x)[0]);
    for (std::size_t i = 0; i < ys.size(); ++i)
      for (int d = 0; d < c.n; ++d) {
        const auto& want = host[static_cast<std::size_t>(permute_source(d, c.steps * c.shift, c.n))];
        ASSERT_TRUE(matches(ys[i].to_host<float>(d), (c.steps % 2) * kBlock, Expected<float>{want, {}}, 0, kBlock,
                            loop_name({c, 0}) + " call " + std::to_string(i) + ", device " + std::to_string(d)));
      }
  }
}

// Two permutes in flight at once (pallas-semantics b.6, bidirectional): the
// first half of the block travels right, the second half left.
constexpr std::int64_t kBiBlock = 6, kBiHalf = 3;
constexpr int kBiSteps = 5;

TEST(StatefulLoopBidirectional, HalvesTravelInOppositeDirections) {
  Watchdog dog(kTestLimit, "bidirectional permute loop");
  for (int n : kRingSizes) {
    auto exe = kernel([](Ref<const std::int32_t, extents<kBiBlock>, Hbm> x, Ref<std::int32_t, extents<kBiBlock>, Hbm> y) {
                 run_scoped([&](DoubleBuffer<std::int32_t, kBiBlock> buf) {
                   sync_copy(x, buf.at(0));
                   for (int k = 0; k < kBiSteps; ++k) {
                     const auto from = buf.at(k % 2), to = buf.at((k + 1) % 2);
                     const auto right = ppermute_start(from.at(ds(0, kBiHalf)), to.at(ds(0, kBiHalf)), "x", 1);
                     const auto left = ppermute_start(from.at(ds(kBiHalf, kBiBlock - kBiHalf)), to.at(ds(kBiHalf, kBiBlock - kBiHalf)), "x", -1);
                     ppermute_done(right);
                     ppermute_done(left);
                   }
                   sync_copy(buf.at(kBiSteps % 2), y);
                 });
               }).compile(Mesh{{"x", n}});
    const auto host = inputs<std::int32_t>(n, kBiBlock, 11);
    const Array y = exe(array_of(host, Shape{kBiBlock}))[0];
    for (int d = 0; d < n; ++d) {
      std::vector<std::int32_t> want(host[static_cast<std::size_t>(permute_source(d, kBiSteps, n))].begin(),
                                     host[static_cast<std::size_t>(permute_source(d, kBiSteps, n))].begin() + kBiHalf);
      const auto& from_right = host[static_cast<std::size_t>(permute_source(d, -kBiSteps, n))];
      want.insert(want.end(), from_right.begin() + kBiHalf, from_right.end());
      ASSERT_TRUE(matches(y.to_host<std::int32_t>(d), want, "N" + std::to_string(n) + " device " + std::to_string(d)));
    }
  }
}

}  // namespace
