#pragma once
// Build modes (docs/compile-time.md).
//
// Header-only (the default, the CMake target refx::refx): no library to
// link. Exactly one source file of the program defines REFX_IMPLEMENTATION
// before it includes <refx/refx.hpp>; that translation unit compiles refx's
// non-template parts (the built-in primitives, the tracer, the pass
// pipeline, the runtime), with the program's own flags. Every other
// translation unit compiles only what its kernels instantiate, as a
// single-header library's users do. A program without that file fails to
// link, and the first undefined reference the linker reports is (below)
// refx::detail::header_only_refx_needs_REFX_IMPLEMENTATION_defined_in_one_source_file,
// in function refx::detail::define_REFX_IMPLEMENTATION_in_one_source_file_before_including_refx_hpp();
// one with two such files fails with a multiple definition of it.
//
// Separate compilation (REFX_SEPARATE_COMPILATION, set by linking the CMake
// target refx::compiled): the same definitions are compiled once into the
// library built from src/refx.cpp, REFX_IMPLEMENTATION is ignored, and
// <refx/refx.hpp> includes only what a kernel's source needs.
//
// A header's out-of-line definitions sit in an `#if REFX_DEFINITIONS` block;
// their declarations are marked REFX_DECL (external linkage: defined in one
// translation unit of the program in either mode).

#if defined(REFX_SEPARATE_COMPILATION)
#define REFX_HEADER_ONLY 0
#else
#define REFX_HEADER_ONLY 1
#endif
#define REFX_DECL

#if defined(REFX_COMPILING_LIBRARY) || (REFX_HEADER_ONLY && defined(REFX_IMPLEMENTATION))
#define REFX_DEFINITIONS 1
#else
#define REFX_DEFINITIONS 0
#endif

namespace refx::detail {
// Defined where the definitions are compiled (the REFX_IMPLEMENTATION file,
// or librefx); referenced by every other header-only translation unit, so
// that a program without the definitions fails to link with this name.
extern const int header_only_refx_needs_REFX_IMPLEMENTATION_defined_in_one_source_file;
#if REFX_DEFINITIONS
extern const int header_only_refx_needs_REFX_IMPLEMENTATION_defined_in_one_source_file = 1;
#elif REFX_HEADER_ONLY
// The reference is the first thing in the object's .text, so that it is the
// first of the program's undefined references (over a thousand) that a
// linker reports: GNU ld, gold and lld report them object by object,
// section by section, in address order, and .text is an object's first
// section. GCC emits no_reorder functions before all others (at -O2 its
// clones would come first); clang emits functions in source order, and this
// header comes first. Not with -Wl,--gc-sections, which drops the function
// (retain would move it to a section of its own, after .text).
#if __has_cpp_attribute(gnu::no_reorder)
[[gnu::used, gnu::no_reorder]]
#else
[[gnu::used]]
#endif
static const int*
define_REFX_IMPLEMENTATION_in_one_source_file_before_including_refx_hpp() {
  // Missing: the one source file that defines REFX_IMPLEMENTATION before it
  // includes <refx/refx.hpp> (docs/compile-time.md).
  return &header_only_refx_needs_REFX_IMPLEMENTATION_defined_in_one_source_file;
}
#endif
}  // namespace refx::detail
