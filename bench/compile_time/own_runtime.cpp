// A user translation unit that runs its kernel on a Runtime of its own: the
// ring kernel of ring_kernel.cpp (ring.hpp), compiled for a Runtime with two
// workers and the race detector on (RuntimeOptions;
// <refx/runtime/runtime.hpp>), as tests and programs that choose their
// runtime do.
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "ring.hpp"

using namespace refx;

int main() {
  RuntimeOptions options;
  options.workers = 2;
  options.detect_races = true;
  Runtime rt(options);
  auto ring = ring_kernel().compile(Mesh{{"x", 4}}, {}, rt);
  auto x = Array::generate<float>(
      4, Shape{4096}, [](int d, std::int64_t i) { return d + i; }, rt);
  return ring(x)[0].to_host<float>(0)[0] >= 0 && rt.launches() == 1 ? 0 : 1;
}
