#pragma once
// refx::extend -- using a primitive of your own from kernels (cf. jax.extend).
//
// A primitive is a `Primitive` registered once with `define_primitive`
// (<refx/ir/primitive.hpp>): a name, an abstract evaluation, an
// implementation over buffers, and optionally a printer and a cost. Built-in
// ops are defined the same way. This header adds the pieces a user needs on
// either side of that definition:
//
//   bind<T, E>(p, operands...)        records `p` in the active trace and
//                                     returns its output as a Value<T, E>
//   bind_many<R...>(p, operands...)   the same for several outputs (a tuple)
//   bind_effect(p, operands...)       the same for no outputs (effects only)
//   elementwise_same_type(ctx)        an abstract evaluation for ops whose
//                                     operands all share one type
//   double_attr / attr_as_double      floating-point attributes as int64 bits
//
// Operands are, in any order: Values (the op's inputs, in order), Refs (its
// views, in order: what its effects may name), `Attrs{...}` (static integer
// attributes) and one refx::source_location (the user's line for errors).
// See docs/extend.md and examples/extend_mul_add.cpp.

#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <refx/core/source_location.hpp>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/trace/detail/tracer.hpp>
#include <refx/trace/value.hpp>

namespace refx::extend {

/// Static integer attributes of an op (axes, sizes, dtypes, bit patterns).
/// They are part of the graph: the printer shows them and impls read them
/// back with `ExecContext::attr(op, i)` / `AbstractContext::attr(i)`.
struct Attrs {
  std::vector<std::int64_t> values;

  Attrs() = default;
  Attrs(std::initializer_list<std::int64_t> v) : values(v) {}
  explicit Attrs(std::vector<std::int64_t> v) : values(std::move(v)) {}
};

/// Attributes are integers; a floating-point parameter travels as its bits.
inline std::int64_t double_attr(double v) noexcept { return std::bit_cast<std::int64_t>(v); }
/// The inverse of double_attr (use it in the abstract eval, impl and printer).
inline double attr_as_double(std::int64_t bits) noexcept { return std::bit_cast<double>(bits); }

}  // namespace refx::extend

namespace refx::detail {

template <class A>
inline constexpr bool is_loc_v =
    std::is_same_v<std::remove_cvref_t<A>, refx::source_location> || std::is_same_v<std::remove_cvref_t<A>, SourceLoc>
#if !REFX_HAS_STD_SOURCE_LOCATION && REFX_HAS_STD_SOURCE_LOCATION_TYPE
    || std::is_same_v<std::remove_cvref_t<A>, std::source_location>
#endif
    ;

template <class A>
inline constexpr bool is_operand_v =
    is_value_v<A> || is_ref_v<A> || std::is_same_v<std::remove_cvref_t<A>, extend::Attrs> || is_loc_v<A>;

/// The operands of one bind, sorted into the op's pools. At most N inputs or
/// views, so they live on the stack; the attributes stay in the caller's Attrs.
template <std::size_t N>
struct Operands {
  std::array<ValueId, N + 1> inputs{};
  std::array<ViewId, N + 1> views{};
  std::size_t num_inputs = 0, num_views = 0;
  std::span<const std::int64_t> attrs;  // into the caller's Attrs, alive for the bind
  SourceLoc loc;

