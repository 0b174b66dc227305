// Positive control for issue 25's integer rule: a C++ integer converts
// implicitly into an integer Scalar, device id, count, shift or collective id
// when every value of its type fits (same signedness at the same or a greater
// width, unsigned into a wider signed type), and `int` (an integer literal's
// type) always does (a value out of range is a TraceError). These must
// compile.
#include <cstddef>
#include <cstdint>

#include <refx/collectives.hpp>
#include <refx/kernel.hpp>
#include <refx/refx.hpp>

using namespace refx;

void near_misses(int n, std::int64_t wide, unsigned u, std::uint16_t u16, std::int16_t i16, std::uint8_t u8v,
                 std::int8_t i8v, char c) {
  trace([&](VmemRef<const float, 128> x, VmemRef<float, 128> y, SmemRef<std::int32_t> o32,
            SmemRef<std::int64_t> o64, SmemRef<std::uint32_t> ou32, SmemRef<std::int8_t> o8, SmemRef<std::uint8_t> ou8) {
    Scalar<std::int32_t> a = n;      // int
    Scalar<std::int32_t> b = i16;    // widening
    Scalar<std::int32_t> d = u16;    // unsigned into a wider signed type
    Scalar<std::int32_t> e = u8v;
    Scalar<std::int32_t> f = c;      // char (signed here) widening
    Scalar<std::int64_t> g = wide;   // std::int64_t where i64 is expected
    Scalar<std::int64_t> h = u;      // unsigned 32 into i64
    Scalar<std::int64_t> k = 7;      // literal
    Scalar<std::uint32_t> m = 0xFF;  // int literal into u32 (range-checked while tracing)
    Scalar<std::uint32_t> p = u;     // unsigned into u32
    Scalar<std::uint32_t> q = u16;   // unsigned widening
    Scalar<std::int8_t> r = 1;       // int literal into i8 (range-checked while tracing)
    Scalar<std::int8_t> s = i8v;
    Scalar<std::uint8_t> t = u8v;
    Scalar<std::uint8_t> v = 200;
    o32.store(a + b + d + e + f);
    o64.store(g + h + k);
    ou32.store(m + p + q);
    o8.store(r + s);
    ou8.store(t + v);
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv, RegularSemaphore sem) {
      auto cp = make_async_remote_copy(x, y, send, recv, u16);  // device id from a u16
      cp.start();
      cp.wait();
      semaphore_signal(sem, i16);
      semaphore_wait(sem, u8v);
    });
    fori_loop(i16, n, [&](Scalar<std::int32_t> i) { (void)i; });
    auto fu = ppermute_start(x, y, "x", u);  // unsigned 32 into the i64 shift
    ppermute_done(fu);
  });
  auto kk = kernel([](VmemRef<float, 128> y) { y.store(0.0f); }).collective_id(std::int64_t{3});
  auto ku = kernel([](VmemRef<float, 128> y) { y.store(0.0f); }).collective_id(4u);
  (void)kk, (void)ku;
}
