// Misuse: an Smem Ref where a semaphore is needed (semaphore_wait).
// refx-expect: refx: semaphore_wait takes a semaphore handle
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](SmemRef<std::int32_t> flag) { semaphore_wait(flag, 1); });
}
