#pragma once
// refx: multi-device communication kernels over mutable array references.
// The umbrella header; see README.md and docs/ for the tour.

#include <refx/version.hpp>

#include <refx/core/dtype.hpp>
#include <refx/core/error.hpp>
#include <refx/core/memory_space.hpp>
#include <refx/core/mesh.hpp>
#include <refx/core/shape.hpp>
#include <refx/core/slice.hpp>

#include <refx/ir/buffer.hpp>
#include <refx/ir/dot.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/printer.hpp>

#include <refx/trace/control_flow.hpp>
#include <refx/trace/copy.hpp>
#include <refx/trace/device_id.hpp>
#include <refx/trace/effects.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/semaphore.hpp>
#include <refx/trace/trace.hpp>
#include <refx/trace/value.hpp>

#include <refx/runtime/array.hpp>
#include <refx/runtime/effects.hpp>
#include <refx/runtime/runtime.hpp>

#include <refx/kernel.hpp>
