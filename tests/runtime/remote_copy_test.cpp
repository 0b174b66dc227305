// Remote copies on the threaded runtime: right permute with a neighbour
// barrier (1..8 and 64 devices), permutes by arbitrary shifts, LOGICAL, MESH
// and named device ids on 1-D and 2-D meshes, copies to self, and chains of
// asynchronously dispatched calls.

#include <gtest/gtest.h>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;

constexpr std::int64_t kBlock = 256;
using In = HbmRef<const float, kBlock>;
using Out = HbmRef<float, kBlock>;

/// Every device sends its block to (me + shift) mod N, after a handshake on
/// the kernel's barrier semaphore with the two devices it talks to (the
/// neighbour barrier of pallas-semantics b.7 for shift 1).
Executable permute(int devices, int shift, Runtime& rt = Runtime::global()) {
  const int s = mod(shift, devices);
  return kernel([s](In x, Out y) {
           auto me = axis_index("x");
           auto n = axis_size("x");
           auto target = (me + s) % n;
           auto source = (me + n - s) % n;
           auto barrier = get_barrier_semaphore();
           semaphore_signal(barrier, 1, source);  // I am ready to receive from you
           semaphore_signal(barrier, 1, target);  // I am about to send to you
           semaphore_wait(barrier, 2);
           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             auto c = make_async_remote_copy(x, y, send, recv, target);
             c.start();
             c.wait();
           });
         })
      .name("permute")
      .collective_id(0)
      .compile(Mesh{{"x", devices}}, {}, rt);
}

Array tagged(int devices) { return Array::generate<float>(devices, Shape{kBlock}, tag); }

class RemoteCopy : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, RemoteCopy, device_counts(), DeviceCountName{});

TEST_P(RemoteCopy, RightPermuteWithNeighbourBarrier) {
  Watchdog dog(kTestLimit, "right permute");
  const int n = GetParam();
  const StatsDelta delta;
  auto out = permute(n, 1)(tagged(n));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(mod(d - 1, n), i); }));
  EXPECT_EQ(delta.get().copies, n);
  EXPECT_EQ(delta.get().bytes_copied, n * kBlock * 4);
}

TEST_P(RemoteCopy, PermuteByAnyShift) {
  Watchdog dog(kTestLimit, "permute by shift");
  const int n = GetParam();
  const Array x = tagged(n);
  for (int shift : {0, 1, -1, 2, 3, -3, n - 1, n, n + 2, -2 * n - 1}) {
    auto out = permute(n, shift)(x);
    EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(mod(d - shift, n), i); }))
        << "shift " << shift;
  }
}

TEST_P(RemoteCopy, RepeatedCallsAndChainedDispatch) {
  Watchdog dog(kTestLimit, "chained permutes");
  const int n = GetParam();
  const Executable exe = permute(n, 1);
  // Dispatch returns at once; each call consumes the previous call's future.
  std::vector<Array> chain{tagged(n)};
  for (int k = 0; k < 2 * n + 3; ++k) chain.push_back(exe(chain.back())[0]);
  for (std::size_t k = 0; k < chain.size(); ++k)
    ASSERT_TRUE(all_shards_match<float>(chain[k], [&](int d, std::int64_t i) {
      return tag(mod(d - static_cast<int>(k), n), i);
    })) << "after " << k << " permutes";
}

// A copy whose target is the sending device itself (device id == me).
TEST_P(RemoteCopy, CopyToSelfWithLogicalId) {
  Watchdog dog(kTestLimit, "copy to self");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, axis_index("x"));
                 c.start();
                 c.wait_send();
                 c.wait_recv();
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  EXPECT_TRUE(all_shards_match<float>(out[0], [](int d, std::int64_t i) { return tag(d, i); }));
}

// LOGICAL ids computed on the device: the mirror permutation d -> n-1-d, with
// a REGULAR "ready" handshake (the mirror is its own inverse).
TEST_P(RemoteCopy, MirrorWithLogicalIds) {
  Watchdog dog(kTestLimit, "mirror");
  const int n = GetParam();
  auto exe = kernel([](In x, Out y) {
               auto peer = axis_size("x") - 1 - axis_index("x");
               run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                 semaphore_signal(ready, 1, DeviceId(peer));
                 semaphore_wait(ready, 1);
                 auto c = make_async_remote_copy(x, y, send, recv, DeviceId(peer));
                 c.start();
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(n - 1 - d, i); }));
}

