// Misuse: the second template argument of Ref is not refx::extents<...>.
// refx-expect: refx: the second argument of Ref must be refx::extents<...>
#include <array>

#include <refx/refx.hpp>

using namespace refx;

void shape_as_array() {
  trace([](Ref<float, std::array<int, 2>> x) { (void)x; });
}
