// A user translation unit: includes the umbrella and defines one ring kernel
// (ring.hpp), then compiles and runs it.
#include <refx/refx.hpp>

#include "ring.hpp"

using namespace refx;

int main() {
  auto ring = ring_kernel().compile(Mesh{{"x", 4}});
  auto x = Array::generate<float>(4, Shape{4096}, [](int d, std::int64_t i) { return d + i; });
  return ring(x)[0].to_host<float>(0)[0] >= 0 ? 0 : 1;
}
