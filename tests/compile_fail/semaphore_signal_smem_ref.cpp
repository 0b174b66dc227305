// Misuse: an Smem Ref where a semaphore is needed (semaphore_signal).
// refx-expect: refx: semaphore_signal takes a semaphore handle
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](SmemRef<std::int32_t> flag) { semaphore_signal(flag); });
}
