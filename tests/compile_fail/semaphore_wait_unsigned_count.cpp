// Misuse: an unsigned wait count (std::uint32_t into the i32 count: a value
// above 2^31 - 1 would become negative).
// refx-expect: refx: an unsigned integer where a signed integer of the same width is expected
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify(std::uint32_t n) {
  trace([&](VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore sem) {
      semaphore_signal(sem, 2);
      semaphore_wait(sem, n);
    });
  });
}
