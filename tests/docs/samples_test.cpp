// Every ```cpp block of README.md and docs/*.md that is not marked as a
// fragment is a complete program. The build extracts them all into
// doc_samples.inc (tests/docs/extract_samples.cpp, run by
// tests/docs/area.cmake): one translation unit for all of them, each sample
// in its own namespace, its main() run as the test
// docs.Samples.<page>_<heading>. Compiler errors and refx's source locations
// in them name the page and line of the sample.

#include <gtest/gtest.h>

// The samples are programs for header-only refx, where <refx/refx.hpp>
// includes the runtime's controls (Runtime, RuntimeOptions, Timeline); this
// test links refx::compiled, where it does not (docs/compile-time.md).
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/runtime/timeline.hpp>

#include "doc_samples.inc"
