// Misuse: a std::size_t wait count (narrowed to 32 bits).
// refx-expect: refx: an integer wider than 32 bits (std::int64_t, std::size_t) where a 32-bit integer is expected
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
