#pragma once
// Stateful collective permute (the design of Pallas' async note): both sides
// are Refs, so ordering comes from the Ref effects, lifetimes are the Refs'
// scopes, and no defensive copy can appear.
//
//   auto f = ppermute_start(src, dst, "x", +1);   // dst on device me+1 receives src
//   ... independent work ...
//   ppermute_done(f);
//
// In loops, alternate the two slots of a DoubleBuffer: a permute from a Ref
// into itself is rejected.

#include <refx/collectives/ring.hpp>
#include <refx/ir/regions.hpp>
#include <refx/trace/scopes.hpp>

namespace refx {

/// A Ref with a leading dimension of 2: slot `step % 2` is worked on while
/// the other receives.
template <class T, std::int64_t... E>
using DoubleBuffer = Ref<T, extents<2, E...>, Vmem>;
template <class T, std::int64_t... E>
using HbmDoubleBuffer = Ref<T, extents<2, E...>, Hbm>;

/// The slot worked on at `step`, and the one receiving meanwhile.
template <class R>
auto working_slot(const R& buffer, const Scalar<std::int32_t>& step) {
  static_assert(R::rank >= 1 && R::extents_type::values[0] == 2,
                "refx: working_slot takes a DoubleBuffer (leading dimension 2)");
  return buffer.at(step % 2);
}
template <class R>
auto receiving_slot(const R& buffer, const Scalar<std::int32_t>& step) {
  static_assert(R::rank >= 1 && R::extents_type::values[0] == 2,
                "refx: receiving_slot takes a DoubleBuffer (leading dimension 2)");
  return buffer.at((step + 1) % 2);
}

/// A permute in flight: its copy, semaphores and both Refs.
struct PermuteFuture {
  AsyncRemoteCopy copy;
};

/// Starts sending `src` into `dst` on the device `shift` positions along
/// `axis`. Waits first until that device is ready to receive (a handshake:
/// it has stopped using its dst).
template <class Src, class Dst>
PermuteFuture ppermute_start(const Src& src, const Dst& dst, AxisName axis,
                             IntArg<std::int64_t, IntArgKind::shift> shift,
                             refx::source_location loc = refx::source_location::current()) {
  detail::check_copy_types<Src, Dst>();
  const Graph& g = detail::Tracer::current(loc).graph();
  if (must_overlap(g, src.view(), dst.view(), /*same_values=*/true))
    trace_error(loc, hint("alternate the two slots of a DoubleBuffer instead"),
                "ppermute from a Ref into itself (source and destination overlap)");
  const refx::detail::Ring ring(axis, loc);
  // Kernel-lifetime semaphores: the future outlives this call.
  const auto ready = allocate<RegularSemaphore>({}, loc);
  const auto send = allocate<DmaSemaphore>({}, loc);
  const auto recv = allocate<DmaSemaphore>({}, loc);
  semaphore_signal(ready, 1, ring.peer(-shift), loc);
  semaphore_wait(ready, 1, loc);
  auto copy = make_async_remote_copy(src, dst, send, recv, ring.peer(shift), loc);
  copy.start(loc);
  return PermuteFuture{copy};
}

/// The shift given before the axis name (`ppermute_start(x, y, 1, "x")`):
/// one sentence instead of "no matching function".
template <class Src, class Dst, class Shift, class Axis>
  requires(std::is_arithmetic_v<Shift> && std::is_convertible_v<const Axis&, std::string_view>)
void ppermute_start(const Src&, const Dst&, const Shift&, const Axis&) {
  static_assert(detail::dependent_false<Shift>,
                "refx: ppermute_start's arguments are (src, dst, axis, shift): the axis name comes before the shift, "
                "e.g. ppermute_start(x, y, \"x\", 1)");
}

/// Waits until the permute's data has left src and arrived in this device's dst.
inline void ppermute_done(const PermuteFuture& f, refx::source_location loc = refx::source_location::current()) {
  f.copy.wait(loc);
}
/// Something other than the future (a Ref, a copy descriptor): one sentence
/// instead of "no matching function".
template <class F>
  requires(!std::is_same_v<F, PermuteFuture>)
void ppermute_done(const F&, refx::source_location = refx::source_location::current()) {
  static_assert(detail::dependent_false<F>,
                "refx: ppermute_done takes what ppermute_start returned (auto f = ppermute_start(src, dst, axis, "
                "shift); ... ppermute_done(f)), not a Ref");
}

}  // namespace refx
