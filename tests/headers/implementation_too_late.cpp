// A header-only program's implementation file that includes a refx header
// before it defines REFX_IMPLEMENTATION: the definitions would silently be
// left out (the first header fixed REFX_DEFINITIONS at 0), so
// <refx/refx.hpp> stops with an #error instead. ctest
// headers.implementation_defined_too_late compiles it and expects the message.
#include <refx/core/shape.hpp>
#define REFX_IMPLEMENTATION
#include <refx/refx.hpp>

int main() { return 0; }
