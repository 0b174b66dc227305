#pragma once
// refx: multi-device communication kernels over mutable array references.
// The umbrella header; see README.md and docs/ for the tour.
//
// Header-only (the default), exactly one source file of a program defines
// REFX_IMPLEMENTATION before including this header, and compiles refx's
// definitions there (config.hpp, docs/compile-time.md):
//
//   #define REFX_IMPLEMENTATION
//   #include <refx/refx.hpp>
//
// With separate compilation (REFX_SEPARATE_COMPILATION, the CMake target
// refx::compiled; docs/compile-time.md) it includes what writing, compiling
// and calling a kernel needs, the graph printers and effects_barrier(); the
// runtime's other controls (Runtime, RuntimeOptions, tokens;
// refx/runtime/runtime.hpp) and the reference interpreter
// (refx/ir/interpret.hpp) are then included where used.

#include <refx/config.hpp>
#include <refx/version.hpp>

#if REFX_HEADER_ONLY && defined(REFX_IMPLEMENTATION) && !REFX_DEFINITIONS
#error "refx: REFX_IMPLEMENTATION is defined after a refx header was included; define it before the first one"
#endif

#include <refx/core/dtype.hpp>
#include <refx/core/error.hpp>
#include <refx/core/memory_space.hpp>
#include <refx/core/mesh.hpp>
#include <refx/core/shape.hpp>
#include <refx/core/slice.hpp>

#include <refx/ir/buffer.hpp>
#include <refx/ir/dot.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/printer.hpp>

#include <refx/trace/control_flow.hpp>
#include <refx/trace/copy.hpp>
#include <refx/trace/cores.hpp>
#include <refx/trace/device_id.hpp>
#include <refx/trace/effects.hpp>
#include <refx/trace/einshape.hpp>
#include <refx/trace/hints.hpp>
#include <refx/trace/map.hpp>
#include <refx/trace/random.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/sample_block.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/select_ref.hpp>
#include <refx/trace/semaphore.hpp>
#include <refx/trace/trace.hpp>
#include <refx/trace/value.hpp>
#include <refx/trace/value_slicing.hpp>

#include <refx/runtime/array.hpp>
#include <refx/runtime/effect_info.hpp>
#include <refx/runtime/fwd.hpp>

#include <refx/kernel.hpp>
#include <refx/pipeline.hpp>
#include <refx/predict.hpp>

#if REFX_HEADER_ONLY || REFX_DEFINITIONS
#include <refx/ir/eval.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/runtime/effects.hpp>
#include <refx/runtime/runtime.hpp>
#endif

#if REFX_DEFINITIONS  // the REFX_IMPLEMENTATION file, or src/refx.cpp
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
#include <refx/passes/cost.hpp>
#include <refx/passes/pipeline.hpp>
#include <refx/passes/target_checks.hpp>
#endif
