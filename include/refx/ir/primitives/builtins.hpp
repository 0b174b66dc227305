#pragma once
// The built-in primitives: their handles and attribute views (handles.hpp)
// and, in header-only builds, their definitions (abstract evaluation,
// implementation, printer: the headers beside this one, which include only
// handles.hpp, so nothing includes this header back) where refx's
// definitions are compiled (config.hpp: the REFX_IMPLEMENTATION file, or
// the library of refx::compiled).

#include <refx/ir/primitives/handles.hpp>

#if REFX_DEFINITIONS
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
#endif
