// Ordering through data across Runtimes (docs/runtime.md, "Ordering through
// data"): a launch that writes an Array waits for the unfinished launches
// that read it (write-after-read) and for the one that produces it
// (read-after-write, write-after-write), whichever Runtime they run on.
// Deterministic: the first launch holds in an io_callback until the second
// was dispatched, then gives the second a bounded chance to run early; a
// runtime that orders correctly makes that chance pass unused.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;
using namespace std::chrono_literals;

/// A flag set once, waited for with a deadline (every wait can fail).
class Flag {
 public:
  void set() {
    {
      std::lock_guard lock(mutex_);
      set_ = true;
    }
    cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

/// How long a held launch gives the other one to run out of order: long
/// enough for an unordered writer to finish many times over on any machine.
constexpr auto kChance = 400ms;

struct Probe {
  Flag dispatched;  // the host dispatched the second launch
  Flag written;     // the second launch wrote x
  bool held = false;
};

/// Traced into the first launch: holds it until the second one was
/// dispatched, then gives that one kChance to run early.
void hold(Probe& p) {
  io_callback([&p] {
    p.held = p.dispatched.wait_for(kTestLimit / 2);
    (void)p.written.wait_for(kChance);  // a correct runtime lets this time out
  });
}

/// The second launch: writes `value` into x, then says so.
Executable writer_of(float value, Probe& p, Runtime& rt) {
  return kernel([&p, value](VmemRef<float, 16> x) {
           x.store(full<float, 16>(value));
           io_callback([&p] { p.written.set(); });
         })
      .name("writer")
      .compile(Mesh{{"x", 1}}, {}, rt);
}

// A reader of x on one Runtime, a writer of x (call_in_place) on another,
// dispatched while the reader runs: the writer must wait, and the reader
// computes from the value it was given.
TEST(DataOrdering, WriteAfterReadAcrossRuntimes) {
  Watchdog dog(kTestLimit, "write after read");
  Runtime reader_rt(RuntimeOptions{.workers = 2}), writer_rt(RuntimeOptions{.workers = 2});
  Probe p;
  auto reader = kernel([&p](VmemRef<const float, 16> x, VmemRef<float, 16> y) {
                  hold(p);
                  y.store(x.load() + 1.0f);
                })
                    .name("reader")
                    .compile(Mesh{{"x", 1}}, {}, reader_rt);
  auto writer = writer_of(100.0f, p, writer_rt);
  Array x = Array::generate<float>(1, Shape{16}, [](int, std::int64_t i) { return static_cast<float>(i); }, reader_rt);
  const Array y = reader(x)[0];
  writer.call_in_place({x});
  p.dispatched.set();
  const auto got = y.to_host<float>(0);
  ASSERT_TRUE(p.held) << "the reader never saw the writer dispatched";
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], static_cast<float>(i) + 1.0f) << "the reader saw the other runtime's write at element " << i;
  EXPECT_EQ(x.to_host<float>(0)[3], 100.0f) << "the writer ran after the reader";
  EXPECT_TRUE(p.written.wait_for(kTestLimit / 2));
}

// Two writers of x on two Runtimes: the second's value is the one that stays
// (write-after-write), and a reader on a third Runtime sees it (read-after-write).
TEST(DataOrdering, WriteAfterWriteAndReadAfterWriteAcrossRuntimes) {
  Watchdog dog(kTestLimit, "write after write");
  Runtime a(RuntimeOptions{.workers = 2}), b(RuntimeOptions{.workers = 2}), c(RuntimeOptions{.workers = 1});
  Probe p;
  auto first = kernel([&p](VmemRef<float, 16> x) {
                 hold(p);
                 x.store(full<float, 16>(1.0f));
               })
                   .name("first")
                   .compile(Mesh{{"x", 1}}, {}, a);
  auto second = writer_of(2.0f, p, b);
  auto plus_one = kernel([](VmemRef<const float, 16> x, VmemRef<float, 16> y) { y.store(x.load() + 1.0f); })
                      .compile(Mesh{{"x", 1}}, {}, c);
  Array x = Array::generate<float>(1, Shape{16}, [](int, std::int64_t) { return 0.0f; }, a);
  first.call_in_place({x});
  second.call_in_place({x});
  const Array y = plus_one(x)[0];
  p.dispatched.set();
  const auto got = y.to_host<float>(0);
  ASSERT_TRUE(p.held);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], 3.0f) << "element " << i;
  EXPECT_EQ(x.to_host<float>(0)[0], 2.0f) << "the later writer's value stays";
}

}  // namespace
