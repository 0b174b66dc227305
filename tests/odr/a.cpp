// ODR check, translation unit A (also holds main, and refx's definitions:
// REFX_IMPLEMENTATION; b.cpp only declares them). See b.cpp.
#define REFX_IMPLEMENTATION
#include <refx/refx.hpp>

// Defined in b.cpp.
const char* const* refx_odr_b_version_address();
int refx_odr_b();

const char* const* refx_odr_a_version_address() { return &refx::version_string; }

int refx_odr_a() { return refx::version_string[0] != '\0' ? 0 : 1; }

int main() {
  if (refx_odr_a() != 0 || refx_odr_b() != 0) return 1;
  // An inline variable must be one object across all translation units.
  if (refx_odr_a_version_address() != refx_odr_b_version_address()) return 2;
  return 0;
}
