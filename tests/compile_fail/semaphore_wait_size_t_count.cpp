// Misuse: a std::size_t wait count (narrowed to 32 bits).
// refx-expect: refx: an unsigned 64-bit integer (std::size_t, std::uint64_t) where a 32-bit integer is expected (a
// device id, loop bound, semaphore count or increment, step or index) may not fit
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify(std::size_t n) {
  trace([&](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore sem) {
      semaphore_signal(sem, 2);
      semaphore_wait(sem, n);
    });
  });
}
