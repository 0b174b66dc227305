// Misuse: a wait count read from an i64 Smem table (scalar prefetch of
// per-device message counts) and passed on as a Scalar<std::int64_t>.
// refx-expect: refx: a traced Scalar of another element type where an integer Scalar is expected (a
// Scalar<std::int32_t> device id, loop bound, semaphore count or increment, step or index) does not convert implicitly;
// convert it with refx::cast<std::int32_t>(s)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void gather_messages() {
  trace([](SmemRef<const std::int64_t, 8> expected, VmemRef<float, 128> y) {
    run_scoped([&](RegularSemaphore arrived) {
      const auto me = axis_index("x");
      semaphore_wait(arrived, expected.at(me).load());
      y.store(y.load() + 1.0f);
    });
  });
}
