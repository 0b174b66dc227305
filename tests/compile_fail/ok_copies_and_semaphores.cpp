// Positive control: the legitimate counterparts of the semaphore, copy,
// kernel-builder and refx::extend negative tests compile.
#include <cstdint>
#include <source_location>

#include <refx/extend.hpp>
#include <refx/kernel.hpp>
#include <refx/refx.hpp>

using namespace refx;

void legitimate_semaphores_and_copies() {
  trace([](HbmRef<const float, 2, 128> x, HbmRef<float, 2, 128> out, SmemRef<std::int32_t> count) {
    run_scoped([&](VmemRef<float, 2, 128> tile, DmaSemaphore sem, DmaSemaphores<2> row_sems,
                   RegularSemaphores<4> ready, RegularSemaphore one) {
      // Local copies: a descriptor on one DMA semaphore, or sync_copy.
      auto c = make_async_copy(x, tile, sem);
      c.start();
      c.wait();
      for (int r = 0; r < 2; ++r) {
        auto rc = make_async_copy(x.at(r, all), tile.at(r, all), row_sems.at(r));
        rc.start(accumulate);
        rc.wait_recv();
      }
      tile.store(tile.load() * 0.5f);
      sync_copy(tile, out);
      sync_copy(x.at(ds<1>(0), all), tile.at(ds<1>(1), all));
      // A copy completing on a REGULAR semaphore (v6e and later): it rises by 1, waited with semaphore_wait.
      async_copy(tile, out, one);
      semaphore_wait(one);

      // Regular semaphores: one semaphore, or one element of an array.
      semaphore_signal(one);
      semaphore_wait(one);
      semaphore_signal(ready.at(1), 2);
      semaphore_wait(ready.at(1), 2);
      count.store(semaphore_read(ready.at(0)) + semaphore_read(one));
    });
  });
}

void legitimate_remote_copy() {
  const Mesh mesh{{"x", 4}};
  auto exe = kernel([](HbmRef<const float, 128> x, HbmRef<float, 128> y) {
               run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
                 auto right = (axis_index("x") + 1) % axis_size("x");
                 auto c = make_async_remote_copy(x, y, send, recv, DeviceId::named({{"x", right}}));
                 c.start();
                 c.wait_send();
                 c.wait_recv();
               });
             })
                 .name("right_permute")
                 .compile(mesh);
  (void)exe;
}

void legitimate_extend() {
  Graph g = trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8> y) {
    const auto here = refx::source_location::current();
    auto v = x.load();
    auto two = extend::bind<float, extents<8, 128>>(prim::mul, v, Scalar<float>(2.0f) + full<float, 8, 128>(0.0f), here);
    y.store(extend::bind<float, extents<8>>(prim::reduce_sum, two, extend::Attrs{1}));
  });
  int n = 0;
  extend::for_each_op(g, [&](OpId, const Op& op, int) { n += op.prim == &prim::load ? 1 : 0; });
  auto loads = extend::find_ops(g, [](const Op& op) { return op.prim == &prim::load; });
  auto stores = extend::find_ops(g, [](OpId, const Op& op) { return op.prim == &prim::store; });
  (void)loads;
  (void)stores;
  (void)n;
}
