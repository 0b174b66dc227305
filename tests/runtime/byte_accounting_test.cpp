// DMA semaphores count bytes: several copies add up on one semaphore and one
// larger wait absorbs them; one copy can be absorbed by several smaller
// waits; semaphore_read shows the count; and the runtime's counters
// (Runtime::totals) add up exactly the bytes and copies the kernels moved.

#include <gtest/gtest.h>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 64;
constexpr std::int64_t kSlots = 8;  // >= every device count tested
using In = HbmRef<const float, kBlock>;
using Slots = HbmRef<float, kSlots, kBlock>;
using Counts = VmemRef<std::int32_t, 4>;

class ByteAccounting : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, ByteAccounting, device_counts(), DeviceCountName{});

// k = n senders each put one block into their own slot of device 0's buffer,
// all on device 0's one `recv` semaphore. Device 0 learns that they all
// finished (each sender signals after its wait_send: by then the bytes have
// landed), reads recv (= n blocks of bytes), waits once with a descriptor of
// n blocks, and reads it again (0).
TEST_P(ByteAccounting, OneWaitAbsorbsSeveralCopies) {
  Watchdog dog(kTestLimit, "one wait absorbs several copies");
  const int n = GetParam();
  Runtime rt;
  const StatsDelta delta(rt);
  auto exe = kernel([n](In x, Slots slots, Counts counts) {
               auto me = axis_index("x");
               run_scoped([&](RegularSemaphore arrived, DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, slots.at(me), send, recv, 0);
                 c.start();
                 c.wait_send();
                 counts.at(2).store(semaphore_read(send));  // 0 again after the wait
                 semaphore_signal(arrived, 1, 0);
                 counts.at(0).store(-1);
                 counts.at(1).store(-1);
                 counts.at(3).store(-1);
                 when(me == 0, [&] {
                   semaphore_wait(arrived, n);
                   counts.at(3).store(semaphore_read(arrived));
                   counts.at(0).store(semaphore_read(recv));
                   make_async_copy(slots.at(ds(0, n)), slots.at(ds(0, n)), recv).wait_recv();
                   counts.at(1).store(semaphore_read(recv));
                 });
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto out = exe(Array::generate<float>(n, Shape{kBlock}, tag, rt));
  const auto counts0 = out[1].to_host<std::int32_t>(0);
  EXPECT_EQ(counts0[0], n * kBlock * 4) << "recv on device 0 before its wait: n blocks of bytes";
  EXPECT_EQ(counts0[1], 0) << "after one wait of n blocks";
  EXPECT_EQ(counts0[2], 0);
  EXPECT_EQ(counts0[3], 0);
  const auto slots0 = out[0].to_host<float>(0);
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < kBlock; ++i)
      ASSERT_EQ(slots0[static_cast<std::size_t>(d * kBlock + i)], tag(d, i)) << "slot " << d;
  EXPECT_EQ(delta.get().copies, n);
  EXPECT_EQ(delta.get().bytes_copied, n * kBlock * 4);
  EXPECT_EQ(delta.launches(), 1);
}

// The converse: one copy of two blocks, absorbed by two waits of one block.
TEST_P(ByteAccounting, TwoSmallerWaitsAbsorbOneCopy) {
  Watchdog dog(kTestLimit, "two waits absorb one copy");
  const int n = GetParam();
  auto exe = kernel([](HbmRef<const float, 2, kBlock> x, HbmRef<float, 2, kBlock> y, Counts counts) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               auto left = (axis_index("x") + axis_size("x") - 1) % axis_size("x");
               run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                 semaphore_signal(ready, 1, left);
                 semaphore_wait(ready, 1);
                 auto whole = make_async_remote_copy(x, y, send, recv, right);
                 auto half = make_async_remote_copy(x.at(0), y.at(0), send, recv, right);
                 whole.start();
                 half.wait_send();
                 counts.at(0).store(semaphore_read(send));  // the other half's bytes are still there
                 half.wait_send();
                 half.wait_recv();
                 counts.at(1).store(semaphore_read(recv));  // the whole copy landed at once: one half left
                 half.wait_recv();
                 counts.at(2).store(semaphore_read(recv));
                 counts.at(3).store(semaphore_read(send));
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe(Array::generate<float>(n, Shape{2, kBlock}, tag));
  EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(mod(d - 1, n), i); }));
  for (int d = 0; d < n; ++d) {
    const auto c = out[1].to_host<std::int32_t>(d);
    EXPECT_EQ(c[0], kBlock * 4) << "device " << d;
    EXPECT_EQ(c[1], kBlock * 4) << "device " << d;
    EXPECT_EQ(c[2], 0) << "device " << d;
    EXPECT_EQ(c[3], 0) << "device " << d;
  }
}

