#pragma once
// The runtime as the API layer names it (kernel.hpp, array.hpp): declared
// here, defined in runtime.hpp, which separate compilation keeps out of
// user code (config.hpp).

#include <refx/runtime/detail/declarations.hpp>

#if REFX_HEADER_ONLY
#include <refx/runtime/runtime.hpp>  // the definitions
#endif
