// A user translation unit that runs its kernel on a Runtime of its own: the
// ring kernel of ring_kernel.cpp, compiled for a Runtime with two workers and
// the race detector on (RuntimeOptions; <refx/runtime/runtime.hpp>), as tests
// and programs that choose their runtime do.
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

using namespace refx;

int main() {
  RuntimeOptions options;
  options.workers = 2;
  options.detect_races = true;
  Runtime rt(options);
  auto ring = kernel([](HbmRef<const float, 4096> x, HbmRef<float, 4096> y) {
                auto me = axis_index("x"), n = axis_size("x");
                run_scoped([&](VmemRef<float, 4096> buf, RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
                  semaphore_signal(ready, 1, (me + n - 1) % n);
                  semaphore_wait(ready, 1);
                  auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % n);
                  c.start();
                  c.wait();
                  sync_copy(y, buf);
                  buf.store(buf.load() * 2.0f + 1.0f);
                  sync_copy(buf, y);
                });
              }).compile(Mesh{{"x", 4}}, {}, rt);
  auto x = Array::generate<float>(
      4, Shape{4096}, [](int d, std::int64_t i) { return d + i; }, rt);
  return ring(x)[0].to_host<float>(0)[0] >= 0 && rt.launches() == 1 ? 0 : 1;
}
