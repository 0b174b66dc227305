// Misuse: the second template argument of Ref is not refx::extents<...>.
// refx-expect: refx: the second argument of Ref must be refx::extents<...>
// refx-max-tail: 200  (a known cascade, 189 lines with the worse of g++ 12 / clang 15; issue 25)
#include <array>

#include <refx/refx.hpp>

using namespace refx;

void shape_as_array() {
  trace([](Ref<float, std::array<int, 2>> x) { (void)x; });
}
