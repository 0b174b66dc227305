#pragma once
// Collectives as standalone compiled programs over per-device Arrays of T
// (1-D, or (N, block) for the gathers and all_to_all, matrices for the
// collective matmul), for when the collective is the whole kernel (and for
// benchmarks). ProgramOptions picks the axis, reduction, ring direction,
// algorithm and in-place form.
//   auto exe = collectives::all_reduce_program<float>(mesh, n);
//   auto out = exe(x)[0];                    // out of place, like MPI_Allreduce
//   exe.call_in_place({x, out});             // again, into the same out (no allocation)
//   auto exe2 = collectives::all_reduce_program<float>(mesh, n, {.in_place = true});
//   exe2.call_in_place({x});                 // in place, like a hand-written ring
// The program's ops (printed graphs, the timeline, errors) name the line that
// asked for it: each function takes that line as its last, defaulted argument.

#include <refx/collectives/all_gather.hpp>
#include <refx/collectives/all_reduce.hpp>
#include <refx/collectives/all_to_all.hpp>
#include <refx/collectives/collective_matmul.hpp>
#include <refx/kernel.hpp>

namespace refx::collectives {

struct ProgramOptions {
  std::string axis{};  ///< the mesh axis to reduce over; empty = the mesh's first axis
  ReduceOp op = ReduceOp::sum;
  Direction direction = Direction::unidirectional;  ///< the ring's lanes (ignored by direct and one-shot)
  bool in_place = false;                            ///< one writable Array instead of input + output
  /// As each collective's kernel form takes it; a collective with one
  /// algorithm (all_to_all, collective_matmul, the in-place reduce_scatter)
  /// accepts only `automatic` here.
  Algorithm algorithm = Algorithm::automatic;
};

}  // namespace refx::collectives

namespace refx::detail {
inline std::string axis_of(const Mesh& mesh, const collectives::ProgramOptions& o) {
  return o.axis.empty() ? mesh.axes()[0].name : o.axis;
}
template <class T>
using Vec = Ref<T, extents<dyn>, Hbm>;
/// Refuses an algorithm or an in-place form the program does not have
/// (instead of ignoring it).
inline void check_single_form(const collectives::ProgramOptions& o, std::string_view program) {
  if (o.algorithm != collectives::Algorithm::automatic)
    throw Error(
        fmt::format("refx: {} has one algorithm; ProgramOptions::algorithm must be Algorithm::automatic", program));
  if (o.in_place) throw Error(fmt::format("refx: {} has no in-place form", program));
}
}  // namespace refx::detail

namespace refx::collectives {

/// All-reduce of `elements` values of T per device.
template <Element T>
Executable all_reduce_program(const Mesh& mesh, std::int64_t elements, ProgramOptions o = {},
                              Runtime& rt = refx::detail::global_runtime(),
                              refx::source_location loc = refx::source_location::current()) {
  const std::string axis = detail::axis_of(mesh, o);
  if (o.in_place)
    return kernel([=](detail::Vec<T> x) { all_reduce(x, axis, o.op, o.direction, o.algorithm, loc); })
        .name("all_reduce")
        .compile(mesh, {Shape{elements}}, rt);
  return kernel([=](detail::Vec<const T> x, detail::Vec<T> out) {
           all_reduce(x, out, axis, o.op, o.direction, o.algorithm, loc);
         })
      .name("all_reduce")
      .compile(mesh, {Shape{elements}, Shape{elements}}, rt);
}

/// Reduce-scatter of `elements` values per device; device d receives chunk d
/// (ceil(elements / N) values; a shorter chunk leaves the last one untouched).
/// In place: chunk d of the one Array holds the result.
template <Element T>
Executable reduce_scatter_program(const Mesh& mesh, std::int64_t elements, ProgramOptions o = {},
                                  Runtime& rt = refx::detail::global_runtime(),
                                  refx::source_location loc = refx::source_location::current()) {
  const std::string axis = detail::axis_of(mesh, o);
  const std::int64_t n = mesh.axis_size(axis);
  if (o.in_place) {
    if (o.algorithm != Algorithm::automatic && o.algorithm != Algorithm::ring)
      throw Error(
          "refx: reduce_scatter_program: in place there is only the ring; use in_place = false for Algorithm::direct");
    return kernel([=](detail::Vec<T> x) { reduce_scatter_in_place(x, axis, o.op, o.direction, loc); })
        .name("reduce_scatter")
        .compile(mesh, {Shape{elements}}, rt);
  }
  return kernel([=](detail::Vec<const T> x, detail::Vec<T> out) {
           reduce_scatter(x, out, axis, o.op, o.direction, o.algorithm, loc);
         })
      .name("reduce_scatter")
      .compile(mesh, {Shape{elements}, Shape{(elements + n - 1) / n}}, rt);
}

/// All-gather of `block` values per device into (N, block). In place: one
/// (N, block) Array whose row d holds device d's block on entry.
template <Element T>
Executable all_gather_program(const Mesh& mesh, std::int64_t block, ProgramOptions o = {},
                              Runtime& rt = refx::detail::global_runtime(),
                              refx::source_location loc = refx::source_location::current()) {
  const std::string axis = detail::axis_of(mesh, o);
  const std::int64_t n = mesh.axis_size(axis);
  if (o.in_place)
    return kernel([=](Ref<T, extents<dyn, dyn>, Hbm> x) { all_gather_in_place(x, axis, o.algorithm, loc); })
        .name("all_gather")
        .compile(mesh, {Shape{n, block}}, rt);
  return kernel([=](detail::Vec<const T> x, Ref<T, extents<dyn, dyn>, Hbm> out) {
           all_gather(x, out, axis, o.algorithm, loc);
         })
      .name("all_gather")
      .compile(mesh, {Shape{block}, Shape{n, block}}, rt);
}

/// All-to-all of (N, block) per device.
template <Element T>
Executable all_to_all_program(const Mesh& mesh, std::int64_t block, ProgramOptions o = {},
                              Runtime& rt = refx::detail::global_runtime(),
                              refx::source_location loc = refx::source_location::current()) {
  const std::string axis = detail::axis_of(mesh, o);
  const std::int64_t n = mesh.axis_size(axis);
  detail::check_single_form(o, "all_to_all_program");
  using M = Ref<T, extents<dyn, dyn>, Hbm>;
  using CM = Ref<const T, extents<dyn, dyn>, Hbm>;
  return kernel([=](CM x, M out) { all_to_all(x, out, axis, loc); })
      .name("all_to_all")
      .compile(mesh, {Shape{n, block}, Shape{n, block}}, rt);
}

/// Collective matmul: a (m, k) and b (k, cols) per device, out (N*m, cols) =
/// all_gather(a) @ b, the gather overlapped with the multiplication.
template <Element T>
Executable collective_matmul_program(const Mesh& mesh, std::int64_t m, std::int64_t k, std::int64_t cols,
                                     ProgramOptions o = {}, Runtime& rt = refx::detail::global_runtime(),
                                     refx::source_location loc = refx::source_location::current()) {
  const std::string axis = detail::axis_of(mesh, o);
  const std::int64_t n = mesh.axis_size(axis);
  detail::check_single_form(o, "collective_matmul_program");
  using M = Ref<T, extents<dyn, dyn>, Vmem>;
  using CM = Ref<const T, extents<dyn, dyn>, Vmem>;
  return kernel([=](CM a, CM b, M out) { collective_matmul(a, b, out, axis, loc); })
      .name("collective_matmul")
      .compile(mesh, {Shape{m, k}, Shape{k, cols}, Shape{n * m, cols}}, rt);
}

}  // namespace refx::collectives
