// The compiled part of refx for separate compilation (docs/compile-time.md):
// every out-of-line definition of the headers (REFX_DEFINITIONS blocks),
// compiled once. Built as refx::compiled with REFX_SEPARATE_COMPILATION.

#if !defined(REFX_SEPARATE_COMPILATION)
#error "refx: src/refx.cpp is built with REFX_SEPARATE_COMPILATION (link the CMake target refx::compiled)"
#endif
#define REFX_COMPILING_LIBRARY 1

#include <refx/refx.hpp>

#include <refx/ir/dot.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/ir/primitives/comm.hpp>
#include <refx/ir/primitives/control.hpp>
#include <refx/ir/primitives/dot.hpp>
#include <refx/ir/primitives/effects.hpp>
#include <refx/ir/primitives/elementwise.hpp>
#include <refx/ir/primitives/fused.hpp>
#include <refx/ir/primitives/random.hpp>
#include <refx/ir/primitives/ref_ops.hpp>
#include <refx/ir/primitives/shape_ops.hpp>
#include <refx/ir/primitives/structural.hpp>
#include <refx/ir/printer.hpp>
#include <refx/passes/cost.hpp>
#include <refx/passes/pipeline.hpp>
#include <refx/runtime/effects.hpp>
#include <refx/runtime/runtime.hpp>
