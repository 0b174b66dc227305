#pragma once
// Entry points: trace a kernel into a Graph; call a kernel function from
// another with a check that its Ref arguments do not alias.

#include <refx/core/source_location.hpp>

#include <refx/trace/cores.hpp>  // trace_per_core, defined there
#include <refx/trace/detail/params.hpp>

namespace refx {

/// Runs `kernel` once over symbolic Refs (once per core when the mesh's
/// devices have several: trace/cores.hpp) and returns the recorded graph. The
/// kernel's parameters must have explicit types (Ref<...>, semaphores).
/// `shapes`: empty when every extent is static, else one per parameter.
/// What a trace is for: the mesh (for device ids and axis names) and the
/// kernel's collective id (for get_barrier_semaphore).
struct TraceOptions {
  std::vector<Shape> shapes;
  const Mesh* mesh = nullptr;
  std::int64_t collective_id = -1;
};

template <class F>
Graph trace(F&& kernel, const TraceOptions& options, refx::source_location loc = refx::source_location::current());

template <class F>
Graph trace(F&& kernel, const std::vector<Shape>& shapes = {},
            refx::source_location loc = refx::source_location::current()) {
  return trace(std::forward<F>(kernel), TraceOptions{shapes, nullptr, -1}, loc);
}

template <class F>
Graph trace(F&& kernel, const TraceOptions& options, refx::source_location loc) {
  if constexpr (!detail::check_kernel_callable<F>()) {
    return Graph{};  // not reached: the check failed to compile
  } else if constexpr (!detail::check_params<typename detail::callable_args<F>::type>()) {
    return Graph{};  // not reached: the check failed to compile
  } else {
    using Params = typename detail::callable_args<F>::type;
    using R = decltype(std::apply(kernel, std::declval<Params>()));
    static_assert(!detail::returns_ref<R>, "refx: a kernel must not return a Ref; write results into its output Refs");
    static_assert(std::is_void_v<R>, "refx: a kernel returns nothing; write results into its output Refs");
    detail::Tracer tracer;
    tracer.set_mesh(options.mesh);
    tracer.set_collective_id(options.collective_id);
    detail::ActiveTrace active(tracer);
    Params params = detail::param_maker<Params>::make(tracer, options.shapes, 0, loc);
    if (options.mesh != nullptr && options.mesh->cores() > 1) {
      // A copy of the kernel per core (trace/cores.hpp), over the same parameters.
      auto both = std::forward_as_tuple(kernel, params);
      detail::trace_per_core(
          options.mesh->cores(),
          [](void* p) {
            auto& [k, ps] = *static_cast<decltype(both)*>(p);
            std::apply(k, ps);
          },
          &both, loc);
    } else {
      std::apply(kernel, params);
    }
    return std::move(tracer).take();
  }
}

namespace detail {
template <class R>
void collect_ref_view(const R& r, std::vector<std::pair<ViewId, bool>>& out) {
  if constexpr (is_ref_v<R>) out.emplace_back(r.view(), !R::read_only);
}
}  // namespace detail

/// `call(f)(refs...)` invokes kernel function f on Refs inside a trace, after
/// checking that no writable argument overlaps another argument.
template <class F>
auto call(F f, refx::source_location loc = refx::source_location::current()) {
  return [f = std::move(f), loc](const auto&... args) {
    std::vector<std::pair<ViewId, bool>> views;
    (detail::collect_ref_view(args, views), ...);
    const Graph& g = detail::Tracer::current(loc).graph();
    for (std::size_t i = 0; i < views.size(); ++i)
      for (std::size_t j = i + 1; j < views.size(); ++j)
        if ((views[i].second || views[j].second) && may_overlap(g, views[i].first, views[j].first))
          trace_error(
              loc, hint("pass it once, or pass disjoint views"),
              "the same Ref is passed twice to one kernel call (Ref arguments {} and {} overlap, and one is writable)",
              i, j);
    return f(args...);
  };
}

}  // namespace refx
