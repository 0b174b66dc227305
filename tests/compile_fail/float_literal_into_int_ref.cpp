// Misuse: a floating-point literal stored into an integer Ref (silently truncated in plain C++).
// refx-expect: refx: a floating-point literal stored into an integer Ref would be truncated
#include <refx/refx.hpp>

using namespace refx;

void fill() {
  trace([](VmemRef<std::int32_t, 8> counts) { counts.store(2.5); });
}
