// The execution model: results do not depend on the worker count or on the
// order the pool runs tasks in; large copies split across workers (plain and
// accumulating) land correctly; 64 devices wait on 2 cores without spinning;
// dispatch is asynchronous and launches run in dispatch order.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 96;
constexpr std::int64_t kSlots = 8;

/// A ring all-gather (pallas-semantics b.2: one receive semaphore per step,
/// an N-slot buffer, no handshake needed), then every device accumulates its
/// own block into its right neighbour's `sum` (which starts as that device's
/// block), after an all-to-all barrier.
Executable gather_and_accumulate(int n, Runtime& rt) {
  return kernel([n](HbmRef<const float, kBlock> x, HbmRef<float, kSlots, kBlock> out, HbmRef<float, kBlock> sum) {
           auto me = axis_index("x");
           auto right = (me + 1) % n;
           run_scoped([&](DmaSemaphore local, DmaSemaphore send, DmaSemaphores<kSlots> recv, DmaSemaphore acc) {
             auto own = make_async_copy(x, out.at(me), local);
             own.start();
             own.wait();
             for (int s = 0; s < n - 1; ++s) {
               auto slot = (me + n - s) % n;
               auto c = make_async_remote_copy(out.at(slot), out.at(slot), send, recv.at(s), right);
               c.start();
               c.wait();
             }
             // sum starts as x (local copy), then the left neighbour adds its x.
             sync_copy(x, sum);
             auto b = get_barrier_semaphore();
             for (int d = 0; d < n; ++d) semaphore_signal(b, 1, d);
             semaphore_wait(b, n);
             auto a = make_async_remote_copy(x, sum, send, acc, right);
             a.start(accumulate);
             a.wait();
           });
         })
      .name("gather_and_accumulate")
      .collective_id(3)
      .compile(Mesh{{"x", n}}, {}, rt);
}

struct Config {
  const char* name;
  RuntimeOptions options;
};

std::vector<Config> configs() {
  std::vector<Config> c{{"workers=1", {.workers = 1}},
                        {"workers=2", {.workers = 2}},
                        {"workers=4", {.workers = 4}},
                        {"workers=3 tiny chunks", {.workers = 3, .inline_copy_bytes = 0, .copy_chunk_bytes = 64}}};
  for (std::uint64_t seed : {1, 2, 3, 17, 12345})
    c.push_back({"shuffled", {.workers = 2, .shuffle_seed = seed}});
  c.push_back({"workers=1 shuffled", {.workers = 1, .shuffle_seed = 99}});
  c.push_back({"workers=4 shuffled tiny chunks",
               {.workers = 4, .inline_copy_bytes = 16, .copy_chunk_bytes = 40, .shuffle_seed = 7}});
  // Checked mode: the race detector stays silent, lazy copies change nothing.
  c.push_back({"race detector", {.workers = 2, .detect_races = true}});
  c.push_back({"lazy copies", {.workers = 2, .lazy_copies = true}});
  c.push_back({"checked, shuffled", {.workers = 3, .shuffle_seed = 11, .detect_races = true, .lazy_copies = true}});
  return c;
}

class Scheduling : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, Scheduling, device_counts(), DeviceCountName{});

TEST_P(Scheduling, SameResultsOnEveryRuntimeConfiguration) {
  Watchdog dog(kTestLimit, "runtime configurations");
  const int n = GetParam();
  for (const Config& cfg : configs()) {
    Runtime rt(cfg.options);
    const StatsDelta delta(rt);
    const Executable exe = gather_and_accumulate(n, rt);
    const Array x = Array::generate<float>(n, Shape{kBlock}, tag, rt);
    for (int rep = 0; rep < 3; ++rep) {
      auto out = exe(x);
      ASSERT_EQ(out.size(), 2u);
      for (int d = 0; d < n; ++d) {
        const auto g = out[0].to_host<float>(d);
        for (int s = 0; s < n; ++s)
          for (std::int64_t i = 0; i < kBlock; i += 7)
            ASSERT_EQ(g[static_cast<std::size_t>(s * kBlock + i)], tag(s, i))
                << cfg.name << " seed " << cfg.options.shuffle_seed << ": device " << d << " slot " << s;
      }
      EXPECT_TRUE(all_shards_match<float>(out[1], [&](int d, std::int64_t i) { return tag(d, i) + tag(mod(d - 1, n), i); }))
          << cfg.name << " seed " << cfg.options.shuffle_seed;
    }
    // 1 own + (n-1) ring + 1 sync_copy + 1 accumulate copies per device and call.
    EXPECT_EQ(delta.get().copies, 3 * n * (n + 2)) << cfg.name;
    EXPECT_EQ(delta.get().bytes_copied, 3 * n * (n + 2) * kBlock * 4) << cfg.name;
  }
}

