// Positive control for issue 52: a std::int64_t where a 32-bit integer is
// expected (a loop bound, semaphore count, device id or seed) compiles, as
// `constexpr std::int64_t kRows = 16` in a ported kernel reads; the value is
// checked while tracing (a TraceError naming the line when it does not fit 32
// bits, tests/dtypes/integers_test.cpp). These must compile.
#include <cstdint>

#include <refx/refx.hpp>
#include <refx/trace/random.hpp>

using namespace refx;

constexpr std::int64_t kRows = 16;
constexpr std::int64_t kPeer = 1;
constexpr long long kSeed = 42;

void constants_that_fit(std::int64_t steps) {
  trace([&](VmemRef<const float, kRows, 128> x, VmemRef<float, kRows, 128> y, VmemRef<std::uint32_t, 8> bits) {
    fori_loop(0, kRows, [&](Scalar<std::int32_t> r) { y.at(r, all).store(x.at(r, all).load() * 2.0f); });
    const Scalar<std::int32_t> acc = fori_loop(
        std::int64_t{0}, steps, [&](Scalar<std::int32_t> i, Scalar<std::int32_t> a) { return a + i; },
        Scalar<std::int32_t>(0));
    (void)acc;
    prng_seed(kSeed);
    bits.store(prng_random_bits<8>());
    run_scoped([&](DmaSemaphore send, DmaSemaphore recv, RegularSemaphore sem) {
      auto cp = make_async_remote_copy(x, y, send, recv, kPeer);
      cp.start();
      cp.wait();
      semaphore_signal(sem, kRows);
      semaphore_wait(sem, kRows);
    });
  });
}
