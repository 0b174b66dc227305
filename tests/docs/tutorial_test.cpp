// docs/tutorial.md, "What can go wrong": each mistake is a region between
// [snippet:NAME] markers inside an otherwise correct kernel from the
// tutorial, quoted verbatim by the page; DOC_OUTPUT("NAME") records the
// message refx gives for it, which the page shows after
// <!-- output: tests/docs/tutorial_test.cpp#NAME --> (line numbers as N).
// The tutorial's complete programs themselves run as docs.Samples.tutorial_*.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

#include "docs/doc_outputs.hpp"

using namespace refx;

namespace {

constexpr int kN = 4;

/// What `f` throws (a refx::Error), with a newline, as the page shows it.
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + "\n";
  }
  return "no error\n";
}

// ---- 1. Refs and scopes

constexpr std::int64_t kCols = 128;

DOC_OUTPUT("ref-after-scope") {
  return message_of([] {
    (void)trace([](VmemRef<const float, kCols> x, VmemRef<float, kCols> y) {
      // [snippet:ref-after-scope]
      VmemRef<float, kCols> kept;
      run_scoped([&](VmemRef<float, kCols> scratch) {
        scratch.store(x.load());
        kept = scratch;  // the handle outlives the scope; the buffer does not
      });
      y.store(kept.load());
      // [/snippet]
    });
  });
}

// ---- 2. A first remote copy

constexpr std::int64_t kBlock = 1024;

DOC_OUTPUT("byte-count") {
  return message_of([] {
    (void)kernel([](HbmRef<const float, kBlock> x, HbmRef<float, kBlock> y) {
      auto right = (axis_index("x") + 1) % axis_size("x");
      run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
        // [snippet:byte-count]
        auto half = make_async_remote_copy(x.at(ds(0, kBlock / 2)), y.at(ds(0, kBlock / 2)), send, recv, right);
        half.start();
        auto whole = make_async_remote_copy(x, y, send, recv, right);
        whole.wait();  // waits for the bytes of all of x
        // [/snippet]
      });
    }).compile(Mesh{{"x", kN}});
  });
}

// ---- 3. Semaphores and barriers

DOC_OUTPUT("half-barrier") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto exchange = kernel([](VmemRef<const float, 256> x, VmemRef<float, 256> y) {
                          auto right = (axis_index("x") + 1) % kN;
                          // [snippet:half-barrier]
                          auto barrier = get_barrier_semaphore();
                          semaphore_signal(barrier, 1, right);
                          semaphore_wait(barrier, 2);  // only my left neighbour signals me
                          // [/snippet]
                          y.store(x.load());
                        })
                            .name("exchange")
                            .collective_id(0)
                            .compile(Mesh{{"x", kN}}, {}, rt);
  const Array x = Array::generate<float>(kN, Shape{256}, [](int, std::int64_t) { return 1; }, rt);
  return message_of([&] { exchange(x)[0].block_until_ready(); });
}

// ---- 4. All-gather

constexpr std::int64_t kGather = 256;

DOC_OUTPUT("negative-slot") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto gather_mean = kernel([](VmemRef<const float, kGather> x, VmemRef<float, kN, kGather> out,
                                     VmemRef<float, kGather> mean) {
                             auto me = axis_index("x");
                             auto right = (me + 1) % kN;
                             run_scoped([&](DmaSemaphore send, DmaSemaphores<kN - 1> recv) {
                               out.at(me).store(x.load());
                               for (int s = 0; s < kN - 1; ++s) {
                                 // [snippet:negative-slot]
                                 auto slot = (me - s) % kN;  // C++'s %: -1 for me = 0, s = 1
                                 // [/snippet]
                                 auto copy = make_async_remote_copy(out.at(slot), out.at(slot), send, recv.at(s), right);
                                 copy.start();
                                 copy.wait();
                               }
                               mean.store(reduce_sum<0>(out.load()) * (1.0f / kN));
                             });
                           })
                               .name("gather_mean")
                               .compile(Mesh{{"x", kN}}, {}, rt);
  const Array x = Array::generate<float>(kN, Shape{kGather}, [](int d, std::int64_t) { return d; }, rt);
  return message_of([&] { gather_mean(x)[0].block_until_ready(); });
}

// ---- 5. Double buffering and the capacity handshake

constexpr std::int64_t kReduce = 512;