// ---- large copies: split into chunks executed by several workers

// 8 MiB + 12 bytes of f32 / i32 (2 MiB + 12 under sanitizers): several chunks
// of copy_chunk_bytes, and a partial last chunk.
constexpr std::int64_t kBig = (std::int64_t{kSanitized ? 2 : 8} << 20) / 4 + 3;

TEST_P(Scheduling, LargeChunkedCopiesAreExact) {
  Watchdog dog(kTestLimit, "large copies");
  const int n = GetParam();
  for (unsigned workers : {2u, 4u}) {
    Runtime rt(RuntimeOptions{.workers = workers});
    const StatsDelta delta(rt);
    auto exe = kernel([](HbmRef<const float, kBig> x, HbmRef<float, kBig> y, HbmRef<float, kBig> z) {
                 auto right = (axis_index("x") + 1) % axis_size("x");
                 run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv, DmaSemaphore local) {
                   semaphore_signal(ready, 1, (axis_index("x") + axis_size("x") - 1) % axis_size("x"));
                   semaphore_wait(ready, 1);
                   auto r = make_async_remote_copy(x, y, send, recv, right);
                   auto l = make_async_copy(x, z, local);
                   r.start();
                   l.start();
                   l.wait();
                   r.wait();
                 });
               })
                   .compile(Mesh{{"x", n}}, {}, rt);
    const auto val = [](int d, std::int64_t i) { return static_cast<float>((i * 7919 + d * 104729) % 1000003); };
    auto out = exe(Array::generate<float>(n, Shape{kBig}, val, rt));
    EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return val(mod(d - 1, n), i); }))
        << workers << " workers";
    EXPECT_TRUE(all_shards_match<float>(out[1], val)) << workers << " workers";
    EXPECT_EQ(delta.get().bytes_copied, 2 * n * kBig * 4);
    EXPECT_EQ(delta.get().copies, 2 * n);
  }
}

