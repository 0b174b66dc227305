#pragma once
// The built-in primitives, declared. The tracer refers to them by address;
// their definitions (abstract evaluation, implementation, printer) are in the
// headers beside this one, which header-only builds include here and
// separate compilation (config.hpp) compiles once into the library. They are
// constant-initialised (constexpr objects, references bound with constinit):
// a kernel may be traced from any static initializer.

#include <refx/config.hpp>
#include <refx/ir/primitive.hpp>

namespace refx::prim {
// control.hpp
extern const Primitive& scope;
extern const Primitive& fori_loop;
extern const Primitive& when;
extern const Primitive& allocate;
// ref_ops.hpp
extern const Primitive& load;
extern const Primitive& store;
extern const Primitive& accum;
// elementwise.hpp
extern const Primitive& neg;
extern const Primitive& abs;
extern const Primitive& exp;
extern const Primitive& log;
extern const Primitive& sqrt;
extern const Primitive& logical_not;  // bitwise for integers
extern const Primitive& rsqrt;
extern const Primitive& tanh;
extern const Primitive& logistic;
extern const Primitive& add;
extern const Primitive& sub;
extern const Primitive& mul;
extern const Primitive& div;
extern const Primitive& rem;
extern const Primitive& min;
extern const Primitive& max;
extern const Primitive& logical_and;  // bitwise for integers
extern const Primitive& logical_or;   // bitwise for integers
extern const Primitive& logical_xor;  // bitwise for integers
extern const Primitive& pow;
extern const Primitive& shift_left;
extern const Primitive& shift_right_logical;
extern const Primitive& shift_right_arithmetic;
extern const Primitive& eq;
extern const Primitive& ne;
extern const Primitive& lt;
extern const Primitive& le;
extern const Primitive& gt;
extern const Primitive& ge;
extern const Primitive& select;
// structural.hpp
extern const Primitive& constant;
extern const Primitive& iota;
extern const Primitive& broadcast;
extern const Primitive& cast;
extern const Primitive& reduce_sum;
extern const Primitive& reduce_max;
extern const Primitive& reduce_min;
extern const Primitive& axis_index;
extern const Primitive& axis_size;
extern const Primitive& index_check;
// dot.hpp
extern const Primitive& dot;
// comm.hpp
extern const Primitive& semaphore_signal;
extern const Primitive& semaphore_wait;
extern const Primitive& semaphore_read;
extern const Primitive& barrier_semaphore;
extern const Primitive& dma_start;
extern const Primitive& dma_wait;
// effects.hpp
extern const Primitive& debug_print;
extern const Primitive& io_callback;
// fused.hpp
extern const Primitive& fused;
// shape_ops.hpp
extern const Primitive& reshape;
extern const Primitive& transpose;
}  // namespace refx::prim

#if REFX_HEADER_ONLY
#include <refx/ir/primitives/comm.hpp>
#include <refx/ir/primitives/control.hpp>
#include <refx/ir/primitives/dot.hpp>
#include <refx/ir/primitives/effects.hpp>
#include <refx/ir/primitives/elementwise.hpp>
#include <refx/ir/primitives/fused.hpp>
#include <refx/ir/primitives/ref_ops.hpp>
#include <refx/ir/primitives/shape_ops.hpp>
#include <refx/ir/primitives/structural.hpp>
#endif