// One receive semaphore per slot (an array of DMA semaphores): device 0 reads
// and waits every slot's semaphore separately.
TEST_P(ByteAccounting, SemaphoreArrayOneSlotPerSender) {
  Watchdog dog(kTestLimit, "semaphore array");
  const int n = GetParam();
  auto exe = kernel([n](In x, Slots slots, VmemRef<std::int32_t, kSlots> counts) {
               auto me = axis_index("x");
               run_scoped([&](RegularSemaphore arrived, DmaSemaphore send, DmaSemaphores<kSlots> recv) {
                 auto c = make_async_remote_copy(x, slots.at(me), send, recv.at(me), 0);
                 c.start();
                 c.wait_send();
                 semaphore_signal(arrived, 1, 0);
                 counts.store(-1);
                 when(me == 0, [&] {
                   semaphore_wait(arrived, n);
                   for (int s = 0; s < n; ++s) {
                     counts.at(s).store(semaphore_read(recv.at(s)));
                     make_async_copy(slots.at(s), slots.at(s), recv.at(s)).wait_recv();
                   }
                 });
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe(Array::generate<float>(n, Shape{kBlock}, tag));
  const auto c = out[1].to_host<std::int32_t>(0);
  for (int s = 0; s < n; ++s) EXPECT_EQ(c[static_cast<std::size_t>(s)], kBlock * 4) << "slot " << s;
  const auto slots0 = out[0].to_host<float>(0);
  for (int d = 0; d < n; ++d) EXPECT_EQ(slots0[static_cast<std::size_t>(d * kBlock + 5)], tag(d, 5));
}

// When the receiver's wait_recv has returned, the sender's send semaphore
// already holds the bytes (complete_copy raises recv, then send, in one step).
TEST_P(ByteAccounting, SendSemaphoreRisesWithTheReceive) {
  Watchdog dog(kTestLimit, "send after recv");
  const int n = GetParam();
  auto exe = kernel([](In x, HbmRef<float, kBlock> y, Counts counts) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               auto left = (axis_index("x") + axis_size("x") - 1) % axis_size("x");
               run_scoped([&](RegularSemaphore ready, RegularSemaphore ack, DmaSemaphore send, DmaSemaphore recv) {
                 semaphore_signal(ready, 1, left);
                 semaphore_wait(ready, 1);
                 auto c = make_async_remote_copy(x, y, send, recv, right);
                 c.start();
                 c.wait_recv();                   // my left neighbour's block is here
                 semaphore_signal(ack, 1, left);  // tell it so
                 semaphore_wait(ack, 1);          // my right neighbour has my block
                 counts.at(0).store(semaphore_read(send));
                 c.wait_send();
                 counts.at(1).store(semaphore_read(send));
                 counts.at(2).store(0);
                 counts.at(3).store(0);
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe(Array::generate<float>(n, Shape{kBlock}, tag));
  for (int d = 0; d < n; ++d) {
    const auto c = out[1].to_host<std::int32_t>(d);
    EXPECT_EQ(c[0], kBlock * 4) << "device " << d;
    EXPECT_EQ(c[1], 0) << "device " << d;
  }
}

// Bytes are element size x element count, for every dtype and for strided
// views; Runtime::totals() adds up exactly the copies the kernel made.
TEST_P(ByteAccounting, TotalsAreTheSumOfCopySizes) {
  Watchdog dog(kTestLimit, "totals");
  const int n = GetParam();
  Runtime rt(RuntimeOptions{.workers = 2});
  const StatsDelta delta(rt);
  auto exe = kernel([](HbmRef<const double, 10> a, HbmRef<const std::int64_t, 3, 4> b, HbmRef<const bool, 24> c,
                       HbmRef<const float, 16, 8> d, HbmRef<double, 10> a2, HbmRef<std::int64_t, 3, 4> b2,
                       HbmRef<bool, 24> c2, HbmRef<float, 8, 8> d2) {
               auto right = (axis_index("x") + 1) % axis_size("x");
               auto left = (axis_index("x") + axis_size("x") - 1) % axis_size("x");
               run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv, DmaSemaphore send2,
                              DmaSemaphore recv2, DmaSemaphore local) {
                 semaphore_signal(ready, 1, left);
                 semaphore_wait(ready, 1);
                 sync_copy(a, a2);                                            // 80 bytes, local
                 auto rb = make_async_remote_copy(b, b2, send, recv, right);  // 96 bytes, remote
                 rb.start();
                 auto lc = make_async_copy(c, c2, local);  // 24 bytes, bool
                 lc.start();
                 // Every other row: a strided source view, 8 rows x 8 floats = 256 bytes.
                 auto rd = make_async_remote_copy(d.at(ds(0, 8, 2)), d2, send2, recv2, right);
                 rd.start();
                 lc.wait();
                 rb.wait();
                 rd.wait();
               });
             })
                 .compile(Mesh{{"x", n}}, {}, rt);
  auto a = Array::generate<double>(n, Shape{10}, [](int dev, std::int64_t i) { return dev + 0.5 * static_cast<double>(i); }, rt);
  auto b = Array::generate<std::int64_t>(n, Shape{3, 4}, [](int dev, std::int64_t i) { return (std::int64_t{dev} << 40) + i; }, rt);
  auto c = Array::generate<bool>(n, Shape{24}, [](int dev, std::int64_t i) { return (i + dev) % 3 == 0; }, rt);
  auto d = Array::generate<float>(n, Shape{16, 8}, tag, rt);
  auto out = exe(a, b, c, d);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(all_shards_match<double>(out[0], [](int dev, std::int64_t i) { return dev + 0.5 * static_cast<double>(i); }));
  EXPECT_TRUE(all_shards_match<std::int64_t>(out[1], [&](int dev, std::int64_t i) {
    return (std::int64_t{mod(dev - 1, n)} << 40) + i;
  }));
  EXPECT_TRUE(all_shards_match<bool>(out[2], [](int dev, std::int64_t i) { return (i + dev) % 3 == 0; }));
  EXPECT_TRUE(all_shards_match<float>(out[3], [&](int dev, std::int64_t i) {
    return tag(mod(dev - 1, n), (i / 8) * 16 + i % 8);
  }));
  const LaunchStats s = delta.get();
  EXPECT_EQ(s.copies, 4 * n);
  EXPECT_EQ(s.bytes_copied, n * (80 + 96 + 24 + 256));
  // A second call adds the same again.
  out = exe(a, b, c, d);
  out[0].block_until_ready();
  EXPECT_EQ(delta.get().copies, 8 * n);
  EXPECT_EQ(delta.get().bytes_copied, 2 * n * (80 + 96 + 24 + 256));
  EXPECT_EQ(delta.launches(), 2);
}

// A semaphore_read of a REGULAR semaphore signalled several times by peers.
TEST_P(ByteAccounting, ReadShowsAccumulatedSignals) {
  Watchdog dog(kTestLimit, "semaphore_read of signals");
  const int n = GetParam();
  auto exe = kernel([n](Counts counts) {
               run_scoped([&](RegularSemaphore hello, RegularSemaphore done) {
                 // Every device adds 5 to every device's `hello` (itself included).
                 for (int d = 0; d < n; ++d) semaphore_signal(hello, 5, d);
                 for (int d = 0; d < n; ++d) semaphore_signal(done, 1, d);
                 semaphore_wait(done, n);  // every peer has signalled me
                 counts.at(0).store(semaphore_read(hello));
                 semaphore_wait(hello, 5 * n - 1);
                 counts.at(1).store(semaphore_read(hello));
                 semaphore_wait(hello, 1);
                 counts.at(2).store(semaphore_read(hello));
                 counts.at(3).store(semaphore_read(done));
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe();
  EXPECT_TRUE(all_shards_match<std::int32_t>(out[0], [&](int, std::int64_t i) {
    return i == 0 ? 5 * n : i == 1 ? 1 : 0;
  }));
}

}  // namespace
