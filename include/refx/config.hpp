#pragma once
// Build modes (docs/compile-time.md).
//
// Header-only (the default): every definition is in the headers, and a
// translation unit that includes <refx/refx.hpp> compiles all of refx.
//
// Separate compilation (REFX_SEPARATE_COMPILATION, set by linking the CMake
// target refx::compiled): refx's non-template parts — the built-in
// primitives, the tracer, the pass pipeline, the runtime behind Executable
// and Array — are compiled once, into the library built from src/refx.cpp,
// and <refx/refx.hpp> includes only what a kernel's source needs. Every
// translation unit of a program must be built in the same mode.
//
// A header's out-of-line definitions sit in an `#if REFX_DEFINITIONS` block
// and are marked REFX_DECL (inline in header-only mode, external linkage in
// the compiled library).

#if defined(REFX_SEPARATE_COMPILATION)
#define REFX_HEADER_ONLY 0
#define REFX_DECL
#else
#define REFX_HEADER_ONLY 1
#define REFX_DECL inline
#endif

#if REFX_HEADER_ONLY || defined(REFX_COMPILING_LIBRARY)
#define REFX_DEFINITIONS 1
#else
#define REFX_DEFINITIONS 0
#endif
