#pragma once
// What pipeline_kernel (pipeline.hpp) does with its parameters before it
// traces the pipeline: which are scalar operands, Hbm operands, scratch or
// None; a writable Smem scalar operand taken as an input and copied into
// scoped Smem the body writes; None parameters dropped from the kernel's
// signature and given back to the body. Users never name these.

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <refx/core/source_location.hpp>
#include <refx/pipeline/operands.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/semaphore.hpp>

namespace refx {

namespace detail {
template <class P>
inline constexpr bool is_smem_ref_v = false;
template <class P>
  requires(is_ref_v<P> && !is_semaphore_v<P>)
inline constexpr bool is_smem_ref_v<P> = P::space == MemorySpace::smem;
template <class P>
inline constexpr bool is_hbm_ref_v = false;
template <class P>
  requires(is_ref_v<P> && !is_semaphore_v<P>)
inline constexpr bool is_hbm_ref_v<P> = P::space == MemorySpace::hbm;
template <class O>
inline constexpr bool is_pipe_scratch_v = false;
template <class H>
inline constexpr bool is_pipe_scratch_v<PipeScratch<H>> = true;

/// A pipeline_kernel parameter as the kernel takes it: a writable Smem
/// scalar operand is an input (Pallas' scalar prefetch), whose copy in Smem
/// the body may write.
template <class P>
struct kernel_param {
  using type = P;
};
template <class P>
  requires(is_smem_ref_v<P> && !P::read_only)
struct kernel_param<P> {
  using type = Ref<const typename P::value_type, typename P::extents_type, Smem>;
};

template <class P>
inline constexpr bool is_writable_smem_v = false;
template <class P>
  requires(is_smem_ref_v<P>)
inline constexpr bool is_writable_smem_v<P> = !P::read_only;

/// Calls f(std::tuple<P...>) with `given`'s Refs, a writable Smem operand
/// replaced by a scoped Smem copy of its input (written before the first step).
template <class Params, std::size_t I = 0, class Given, class F, class... Done>
void with_smem_state(const Given& given, F& f, const Done&... done) {
  if constexpr (I == std::tuple_size_v<Given>) {
    f(Params{done...});
  } else {
    using P = std::tuple_element_t<I, Params>;
    if constexpr (is_writable_smem_v<P>) {
      run_scoped([&](P state) {
        state.store(std::get<I>(given).load());
        with_smem_state<Params, I + 1>(given, f, done..., state);
      });
    } else {
      with_smem_state<Params, I + 1>(given, f, done..., std::get<I>(given));
    }
  }
}

/// `Ts...` without its None types, as a std::tuple.
template <class... Ts>
struct without_none {
  using type = std::tuple<>;
};
template <class T, class... Ts>
struct without_none<T, Ts...> {
  using rest = typename without_none<Ts...>::type;
  using type = std::conditional_t<is_none_v<T>, rest,
                                  decltype(std::tuple_cat(std::declval<std::tuple<T>>(), std::declval<rest>()))>;
};
/// `given` (the kernel's parameters) as a tuple `Full`, a None in each of
/// Full's None places.
template <class Full, std::size_t I = 0, std::size_t J = 0, class Given, class... Done>
Full with_nones(const Given& given, const Done&... done) {
  if constexpr (I == std::tuple_size_v<Full>) return Full{done...};
  else if constexpr (is_none_v<std::tuple_element_t<I, Full>>) return with_nones<Full, I + 1, J>(given, done..., none);
  else return with_nones<Full, I + 1, J + 1>(given, done..., std::get<J>(given));
}
/// The kernel a pipeline_kernel is: one parameter per non-None Param.
template <class Impl, class KernelParams>
struct PipelineKernelFn;
template <class Impl, class... KP>
struct PipelineKernelFn<Impl, std::tuple<KP...>> {
  Impl impl;
  void operator()(KP... refs) const { impl(std::tuple<KP...>{refs...}); }
};
/// The line a pipeline_kernel operand was written on (none for `none`).
template <class O>
refx::source_location operand_loc(const O& o) {
  if constexpr (is_none_v<O>) return {};
  else return o.loc;
}

/// How many of `B...` are true before the first false.
template <bool... B>
constexpr std::size_t leading_true() {
  std::size_t n = 0;
  bool on = true;
  ((on = on && B, n += on ? 1 : 0), ...);
  return n;
}
}  // namespace detail

}  // namespace refx