std::string race_without_capacity_handshake() {
  Runtime checked(RuntimeOptions{.detect_races = true});
  const auto exe = kernel([](VmemRef<const float, kReduce> x, VmemRef<float, kReduce> sum) {
                     auto right = (axis_index("x") + 1) % kN;
                     run_scoped([&](VmemRef<float, 2, kReduce> buf, DmaSemaphore send, DmaSemaphore recv) {
                       buf.at(0).store(x.load());
                       sum.store(0.0f);
                       for (int s = 0; s < kN - 1; ++s) {
                         // [snippet:no-capacity]
                         auto working = buf.at(s % 2), receiving = buf.at((s + 1) % 2);
                         auto copy = make_async_remote_copy(working, receiving, send, recv, right);
                         copy.start();
                         sum += working.load();
                         copy.wait();
                         // [/snippet]
                       }
                       sum += buf.at((kN - 1) % 2).load();
                     });
                   })
                       .name("all_reduce")
                       .compile(Mesh{{"x", kN}}, {}, checked);
  const Array x = Array::generate<float>(kN, Shape{kReduce}, [](int d, std::int64_t) { return d; }, checked);
  return message_of([&] { exe(x)[0].block_until_ready(); });
}

// The page shows the first line; the pairs that follow depend on timing.
DOC_OUTPUT("no-capacity") {
  const std::string m = race_without_capacity_handshake();
  return m.substr(0, m.find('\n') + 1);
}

TEST(TutorialPage, TheRaceNamesACopyIntoTheSlotAndTheReadOfIt) {
  const std::string m = race_without_capacity_handshake();
  EXPECT_NE(m.find("\n  copy write into device "), std::string::npos) << m;
  EXPECT_NE(m.find(") and read by device "), std::string::npos) << m;
}

// ---- 6. Reduce-scatter

constexpr std::int64_t kChunk = 256;

DOC_OUTPUT("receive-never-waited") {
  return message_of([] {
    (void)kernel([](HbmRef<float, kN, kChunk> x) {
      auto me = axis_index("x");
      auto left = (me + kN - 1) % kN, right = (me + 1) % kN;
      run_scoped([&](RegularSemaphore capacity, DmaSemaphore send, DmaSemaphore recv) {
        for (int s = 0; s < kN - 1; ++s) {
          semaphore_signal(capacity, 1, left);
          semaphore_wait(capacity, 1);
          auto out_chunk = (me + 2 * kN - s - 1) % kN;
          // [snippet:receive-never-waited]
          auto copy = make_async_remote_copy(x.at(out_chunk), x.at(out_chunk), send, recv, right);
          copy.start(accumulate);
          copy.wait_send();
          // [/snippet]
        }
      });
    }).compile(Mesh{{"x", kN}});
  });
}

// ---- 7. ppermute

DOC_OUTPUT("permute-into-itself") {
  return message_of([] {
    (void)kernel([](VmemRef<const float, kReduce> x, VmemRef<float, kReduce> sum) {
      run_scoped([&](DoubleBuffer<float, kReduce> buf) {
        buf.at(0).store(x.load());
        // [snippet:permute-into-itself]
        auto f = ppermute_start(buf.at(0), buf.at(0), "x", 1);
        // [/snippet]
        sum.store(buf.at(0).load());
        ppermute_done(f);
      });
    }).compile(Mesh{{"x", kN}});
  });
}

// ---- 8. Ordered effects

DOC_OUTPUT("callback-throws") {
  Runtime rt(RuntimeOptions{.workers = 2});
  const auto exe = kernel([](VmemRef<const float, 8>) {
                     fori_loop(0, 2, [&](Scalar<std::int32_t> step) {
                       // [snippet:callback-throws]
                       io_callback(ordered, [](std::int32_t s) {
                         if (s == 1) throw std::runtime_error("disk full");
                       }, step);
                       // [/snippet]
                     });
                   }).compile(Mesh{{"x", kN}}, {}, rt);
  exe(Array::generate<float>(kN, Shape{8}, [](int, std::int64_t) { return 0; }, rt));
  const std::string first = message_of([&] { effects_barrier(rt); });
  const std::string second = message_of([&] { effects_barrier(rt); });  // reported once
  return second == "no error\n" ? first : "reported twice: " + second;
}

TEST(Docs, OutputsMatchThePages) { refx_docs::expect_outputs_match(__FILE__); }

}  // namespace