TEST_P(Scheduling, LargeAccumulateCopiesAreExact) {
  Watchdog dog(kTestLimit, "large accumulate copies");
  const int n = GetParam();
  Runtime rt(RuntimeOptions{.workers = 4});
  // y starts as base (in place); the left neighbour adds x into it, twice
  // (a remote and then a local-to-remote accumulate of a strided half).
  auto exe = kernel([](HbmRef<const std::int32_t, kBig> x, HbmRef<std::int32_t, kBig> y) {
               auto me = axis_index("x");
               auto right = (me + 1) % axis_size("x");
               auto left = (me + axis_size("x") - 1) % axis_size("x");
               run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                 semaphore_signal(ready, 1, left);
                 semaphore_wait(ready, 1);
                 auto whole = make_async_remote_copy(x, y, send, recv, right);
                 whole.start(accumulate);
                 whole.wait();
                 semaphore_signal(ready, 1, left);
                 semaphore_wait(ready, 1);
                 auto evens = make_async_remote_copy(x.at(ds(0, kBig / 2 + 1, 2)), y.at(ds(0, kBig / 2 + 1, 2)), send,
                                                     recv, right);
                 evens.start(accumulate);
                 evens.wait();
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  const auto xv = [](int d, std::int64_t i) { return static_cast<std::int32_t>((i % 1000) + d); };
  const auto base = [](int d, std::int64_t i) { return static_cast<std::int32_t>(-3 * (i % 17) + 10 * d); };
  const Array x = Array::generate<std::int32_t>(n, Shape{kBig}, xv, rt);
  for (int rep = 0; rep < 2; ++rep) {
    Array y = Array::generate<std::int32_t>(n, Shape{kBig}, base, rt);
    exe.call_in_place({x, y});
    EXPECT_TRUE(all_shards_match<std::int32_t>(y, [&](int d, std::int64_t i) {
      return base(d, i) + xv(mod(d - 1, n), i) * (i % 2 == 0 ? 2 : 1);
    }));
  }
}

// ---- a large copy whose start is followed by a wait (docs/runtime.md, "Copies")

constexpr std::int64_t kCopyBytes = kBig * 4;
constexpr auto val = [](int, std::int64_t i) { return static_cast<float>(i % 4099); };

// The device has nothing to overlap the copy with, so it keeps the copy and
// runs it itself at the wait instead of parking until a pool task has run it.
TEST(CopyBeforeAWait, RunsOnItsDeviceWithoutParking) {
  Watchdog dog(kTestLimit, "copy before a wait");
  // One chunk: no other thread may help, so whether the device parks is exact.
  Runtime rt(RuntimeOptions{.workers = 2, .copy_chunk_bytes = kCopyBytes});
  auto exe = kernel([](HbmRef<const float, kBig> x, HbmRef<float, kBig> y) {
               run_scoped([&](DmaSemaphore sem) {
                 auto c = make_async_copy(x, y, sem);
                 c.start();
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(1, Shape{kBig}, val, rt);
  const StatsDelta delta(rt);
  for (int rep = 0; rep < 5; ++rep) EXPECT_TRUE(all_shards_match<float>(exe(x)[0], val)) << "call " << rep;
  EXPECT_EQ(delta.get().parks, 0);
  EXPECT_EQ(delta.get().bytes_copied, 5 * kCopyBytes);
}

// A wait that is satisfied at once, with compute after it: the device hands
// the copy it kept to the pool then, and computes while the pool copies.
TEST(CopyBeforeAWait, ASatisfiedWaitHandsTheCopyToThePool) {
  Watchdog dog(kTestLimit, "copy before a satisfied wait");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<const float, kBig> x, VmemRef<const std::int32_t, 1> which, VmemRef<const float, 1024> a,
                       HbmRef<float, kBig> y, VmemRef<float, 1024> b) {
               run_scoped([&](DmaSemaphore big, DmaSemaphore small) {
                 // Both sources depend on a load, so the starts stay together
                 // and in this order: the big copy's next op is the small
                 // copy's wait, already satisfied (the small copy ran at its
                 // start), and the compute that reads its result comes next.
                 auto zero = which.at(0).load() * 0;
                 auto s = make_async_copy(a.at(ds(zero, 1024)), b, small);
                 auto c = make_async_copy(x.at(ds(zero, kBig)), y, big);
                 s.start();
                 c.start();
                 s.wait();
                 auto v = b.load();  // no constant: it could be placed between the start and the wait
                 b.store(v + v);
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(1, Shape{kBig}, val, rt), a = Array::generate<float>(1, Shape{1024}, val, rt);
  const Array which = Array::generate<std::int32_t>(1, Shape{1}, [](int, std::int64_t) { return 0; }, rt);
  for (int rep = 0; rep < 5; ++rep) {
    auto out = exe(x, which, a);
    EXPECT_TRUE(all_shards_match<float>(out[0], val)) << "call " << rep;
    EXPECT_TRUE(all_shards_match<float>(out[1], [&](int d, std::int64_t i) { return val(d, i) * 2.0f; }));
  }
}

// The wait after the start fails (a semaphore index out of bounds): the copy
// the device kept still runs, so the launch ends with that error instead of
// waiting for it forever, and the next call works.
TEST(CopyBeforeAWait, AWaitThatFailsDoesNotStrandTheCopy) {
  Watchdog dog(kTestLimit, "copy before a failing wait");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](HbmRef<const float, kBig> x, VmemRef<const std::int32_t, 1> which, HbmRef<float, kBig> y) {
               run_scoped([&](DmaSemaphore sem, RegularSemaphores<2> go) {
                 // The start follows the load (its source depends on it), and
                 // the wait (for a count of 0) needs no other op before it.
                 auto i = which.at(0).load();
                 auto zero = i - i;
                 auto c = make_async_copy(x.at(ds(zero, kBig)), y, sem);
                 c.start();
                 semaphore_wait(go.at(i), zero);
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", 1}}, {}, rt);
  const Array x = Array::generate<float>(1, Shape{kBig}, val, rt);
  const auto which = [&](std::int32_t v) {
    return Array::generate<std::int32_t>(1, Shape{1}, [v](int, std::int64_t) { return v; }, rt);
  };
  const StatsDelta delta(rt);
  auto out = exe(x, which(5));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("out of bounds"), std::string::npos) << msg;
  EXPECT_EQ(delta.get().copies, 1) << "the started copy ran";
  EXPECT_EQ(delta.get().bytes_copied, kCopyBytes);
  for (int rep = 0; rep < 3; ++rep) EXPECT_TRUE(all_shards_match<float>(exe(x, which(0))[0], val)) << "call " << rep;
}

// ---- 64 devices on 2 cores, without spinning

TEST(ManyDevices, SixtyThreeParkedDevicesDoNotSpin) {
  Watchdog dog(kTestLimit, "64 devices parked");
  Runtime rt(RuntimeOptions{.workers = 2});
  constexpr int n = 64;
  constexpr int iters = kSanitized ? 30000 : 300000;  // ~0.1-0.3 s of interpreted compute on device 0
  auto exe = kernel([](VmemRef<const float, 256> x, VmemRef<float, 256> y) {
               run_scoped([&](RegularSemaphore go) {
                 when(axis_index("x") == 0, [&] {
                   auto v = fori_loop(
                       0, iters, [](Scalar<std::int32_t>, Value<float, extents<256>> acc) { return acc * 0.5f + 1.0f; },
                       x.load());
                   y.store(v);
                   fori_loop(1, axis_size("x"), [&](Scalar<std::int32_t> d) { semaphore_signal(go, 1, d); });
                 });
                 when(axis_index("x") != 0, [&] {
                   semaphore_wait(go, 1);
                   y.store(x.load() + 1.0f);
                 });
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  const Array x = Array::generate<float>(n, Shape{256}, [](int d, std::int64_t) { return static_cast<float>(d); }, rt);
  const StatsDelta delta(rt);
  const double cpu0 = process_cpu_seconds();
  std::vector<Array> out;
  const double wall = seconds_of([&] {
    out = exe(x);
    out[0].block_until_ready();
  });
  const double cpu = process_cpu_seconds() - cpu0;
  EXPECT_TRUE(all_shards_match<float>(out[0], [](int d, std::int64_t) { return d == 0 ? 2.0f : d + 1.0f; }));
  EXPECT_GE(delta.get().parks, n - 1) << "every waiting device parks";
  EXPECT_LE(delta.get().parks, delta.get().wakeups) << "every park ends with a wake-up";
  RecordProperty("wall_seconds", std::to_string(wall));
  RecordProperty("cpu_seconds", std::to_string(cpu));
  // Spinning waiters would keep both workers (and the waiting host thread)
  // busy: CPU ~2-3x wall. Parked ones leave ~1x (device 0's compute).
  if (!kSanitized && wall > 0.05) {
    EXPECT_LT(cpu, 1.5 * wall) << "cpu " << cpu << " s over wall " << wall << " s";
  }
}

// ---- a waiting host thread does the transport's work (WorkerPool::set_host_helper)

TEST(HostHelper, DrivesWhileBusyAndHandsBackWhenIdleOrDone) {
  using namespace std::chrono_literals;
  Watchdog dog(kTestLimit, "host helper");
  Event inner, finished;  // set by a worker: they outlive the pool, which joins it
  WorkerPool pool(1);
  std::atomic<bool> busy{true};
  std::atomic<int> calls{0}, from_worker{0}, done{0};
  pool.set_host_helper(
      [&] {
        ++calls;
        if (pool.worker_index() >= 0) ++from_worker;
        return busy.load();
      },
      [&] { ++done; });
  const auto set_after = [](Event& e, std::chrono::milliseconds ms, std::exception_ptr error = nullptr) {
    return std::thread([&e, ms, error] {
      std::this_thread::sleep_for(ms);
      e.set(error);
    });
  };
  {  // A busy transport: the host drives it until the event, then hands it back once.
    Event e;
    std::thread t = set_after(e, 30ms);
    e.wait(&pool);
    t.join();
    EXPECT_GT(calls.load(), 1);
    EXPECT_EQ(done.load(), 1);
  }
  {  // An error ends the wait with an exception: the transport is handed back all the same.
    Event e;
    std::thread t = set_after(e, 10ms, std::make_exception_ptr(RuntimeError("refx: boom")));
    EXPECT_THROW(e.wait(&pool), RuntimeError);
    t.join();
    EXPECT_EQ(done.load(), 2);
  }
  {  // An idle transport is handed back after polling briefly, long before the event.
    busy = false;
    Event e;
    std::thread t = set_after(e, 50ms);
    e.wait(&pool);
    t.join();
    EXPECT_EQ(done.load(), 3);
  }
  {  // A worker waiting for an event (a launch's inputs) never drives the transport.
    busy = true;
    pool.push([&] {
      inner.wait(&pool);
      finished.set();
    });
    std::this_thread::sleep_for(10ms);
    inner.set();
    finished.wait();
    EXPECT_EQ(from_worker.load(), 0);
  }
}

// ---- dispatch

TEST(Dispatch, CallsReturnBeforeTheKernelFinishes) {
  Watchdog dog(kTestLimit, "async dispatch");
  Runtime rt(RuntimeOptions{.workers = 2});
  auto exe = kernel([](VmemRef<const float, 64> x, VmemRef<float, 64> y) {
               y.store(fori_loop(
                   0, kSanitized ? 20000 : 200000, [](Scalar<std::int32_t>, Value<float, extents<64>> a) { return a * 0.5f + 1.0f; }, x.load()));
             })
                 .compile(Mesh{{"x", 2}}, {}, rt);
  const Array x = Array::generate<float>(2, Shape{64}, [](int, std::int64_t) { return 0.0f; }, rt);
  std::vector<Array> out;
  double dispatch = 0, total = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {  // a preempted host thread may stall one dispatch
    dispatch = seconds_of([&] { out = exe(x); });
    total = dispatch + seconds_of([&] { out[0].block_until_ready(); });
    if (dispatch < total / 4) break;
  }
  EXPECT_LT(dispatch, total / 4) << "dispatch " << dispatch << " s, total " << total << " s";
  EXPECT_TRUE(all_shards_match<float>(out[0], [](int, std::int64_t) { return 2.0f; }));
}

// In-place updates by two different executables, interleaved and dispatched
// back to back: each launch sees all writes of the launches before it.
TEST(Dispatch, LaunchesRunInDispatchOrder) {
  Watchdog dog(kTestLimit, "dispatch order");
  Runtime rt(RuntimeOptions{.workers = 2, .shuffle_seed = 5});
  const Mesh mesh{{"x", 4}};
  auto add1 = kernel([](VmemRef<std::int32_t, 16> y) { y.store(y.load() + 1); }).compile(mesh, {}, rt);
  auto times3 = kernel([](VmemRef<std::int32_t, 16> y) { y.store(y.load() * 3); }).compile(mesh, {}, rt);
  Array y = Array::generate<std::int32_t>(4, Shape{16}, [](int d, std::int64_t) { return d; }, rt);
  std::vector<std::int64_t> want{0, 1, 2, 3};
  for (int k = 0; k < 30; ++k) {
    (k % 3 == 2 ? times3 : add1).call_in_place({y});  // not waited: queued behind the previous call
    for (auto& w : want) w = k % 3 == 2 ? w * 3 : w + 1;
  }
  ASSERT_LT(want[3], std::int64_t{1} << 31);
  for (int d = 0; d < 4; ++d) EXPECT_EQ(y.to_host<std::int32_t>(d)[7], static_cast<std::int32_t>(want[static_cast<std::size_t>(d)]));
}

// Several host threads dispatch to one runtime at once.
TEST(Dispatch, ConcurrentHostThreads) {
  Watchdog dog(kTestLimit, "concurrent host threads");
  Runtime rt(RuntimeOptions{.workers = 2});
  const int n = 4;
  auto exe = kernel([](HbmRef<const float, 32> x, HbmRef<float, 32> y) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, right);
                 c.start();
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Array a = Array::generate<float>(n, Shape{32}, [t](int d, std::int64_t i) { return static_cast<float>(1000 * t + 10 * d + i); }, rt);
      for (int k = 1; k <= 25; ++k) {
        a = exe(a)[0];
        if (k % 5 == 0)
          for (int d = 0; d < n; ++d)
            if (a.to_host<float>(d)[3] != static_cast<float>(1000 * t + 10 * mod(d - k, n) + 3)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(rt.launches(), 100);
}

// An Array produced on one runtime and consumed by a kernel on another: the
// consumer must see the producer's result.
TEST(Dispatch, InputFromAnotherRuntime) {
  Watchdog dog(kTestLimit, "cross-runtime input");
  Runtime producer_rt(RuntimeOptions{.workers = 1}), consumer_rt(RuntimeOptions{.workers = 1});
  auto slow = kernel([](VmemRef<const float, 64> x, VmemRef<float, 64> y) {
                y.store(fori_loop(
                            0, kSanitized ? 10000 : 100000, [](Scalar<std::int32_t>, Value<float, extents<64>> a) { return a * 0.5f + 1.0f; },
                            x.load()) +
                        5.0f);
              })
                  .compile(Mesh{{"x", 1}}, {}, producer_rt);
  auto copy = kernel([](VmemRef<const float, 64> x, VmemRef<float, 64> y) { y.store(x.load()); })
                  .compile(Mesh{{"x", 1}}, {}, consumer_rt);
  const Array x = Array::generate<float>(1, Shape{64}, [](int, std::int64_t) { return 0.0f; }, producer_rt);
  auto mid = slow(x)[0];
  auto out = copy(mid)[0];
  EXPECT_EQ(out.to_host<float>(0)[0], 7.0f) << "the consumer must wait for its input from the other runtime";
  EXPECT_EQ(mid.to_host<float>(0)[0], 7.0f);
}

// A call that overwrites an Array on one runtime while a kernel of another
// runtime still reads it: the writer must wait for the reader, which computes
// from the value it was given. (The reader reads x only after a loop, through
// a slice whose start depends on the loop's result.)
TEST(Dispatch, WriterWaitsForAReaderOnAnotherRuntime) {
  Watchdog dog(kTestLimit, "cross-runtime reader");
  Runtime reader_rt(RuntimeOptions{.workers = 1}), writer_rt(RuntimeOptions{.workers = 1});
  static constexpr std::int32_t kIters = kSanitized ? 20000 : 200000;
  auto reader = kernel([](VmemRef<const float, 64> x, VmemRef<float, 64> y) {
                  const auto k = fori_loop(0, kIters, [](Scalar<std::int32_t>, Scalar<std::int32_t> c) { return c + 1; },
                                           Scalar<std::int32_t>(0));
                  y.store(x.at(ds(k - kIters, 64)).load() + 1.0f);
                })
                    .compile(Mesh{{"x", 1}}, {}, reader_rt);
  auto writer = kernel([](VmemRef<float, 64> x) { x.store(full<float, 64>(100.0f)); })
                    .compile(Mesh{{"x", 1}}, {}, writer_rt);
  Array x = Array::generate<float>(1, Shape{64}, [](int, std::int64_t i) { return static_cast<float>(i); }, reader_rt);
  const auto y = reader(x)[0];
  writer.call_in_place({x});
  const auto got = y.to_host<float>(0);
  for (std::int64_t i = 0; i < 64; ++i)
    ASSERT_EQ(got[static_cast<std::size_t>(i)], static_cast<float>(i) + 1.0f)
        << "the reader saw the other runtime's write at element " << i;
  EXPECT_EQ(x.to_host<float>(0)[5], 100.0f);
}

}  // namespace
