// The compiled part of refx for separate compilation (docs/compile-time.md):
// every out-of-line definition of the headers (REFX_DEFINITIONS blocks),
// compiled once: what a header-only program compiles in its
// REFX_IMPLEMENTATION file. Built as refx::compiled with REFX_SEPARATE_COMPILATION.

#if !defined(REFX_SEPARATE_COMPILATION)
#error "refx: src/refx.cpp is built with REFX_SEPARATE_COMPILATION (link the CMake target refx::compiled)"
#endif
#define REFX_COMPILING_LIBRARY 1

#include <refx/refx.hpp>  // with REFX_COMPILING_LIBRARY: every definition
