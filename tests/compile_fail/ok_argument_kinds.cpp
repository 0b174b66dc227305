// Positive control for issue 25's argument checks: the legitimate neighbours
// of the misuses (exact integers of any width up to 32 bits for device ids,
// counts and bounds; axis names as literals, std::string and std::string_view;
// Values (not Refs) in Value ops; bool Scalar conditions; correct loop bodies;
// typed copies with accumulate on numbers; collectives with fitting outputs).
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

using namespace refx;

void near_misses() {
  const std::string axis = "x";
  const std::string_view axis_view = "x";
  const char* axis_ptr = "x";
  trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y, VmemRef<float, 4, 128> gathered,
            DoubleBuffer<float, 128> buf, SmemRef<std::int32_t> flag) {
    const std::int16_t small = 1;
    const std::uint8_t tiny = 1;
    Scalar<std::int32_t> me = axis_index(axis);
    Scalar<std::int32_t> n = axis_size(axis_view);
    Scalar<std::int32_t> also = axis_index(axis_ptr) + axis_size("x");
    Scalar<std::uint32_t> bits = 1;      // an int literal into a u32 Scalar
    Scalar<float> one = 1;               // an int into a float Scalar
    Scalar<std::int64_t> wide = std::int64_t{5};
    (void)bits, (void)one, (void)wide, (void)also;
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv, RegularSemaphore sem, DmaSemaphore local) {
      auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % n);
      c.start();
      c.wait();
      auto d = make_async_remote_copy(x, y, send, recv, small);
      d.start(accumulate);
      d.wait();
      auto e = make_async_remote_copy(x, y, send, recv, DeviceId::mesh({0}));
      e.start();
      e.wait();
      auto l = make_async_copy(x, y, local);
      l.start(accumulate_max);
      l.wait();
      semaphore_signal(sem, 2, tiny);
      semaphore_wait(sem, std::int16_t{2});
      flag.store(semaphore_read(sem));
    });
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) { y.store(working_slot(buf, i).load()); });
    auto acc = fori_loop(0, n, [&](Scalar<std::int32_t>, Value<float, extents<128>> a) { return a + x.load(); },
                         x.load());
    when(me == 0, [&] { y.store(select(acc > 0.0f, acc, x.load())); });
    when(true, [&] { y.store(select(acc > 0.0f, acc, 0.0f)); });
    y.at(ds(0, 64)).store(x.at(ds(me * 0, 64)).load());
    y.store(exp(x.load()) + cast<float>(reduce_sum<0>(gathered.load())));
    auto [s] = run_scoped([&](VmemRef<float, 128> tmp) {
      tmp.store(x.load());
      return std::tuple{tmp.load()};
    });
    y.store(s);
    auto f = ppermute_start(x, buf.at(0), axis, -1);
    ppermute_done(f);
    collectives::all_gather(x, gathered, axis);
    collectives::all_reduce(y, "x");
  });
  auto k = kernel([](VmemRef<float, 128> y) {
             auto b = get_barrier_semaphore();
             semaphore_signal(b);
             semaphore_wait(b);
             auto b0 = get_barrier_semaphore(0);
             (void)b0;
           }).collective_id(3);
  (void)k;
}