// Constant LOGICAL ids: every device sends its block into slot `me` of device
// 0's gather buffer (signals to device 0 by literal id), and device 0 sends
// the gathered buffer back to the last device.
TEST_P(RemoteCopy, ConstantLogicalIds) {
  Watchdog dog(kTestLimit, "constant logical ids");
  const int n = GetParam();
  auto exe = kernel([n](In x, HbmRef<float, 8, kBlock> gathered, HbmRef<float, 8, kBlock> back) {
               auto me = axis_index("x");
               run_scoped([&](RegularSemaphore arrived, DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, gathered.at(me), send, recv, 0);
                 c.start();
                 c.wait_send();
                 semaphore_signal(arrived, 1, 0);
                 when(me == 0, [&] {
                   semaphore_wait(arrived, n);
                   // One wait for the n blocks that landed here.
                   make_async_copy(gathered.at(ds(0, n)), gathered.at(ds(0, n)), recv).wait_recv();
                   auto r = make_async_remote_copy(gathered, back, send, recv, n - 1);
                   r.start();
                   r.wait_send();
                 });
                 when(me == n - 1, [&] {
                   make_async_copy(gathered, back, recv).wait_recv();
                 });
               });
             })
                 .compile(Mesh{{"x", n}});
  auto out = exe(tagged(n));
  const auto g0 = out[0].to_host<float>(0);
  const auto back = out[1].to_host<float>(n - 1);
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < kBlock; ++i) {
      ASSERT_EQ(g0[static_cast<std::size_t>(d * kBlock + i)], tag(d, i)) << "slot " << d;
      ASSERT_EQ(back[static_cast<std::size_t>(d * kBlock + i)], tag(d, i)) << "slot " << d;
    }
}

// ---- 2-D meshes: y rows of x devices. Device (y, x) has logical id y*X + x.

struct Mesh2 {
  int y, x;
};
Mesh2 mesh2_for(int n) { return n == 1 ? Mesh2{1, 1} : Mesh2{2, n / 2}; }

enum class IdForm { mesh_tuple, named, logical };

/// Every device sends to its right neighbour along x only (own row), naming
/// the target in the given form.
Executable along_x(Mesh2 m, IdForm form) {
  return kernel([form](In x, Out y) {
           auto yi = axis_index("y");
           auto xi = axis_index("x");
           auto xs = axis_size("x");
           auto xr = (xi + 1) % xs;
           auto xl = (xi + xs - 1) % xs;
           const DeviceId right = form == IdForm::mesh_tuple ? DeviceId::mesh({yi, xr})
                                  : form == IdForm::named    ? DeviceId::named({{"x", xr}})
                                                             : DeviceId(yi * xs + xr);
           const DeviceId left = form == IdForm::mesh_tuple ? DeviceId::mesh({yi, xl})
                                 : form == IdForm::named    ? DeviceId::named({{"x", xl}})
                                                            : DeviceId(yi * xs + xl);
           run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
             semaphore_signal(ready, 1, left);
             semaphore_wait(ready, 1);
             auto c = make_async_remote_copy(x, y, send, recv, right);
             c.start();
             c.wait();
           });
         })
      .compile(Mesh{{"y", m.y}, {"x", m.x}});
}

class Mesh2D : public ::testing::TestWithParam<int> {};
INSTANTIATE_TEST_SUITE_P(Devices, Mesh2D, device_counts(), DeviceCountName{});

TEST_P(Mesh2D, ExchangeAlongXWithEveryIdForm) {
  Watchdog dog(kTestLimit, "2-D exchange");
  const int n = GetParam();
  const Mesh2 m = mesh2_for(n);
  const Array x = tagged(n);
  for (IdForm f : {IdForm::mesh_tuple, IdForm::named, IdForm::logical}) {
    auto out = along_x(m, f)(x);
    EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) {
      const int yy = d / m.x, xx = d % m.x;
      return tag(yy * m.x + mod(xx - 1, m.x), i);
    })) << "id form " << static_cast<int>(f);
  }
}

// A named id that names only "y": x defaults to the caller's own index, so
// rows swap and columns stay.
TEST_P(Mesh2D, NamedIdDefaultsTheOtherAxis) {
  Watchdog dog(kTestLimit, "named id along y");
  const int n = GetParam();
  const Mesh2 m = mesh2_for(n);
  auto exe = kernel([](In x, Out y) {
               auto other = (axis_index("y") + 1) % axis_size("y");
               run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                 semaphore_signal(ready, 1, DeviceId::named({{"y", other}}));
                 semaphore_wait(ready, 1);
                 auto c = make_async_remote_copy(x, y, send, recv, DeviceId::named({{"y", other}}));
                 c.start();
                 c.wait();
               });
             })
                 .compile(Mesh{{"y", m.y}, {"x", m.x}});
  auto out = exe(tagged(n));
  EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) {
    const int yy = d / m.x, xx = d % m.x;
    return tag(mod(yy + 1, m.y) * m.x + xx, i);
  }));
}

