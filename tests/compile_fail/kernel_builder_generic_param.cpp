// Misuse: refx::kernel(...) with a generic (auto) parameter, compiled for a mesh.
// refx-expect: refx: kernel needs a callable with explicit parameter types (Ref<...>), not auto
#include <refx/kernel.hpp>
#include <refx/refx.hpp>

using namespace refx;

void build() {
  auto exe = kernel([](auto x, HbmRef<float, 128> y) { sync_copy(x, y); }).compile(Mesh{{"x", 2}});
  (void)exe;
}
