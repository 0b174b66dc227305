#pragma once
// Whether a pipeline body fits its operands, checked before the pipeline is
// traced: emit_pipeline hands the body one Vmem block per in(...) / out(...)
// operand (VmemRef<const T, block...> for inputs, VmemRef<T, block...> for
// outputs) and one handle per scratch<H>(), in the operands' order, after
// pipeline_kernel's scalar operands (Smem Refs, passed first). A body
// that cannot take them stops at one `refx:` sentence saying which parameter
// is wrong and how, instead of "no match for call" inside the pipeline's
// templates. Users never name these; pipeline.hpp includes this header.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <refx/pipeline/operands.hpp>
#include <refx/trace/detail/params.hpp>

namespace refx::detail {

/// What the body receives for operand A.
template <class A>
struct body_operand {
  using type = typename A::type;  // scratch<H>(): the handle
};
template <class RefT, class Spec, PipeRole Role>
struct body_operand<PipeArg<RefT, Spec, Role>> {
  using type = typename pipe_traits<PipeArg<RefT, Spec, Role>>::block;
};

/// Why a declared parameter P cannot take what the body receives for A.
enum class BodyParamFault { none, hbm_ref, element_type, extents, writable_in, other };

template <class P, class A>
constexpr BodyParamFault body_param_fault() {
  using B = typename body_operand<A>::type;
  if constexpr (std::is_convertible_v<B, P>) {
    return BodyParamFault::none;
  } else if constexpr (!requires { std::declval<A>().spec; } || !is_ref_v<P>) {
    return BodyParamFault::other;
  } else if constexpr (P::space == MemorySpace::hbm) {
    return BodyParamFault::hbm_ref;
  } else if constexpr (!std::is_same_v<typename P::value_type, typename B::value_type>) {
    return BodyParamFault::element_type;
  } else if constexpr (!std::is_same_v<typename P::extents_type, typename B::extents_type>) {
    return BodyParamFault::extents;
  } else if constexpr (!P::read_only && B::read_only) {
    return BodyParamFault::writable_in;
  } else {
    return BodyParamFault::other;
  }
}

/// The fault of the first block or scratch parameter that does not fit (none
/// when all do); they follow `Skip` scalar operands.
template <class Params, std::size_t Skip, class... A, std::size_t... I>
constexpr BodyParamFault first_body_param_fault(std::index_sequence<I...>) {
  BodyParamFault f = BodyParamFault::none;
  ((f = f != BodyParamFault::none ? f : body_param_fault<std::tuple_element_t<Skip + I, Params>, A>()), ...);
  return f;
}

/// Whether the body's first `sizeof...(S)` parameters take the scalar
/// operands `S...` (pipeline_kernel's Smem Refs; the body gets them first).
template <class Params, class... S, std::size_t... J>
constexpr bool body_takes_scalars_first(std::index_sequence<J...>) {
  return (std::is_convertible_v<const S&, std::tuple_element_t<J, Params>> && ...);
}
/// The checks of emit_pipeline's body, called as body(scalars..., blocks and
/// scratch handles...), against its scalar operands `S...` (a std::tuple) and
/// operands `A...`; ok() false stops the caller (`if constexpr`) before it
/// compiles the call into follow-on errors.
template <class Body, class Scalars, class... A>
struct pipeline_body_check;

template <class Body, class... S, class... A>
struct pipeline_body_check<Body, std::tuple<S...>, A...> {
  static constexpr bool ok();
};

template <class Body, class Scalars, class... A>
constexpr bool check_pipeline_body() {
  return pipeline_body_check<Body, Scalars, A...>::ok();
}

template <class Body, class... S, class... A>
constexpr bool pipeline_body_check<Body, std::tuple<S...>, A...>::ok() {
  if constexpr (std::is_invocable_v<const Body&, const S&..., typename body_operand<A>::type...>) {
    return true;
  } else if constexpr (!has_deducible_params<Body>) {
    static_assert(dependent_false<Body>,
                  "refx: the pipeline body cannot be called with its operands' blocks: it takes, in the operands' "
                  "order, a VmemRef<const T, block...> per in(...), a VmemRef<T, block...> per out(...) and the "
                  "handle of each scratch<H>()");
    return false;
  } else {
    using Params = typename callable_args<Body>::type;
    constexpr std::size_t n = std::tuple_size_v<Params>;
    static_assert(n == sizeof...(S) + sizeof...(A),
                  "refx: the pipeline body takes a different number of parameters than the pipeline has operands; "
                  "give it one per in(...) and out(...) block and one per scratch<H>(), in the operands' order (a "
                  "scratch forgotten?)");
    constexpr bool scalars_first = [] {
      if constexpr (n == sizeof...(S) + sizeof...(A))
        return body_takes_scalars_first<Params, S...>(std::make_index_sequence<sizeof...(S)>{});
      else return true;  // the count is reported above
    }();
    static_assert(scalars_first,
                  "refx: pipeline_kernel's body takes its scalar operands (the Smem Refs) first, then one block per "
                  "BlockSpec and the scratch<H>() handles, in order: (SmemRef<const std::int32_t, N> table, "
                  "VmemRef<const T, block...> x, ...), as Pallas' kernel(table_ref, x_ref, o_ref)");
    if constexpr (n == sizeof...(S) + sizeof...(A) && scalars_first) {
      constexpr BodyParamFault f =
          first_body_param_fault<Params, sizeof...(S), A...>(std::make_index_sequence<sizeof...(A)>{});
      static_assert(f != BodyParamFault::hbm_ref,
                    "refx: a pipeline body sees Vmem blocks, not the Hbm Refs given to in(...) / out(...); declare "
                    "the parameter as a VmemRef of the BlockSpec's block extents (the pipeline copies the blocks "
                    "between Hbm and Vmem)");
      static_assert(f != BodyParamFault::element_type,
                    "refx: a pipeline body's block parameter has another element type than its operand; a block "
                    "keeps the Hbm Ref's element type (cast the loaded Value with refx::cast<T>)");
      static_assert(f != BodyParamFault::extents,
                    "refx: a pipeline body's block parameter has other extents than its BlockSpec; declare it with "
                    "the static extents of block<...>(map)");
      static_assert(f != BodyParamFault::writable_in,
                    "refx: an in(...) block is read-only; declare the body's parameter as VmemRef<const T, ...> "
                    "(out(...) blocks and scratch are the writable ones)");
      static_assert(f == BodyParamFault::hbm_ref || f == BodyParamFault::element_type || f == BodyParamFault::extents ||
                        f == BodyParamFault::writable_in,
                    "refx: the pipeline body cannot be called with its operands' blocks: it takes, in the operands' "
                    "order, a VmemRef<const T, block...> per in(...), a VmemRef<T, block...> per out(...) and the "
                    "handle of each scratch<H>()");
    }
    return false;
  }
}

}  // namespace refx::detail
