// Misuse: a Value where a semaphore is needed.
// refx-expect: refx: semaphore_signal takes a semaphore handle
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void notify() {
  trace([](SmemRef<std::int32_t> flag) { semaphore_signal(flag.load()); });
}