  template <class A>
  void add(const A& a) {
    static_assert(is_operand_v<A>,
                  "refx::extend::bind: operands are Values, Refs, refx::extend::Attrs{...} and a "
                  "std::source_location; make a literal a Value first (e.g. refx::Scalar<float>(2.0f))");
    if constexpr (is_value_v<A>) inputs[num_inputs++] = a.id();
    else if constexpr (is_ref_v<A>) views[num_views++] = a.view();
    else if constexpr (std::is_same_v<std::remove_cvref_t<A>, extend::Attrs>) attrs = a.values;
    else loc = SourceLoc(a);
  }
};

/// Records `p` over `operands` in the active trace; returns its outputs and
/// the line errors should name.
template <class... V>
std::pair<std::span<const ValueId>, SourceLoc> record(const Primitive& p, const V&... operands) {
  static_assert((std::is_same_v<V, extend::Attrs> + ... + 0) <= 1,
                "refx::extend::bind: pass all attributes in one Attrs{...}");
  static_assert((is_loc_v<V> + ... + 0) <= 1, "refx::extend::bind: pass at most one source location");
  Operands<sizeof...(V)> ops;
  (ops.add(operands), ...);
  refx::detail::Tracer& t = refx::detail::Tracer::current(ops.loc);
  const SourceLoc at = ops.loc.known() ? ops.loc : t.near();
  if (p.abstract_eval == nullptr)
    trace_error(at, hint("control-flow primitives are recorded by fori_loop, when and run_scoped"),
                "{}: this primitive has no abstract evaluation and cannot be bound", p.name);
  const auto outs = t.bind(p, std::span<const ValueId>(ops.inputs.data(), ops.num_inputs),
                           std::span<const ViewId>(ops.views.data(), ops.num_views), ops.attrs, ops.loc);
  return {outs, at};
}

inline void expect_outputs(const Primitive& p, std::size_t got, std::size_t want, SourceLoc at) {
  if (got != want)
    trace_error(at, "{}: its abstract evaluation produced {} output(s) but the bind expects {}", p.name, got, want);
}

/// The traced type of an output must be what the C++ handle type promises.
template <class T, class E>
void expect_type(const Primitive& p, const ValueType& t, std::size_t i, SourceLoc at) {
  bool ok = !t.is_ref() && t.dtype == dtype_v<T> && t.shape.rank() == E::rank;
  for (std::size_t d = 0; ok && d < E::rank; ++d) ok = E::values[d] == dyn || E::values[d] == t.shape[d];
  if (!ok) {
    std::array<std::int64_t, E::rank + 1> ext{};
    for (std::size_t d = 0; d < E::rank; ++d) ext[d] = E::values[d];
    trace_error(at, "{}: output {} is {}{} but the bind asks for a Value of {} with extents [{}] (-1 = dyn)", p.name, i,
                t.dtype, t.shape, dtype_v<T>, fmt::join(std::span<const std::int64_t>(ext.data(), E::rank), ","));
  }
}

template <class R>
R wrap_checked(const Primitive& p, ValueId id, std::size_t i, SourceLoc at) {
  using Tr = refx::detail::value_traits<R>;
  expect_type<typename Tr::element, typename Tr::ext>(p, refx::detail::Tracer::current().graph().type(id), i, at);
  return refx::detail::wrap<typename Tr::element, typename Tr::ext>(id);
}

}  // namespace refx::detail

namespace refx::extend {

/// Records `p(operands...)` in the active trace and returns its one output as
/// a `Value<T, E>`. The primitive's abstract evaluation decides the output's
/// type; a TraceError is raised if it is not a T array with extents E, so a
/// wrong handle type cannot silently mislabel a value.
///
///   template <class T, class E>
///   Value<T, E> mul_add(const Value<T, E>& x, const Value<T, E>& y, const Value<T, E>& z,
///                       refx::source_location loc = refx::source_location::current()) {
///     return extend::bind<T, E>(mul_add_p, x, y, z, loc);
///   }
template <Element T, class E = extents<>, class... V>
Value<T, E> bind(const Primitive& p, const V&... operands) {
  const auto [outs, at] = detail::record(p, operands...);
  detail::expect_outputs(p, outs.size(), 1, at);
  return detail::wrap_checked<Value<T, E>>(p, outs[0], 0, at);
}

/// Records `p(operands...)` and returns its outputs as a tuple of Values:
///   auto [lo, hi] = extend::bind_many<Value<float, E>, Value<float, E>>(split_p, x);
template <class... R, class... V>
  requires(is_value_v<R> && ...)
std::tuple<R...> bind_many(const Primitive& p, const V&... operands) {
  const auto rec = detail::record(p, operands...);
  const std::span<const ValueId> outs = rec.first;
  const SourceLoc at = rec.second;
  detail::expect_outputs(p, outs.size(), sizeof...(R), at);
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple<R...>{detail::wrap_checked<R>(p, outs[I], I, at)...};
  }
  (std::index_sequence_for<R...>{});
}

/// Records `p(operands...)` for a primitive with no outputs: one that only
/// has effects on the Refs it is given (writes, accumulations, host I/O).
template <class... V>
void bind_effect(const Primitive& p, const V&... operands) {
  const auto [outs, at] = detail::record(p, operands...);
  detail::expect_outputs(p, outs.size(), 0, at);
}

/// Abstract evaluation for elementwise primitives: every input is a Value
/// (not a Ref) with the dtype and shape of input 0, and there is one output of
/// that type. Fails, naming the operand and the user's line, otherwise. Call it
/// first in your own abstract eval and add further checks after it.
inline void elementwise_same_type(AbstractContext& c) {
  if (c.num_inputs() == 0) c.fail("takes at least one operand");
  if (c.num_views() != 0) c.fail("is elementwise and takes Values only; read Refs with load() first");
  const ValueType& first = c.input(0);
  for (std::size_t i = 0; i < c.num_inputs(); ++i) {
    const ValueType& t = c.input(i);
    if (t.is_ref()) c.fail("operand {} is a Ref; read it with load() first", i);
    if (t.dtype != first.dtype)
      c.fail("operand {} is {} but operand 0 is {}; all operands must have one element type (convert with refx::cast)",
             i, t.dtype, first.dtype);
    if (!(t.shape == first.shape))
      c.fail("operand {} has shape {} but operand 0 has shape {}; all operands must have one shape", i, t.shape,
             first.shape);
  }
  c.add_output(first);
}

}  // namespace refx::extend