TEST(Mesh2DIds, WrongCoordinateCountIsATraceError) {
  const std::string msg = error_of([] {
    (void)kernel([](In x, Out y) {
      run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
        make_async_remote_copy(x, y, send, recv, DeviceId::mesh({axis_index("x")})).start();
      });
    }).compile(Mesh{{"y", 2}, {"x", 4}});
  });
  EXPECT_NE(msg.find("1 coordinates but the mesh {y=2, x=4} has 2 axes"), std::string::npos) << msg;
}

TEST(Mesh2DIds, UnknownAxisInANamedIdIsATraceError) {
  const std::string msg = error_of([] {
    (void)kernel([](In x, Out y) {
      run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
        make_async_remote_copy(x, y, send, recv, DeviceId::named({{"z", 0}})).start();
      });
    }).compile(Mesh{{"y", 2}, {"x", 4}});
  });
  EXPECT_NE(msg.find("\"z\""), std::string::npos) << msg;
}

// A device id outside the mesh fails the call (naming the device), not the process.
TEST(RemoteCopyErrors, TargetOutsideTheMeshFailsTheCall) {
  Watchdog dog(kTestLimit, "target outside mesh");
  auto exe = kernel([](In x, Out y) {
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 auto c = make_async_remote_copy(x, y, send, recv, axis_index("x") + 1);
                 c.start();
                 c.wait();
               });
             })
                 .compile(Mesh{{"x", 4}});
  auto out = exe(tagged(4));
  const std::string msg = runtime_error_of([&] { out[0].block_until_ready(); });
  EXPECT_NE(msg.find("device 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("copy to device 4 but the mesh has 4 devices"), std::string::npos) << msg;
}

// ---- 64 devices on (typically) 2 cores.

TEST(ManyDevices, RightPermuteOn64DevicesFinishesInSeconds) {
  Watchdog dog(kTestLimit, "64-device permute");
  const int n = 64;
  const Executable exe = permute(n, 1);
  const Array x = tagged(n);
  std::vector<Array> out;
  const double secs = shortest_of(3, time_bound(5.0), [&] {
    for (int rep = 0; rep < 5; ++rep) {
      out = exe(x);
      out[0].block_until_ready();
    }
  });
  EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(mod(d - 1, n), i); }));
  EXPECT_LT(secs, time_bound(5.0)) << "5 calls of a 64-device permute took " << secs << " s";
  RecordProperty("seconds_for_5_calls", std::to_string(secs));
}

TEST(ManyDevices, PermuteOn64DevicesWithOneWorker) {
  Watchdog dog(kTestLimit, "64-device permute, 1 worker");
  Runtime rt(RuntimeOptions{.workers = 1});
  auto out = permute(64, -5, rt)(tagged(64));
  EXPECT_TRUE(all_shards_match<float>(out[0], [&](int d, std::int64_t i) { return tag(mod(d + 5, 64), i); }));
}

// Strided regions copied between two Refs of one device land where both views
// say, and nothing else in the destination changes: a 2-D copy with a stride
// > 1 along every dimension on both sides, and a 3-D block of 2-byte elements
// (a pipeline's block of a larger array) into a whole Ref, then back into a
// block of another array (runtime/detail/copy_job.hpp moves such copies row
// by row, straight from one buffer to the other).
TEST(StridedLocalCopy, LandsWhereBothViewsSay) {
  Watchdog dog(kTestLimit, "strided local copy");
  using I = std::int64_t;
  auto exe = kernel([](HbmRef<const float, 6, 12> x, HbmRef<const bf16, 4, 5, 6> p, HbmRef<float, 5, 9> y,
                       HbmRef<bf16, 2, 3, 4> q, HbmRef<bf16, 3, 4, 7> r) {
               run_scoped([&](DmaSemaphore s) {
                 sync_copy(x.at(ds(1, 3, 2), ds(0, 4, 3)), y.at(ds(1, 3), ds(1, 4, 2)));
                 auto c = make_async_copy(p.at(ds(1, 2, 2), ds(2, 3), ds(1, 4)), q, s);
                 c.start();
                 c.wait();
                 sync_copy(q, r.at(ds(1, 2), ds(0, 3), ds(3, 4)));
               });
             }).compile(Mesh{{"x", 1}});
  const auto xv = [](int, I i) { return static_cast<float>(i) + 0.25f; };
  const auto pv = [](int, I i) { return bf16(static_cast<float>(i)); };
  const auto fill = [](int, I i) { return -1.0f - static_cast<float>(i); };
  const Array x = Array::generate<float>(1, Shape{6, 12}, xv), p = Array::generate<bf16>(1, Shape{4, 5, 6}, pv);
  Array y = Array::generate<float>(1, Shape{5, 9}, fill);
  Array q = Array::generate<bf16>(1, Shape{2, 3, 4}, [&](int d, I i) { return bf16(fill(d, i)); });
  Array r = Array::generate<bf16>(1, Shape{3, 4, 7}, [&](int d, I i) { return bf16(fill(d, i)); });
  exe.call_in_place({x, p, y, q, r});
  const std::vector<float> yh = y.to_host<float>(0);
  for (I i = 0; i < 5; ++i)
    for (I j = 0; j < 9; ++j) {
      const bool written = i >= 1 && i < 4 && j % 2 == 1 && j < 9;
      const float want = written ? xv(0, (1 + 2 * (i - 1)) * 12 + 3 * (j - 1) / 2) : fill(0, i * 9 + j);
      EXPECT_EQ(yh[static_cast<std::size_t>(i * 9 + j)], want) << "y[" << i << ", " << j << "]";
    }
  const std::vector<bf16> qh = q.to_host<bf16>(0), rh = r.to_host<bf16>(0);
  for (I a = 0; a < 2; ++a)
    for (I b = 0; b < 3; ++b)
      for (I c = 0; c < 4; ++c)
        EXPECT_EQ(float(qh[static_cast<std::size_t>((a * 3 + b) * 4 + c)]),
                  float(pv(0, ((1 + 2 * a) * 5 + 2 + b) * 6 + 1 + c)))
            << "q[" << a << ", " << b << ", " << c << "]";
  for (I a = 0; a < 3; ++a)
    for (I b = 0; b < 4; ++b)
      for (I c = 0; c < 7; ++c) {
        const bool written = a >= 1 && b < 3 && c >= 3;
        const I flat = (a * 4 + b) * 7 + c;
        const float want =
            written ? float(pv(0, ((1 + 2 * (a - 1)) * 5 + 2 + b) * 6 + 1 + (c - 3))) : float(bf16(fill(0, flat)));
        EXPECT_EQ(float(rh[static_cast<std::size_t>(flat)]), want) << "r[" << a << ", " << b << ", " << c << "]";
      }
}


