// The built-in primitives, listed for the registry (find_primitive by name,
// and the uniqueness of the names define_primitive is given). Constant-
// initialised like the primitives themselves, so the registry and the
// primitives work from any static initializer, whatever the order in which
// translation units initialise. Each header defining built-in primitives
// includes this one at its end; the list is defined after the last of them
// (no include guard: it waits until all are there).

#include <span>

#include <refx/config.hpp>
#include <refx/ir/primitive.hpp>

// clang-format off
#if REFX_DEFINITIONS && !defined(REFX_BUILTIN_LIST_DEFINED) && \
    defined(REFX_BUILTINS_COMM_DEFINED) && \
    defined(REFX_BUILTINS_CONTROL_DEFINED) && \
    defined(REFX_BUILTINS_DOT_DEFINED) && \
    defined(REFX_BUILTINS_EFFECTS_DEFINED) && \
    defined(REFX_BUILTINS_ELEMENTWISE_DEFINED) && \
    defined(REFX_BUILTINS_FUSED_DEFINED) && \
    defined(REFX_BUILTINS_RANDOM_DEFINED) && \
    defined(REFX_BUILTINS_REF_OPS_DEFINED) && \
    defined(REFX_BUILTINS_SHAPE_OPS_DEFINED) && \
    defined(REFX_BUILTINS_STRUCTURAL_DEFINED)
#define REFX_BUILTIN_LIST_DEFINED
namespace refx::detail {
inline constexpr const Primitive* builtin_primitive_array[] = {
    &prim::defs::semaphore_signal,
    &prim::defs::semaphore_wait,
    &prim::defs::semaphore_read,
    &prim::defs::barrier_semaphore,
    &prim::defs::dma_start,
    &prim::defs::dma_wait,
    &prim::defs::scope,
    &prim::defs::fori_loop,
    &prim::defs::when,
    &prim::defs::cond,
    &prim::defs::allocate,
    &prim::defs::dot,
    &prim::defs::debug_print,
    &prim::defs::io_callback,
    &prim::defs::delay,
    &prim::defs::trace_value,
    &prim::defs::neg,
    &prim::defs::abs,
    &prim::defs::exp,
    &prim::defs::log,
    &prim::defs::sqrt,
    &prim::defs::logical_not,
    &prim::defs::rsqrt,
    &prim::defs::tanh,
    &prim::defs::logistic,
    &prim::defs::log1p,
    &prim::defs::expm1,
    &prim::defs::erf,
    &prim::defs::sin,
    &prim::defs::cos,
    &prim::defs::add,
    &prim::defs::sub,
    &prim::defs::mul,
    &prim::defs::div,
    &prim::defs::rem,
    &prim::defs::min,
    &prim::defs::max,
    &prim::defs::logical_and,
    &prim::defs::logical_or,
    &prim::defs::logical_xor,
    &prim::defs::pow,
    &prim::defs::shift_left,
    &prim::defs::shift_right_logical,
    &prim::defs::shift_right_arithmetic,
    &prim::defs::eq,
    &prim::defs::ne,
    &prim::defs::lt,
    &prim::defs::le,
    &prim::defs::gt,
    &prim::defs::ge,
    &prim::defs::select,
    &prim::defs::fused,
    &prim::defs::load,
    &prim::defs::store,
    &prim::defs::accum,
    &prim::defs::touch,
    &prim::defs::reshape,
    &prim::defs::transpose,
    &prim::defs::constant,
    &prim::defs::iota,
    &prim::defs::broadcast,
    &prim::defs::cast,
    &prim::defs::reduce_sum,
    &prim::defs::reduce_max,
    &prim::defs::reduce_min,
    &prim::defs::axis_index,
    &prim::defs::index_check,
    &prim::defs::axis_size,
    &prim::defs::prng_seed,
    &prim::defs::prng_random_bits,
    &prim::defs::stochastic_round};
REFX_DECL constinit const std::span<const Primitive* const> builtin_primitives = builtin_primitive_array;
}  // namespace refx::detail
#endif  // REFX_DEFINITIONS
// clang-format on
