// Misuse: an Smem Ref given to semaphore_read.
// refx-expect: refx: semaphore_read takes a semaphore handle, not a Ref or a Value; read an Smem Ref with load()
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void peek() {
  trace([](SmemRef<std::int32_t> flag, SmemRef<std::int32_t> out) { out.store(semaphore_read(flag)); });
}