// Pallas' one-call forms: pltpu.async_copy / async_remote_copy start the copy
// and return its descriptor; lax.psum(1, "x") is mesh_axis_size("x"), a C++
// integer that unrolls a plain loop (one remote copy per other device here:
// every device's y ends as the sum of the others' tags plus its own).
TEST(RemoteCopyForms, AsyncCopyAndMeshAxisSizeUnrollALoopOverTheDevices) {
  for (int devices : {2, 3, 5}) {
    std::int64_t traced_size = 0;
    const Executable exe = kernel([&](In x, Out y) {
                             const std::int64_t n = mesh_axis_size("x");
                             traced_size = n;
                             const auto me = axis_index("x");
                             run_scoped([&](VmemRef<float, kBlock> acc, VmemRef<float, 8, kBlock> got,
                                            DmaSemaphore local, DmaSemaphores<8> send, DmaSemaphores<8> recv) {
                               async_copy(x, acc, local).wait();
                               // Enter together: nobody writes into a device still outside the kernel.
                               const auto barrier = get_barrier_semaphore();
                               for (std::int64_t s = 1; s < n; ++s)
                                 semaphore_signal(barrier, 1, (me + static_cast<std::int32_t>(s)) % static_cast<std::int32_t>(n));
                               semaphore_wait(barrier, static_cast<std::int32_t>(n - 1));
                               // Step s sends to me + s into its slot s; one slot and semaphore per step.
                               for (std::int64_t s = 1; s < n; ++s) {
                                 const auto target = (me + static_cast<std::int32_t>(s)) % static_cast<std::int32_t>(n);
                                 async_remote_copy(x, got.at(s - 1), send.at(s - 1), recv.at(s - 1), target).wait();
                                 acc += got.at(s - 1).load();
                               }
                               async_copy(acc, y, local).wait();
                             });
                           })
                               .collective_id(0)
                               .compile(Mesh{{"x", devices}});
    EXPECT_EQ(traced_size, devices);
    const Array x = tagged(devices);
    const Array y = exe(x)[0];
    std::vector<float> want(kBlock, 0.0f);
    for (int d = 0; d < devices; ++d) {
      const std::vector<float> xd = x.to_host<float>(d);
      for (std::int64_t i = 0; i < kBlock; ++i) want[static_cast<std::size_t>(i)] += xd[static_cast<std::size_t>(i)];
    }
    for (int d = 0; d < devices; ++d) EXPECT_EQ(y.to_host<float>(d), want) << "device " << d << " of " << devices;
  }
}

TEST(RemoteCopyForms, MeshAxisSizeWithoutAMeshIsATraceError) {
  EXPECT_TRUE(throws_with<TraceError>([] { (void)trace([](In, Out) { (void)mesh_axis_size("x"); }); },
                                      {"mesh_axis_size(\"x\") needs the mesh", "remote_copy_test.cpp"}));
}
}  // namespace
