// ODR check, translation unit B. See a.cpp.
#include <refx/refx.hpp>

const char* const* refx_odr_b_version_address() { return &refx::version_string; }

int refx_odr_b() { return refx::version_string[0] != '\0' ? 0 : 1; }
