#pragma once
// Semaphore handles and operations.
//   REGULAR  counts signals: semaphore_signal / semaphore_wait.
//   DMA      counts bytes; advanced by copies, waited through the copy.
//   BARRIER  one per collective id, safe to signal before the peer entered.
// Arrays of semaphores index like Refs: `sems.at(i)`.

#include <optional>
#include <refx/core/source_location.hpp>

#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/device_id.hpp>
#include <refx/trace/detail/params.hpp>

namespace refx {

template <SemaphoreKind K, class E = extents<>>
class Semaphore : public detail::ref_base {
  static_assert(K != SemaphoreKind::none, "refx: pick a semaphore kind: regular, dma or barrier");

 public:
  static constexpr SemaphoreKind kind = K;
  using extents_type = E;
  static constexpr std::size_t rank = E::rank;

  Semaphore() = default;

  /// One semaphore of an array (or a sub-array with ds).
  template <class... I>
  auto at(const I&... idx) const {
    static_assert(sizeof...(I) <= rank, "refx: more indices than the semaphore array's rank in .at(...)");
    using NE = typename detail::view_extents<E, I...>::type;
    return Semaphore<K, NE>::from_view(detail::make_view(view(), {detail::index_entry(idx)...}));
  }
  /// The traced view; checks that the handle belongs to the active trace.
  ViewId view() const {
    detail::Tracer::check_serial(trace_);
    return view_;
  }
  const Semaphore& name(std::string n) const {
    detail::Tracer::current().name_ref(view(), std::move(n));
    return *this;
  }
  static Semaphore from_view(ViewId v) {
    Semaphore s;
    s.view_ = v;
    s.trace_ = detail::Tracer::current_serial();
    return s;
  }

 private:
  ViewId view_ = no_id;
  std::uint64_t trace_ = 0;  // the trace that made it (Tracer::serial)
};

using RegularSemaphore = Semaphore<SemaphoreKind::regular>;
using DmaSemaphore = Semaphore<SemaphoreKind::dma>;
using BarrierSemaphore = Semaphore<SemaphoreKind::barrier>;
template <std::int64_t N>
using RegularSemaphores = Semaphore<SemaphoreKind::regular, extents<N>>;
template <std::int64_t N>
using DmaSemaphores = Semaphore<SemaphoreKind::dma, extents<N>>;

template <class T>
inline constexpr bool is_semaphore_v = false;
template <SemaphoreKind K, class E>
inline constexpr bool is_semaphore_v<Semaphore<K, E>> = true;

template <SemaphoreKind K, class E>
struct param_traits<Semaphore<K, E>> {
  static constexpr bool supported = true;
  using extents_type = E;
  static ValueType type(const Shape& s) { return ValueType{DType::i64, ValueKind::ref, MemorySpace::semaphore, K, s}; }
  static Semaphore<K, E> make(ViewId v) { return Semaphore<K, E>::from_view(v); }
};

/// Adds `inc` to `sem` on `device` (this device by default). Never blocks.
/// (`auto`: a deduced return type makes the compiler instantiate the body,
/// and its sentence about the semaphore, before the argument conversions'
/// own, e.g. a std::size_t increment's.)
template <SemaphoreKind K, class E>
auto semaphore_signal(const Semaphore<K, E>& sem, const Scalar<std::int32_t>& inc = 1,
                      const std::optional<DeviceId>& device = std::nullopt,
                      refx::source_location loc = refx::source_location::current()) {
  static_assert(K != SemaphoreKind::dma,
                "refx: semaphore_signal takes a REGULAR or BARRIER semaphore; a DMA semaphore is advanced by copies");
  static_assert(E::rank == 0, "refx: semaphore_signal needs one semaphore; index the array with .at(i)");
  auto& t = detail::Tracer::current(loc);
  std::vector<ValueId> ins{inc.id()};
  if (device) ins.push_back(device->resolve(t, loc));
  const ViewId views[] = {sem.view()};
  t.bind(prim::semaphore_signal, ins, views, {}, loc);
}

/// Blocks until `sem` >= value, then subtracts value (`auto`: as semaphore_signal).
template <SemaphoreKind K, class E>
auto semaphore_wait(const Semaphore<K, E>& sem, const Scalar<std::int32_t>& value = 1,
                    refx::source_location loc = refx::source_location::current()) {
  static_assert(K != SemaphoreKind::dma,
                "refx: semaphore_wait takes a REGULAR or BARRIER semaphore; wait on a DMA semaphore through its copy "
                "descriptor (wait / wait_recv / wait_send)");
  static_assert(E::rank == 0, "refx: semaphore_wait needs one semaphore; index the array with .at(i)");
  const ValueId ins[] = {value.id()};
  const ViewId views[] = {sem.view()};
  detail::Tracer::current(loc).bind(prim::semaphore_wait, ins, views, {}, loc);
}

/// The current count of `sem` (does not change it).
template <SemaphoreKind K, class E>
Scalar<std::int32_t> semaphore_read(const Semaphore<K, E>& sem,
                                    refx::source_location loc = refx::source_location::current()) {
  static_assert(E::rank == 0, "refx: semaphore_read needs one semaphore; index the array with .at(i)");
  const ViewId views[] = {sem.view()};
  return detail::wrap<std::int32_t, extents<>>(
      detail::Tracer::current(loc).bind1(prim::semaphore_read, {}, views, {}, loc));
}

/// Not a semaphore: one sentence instead of "no matching function" (the
/// name is spliced into the message, which must be a string literal).
#define REFX_NOT_A_SEMAPHORE(name)                                                                                     \
  template <class S, class... A>                                                                                       \
    requires(!is_semaphore_v<S>)                                                                                       \
  void name(const S&, const A&...) {                                                                                   \
    static_assert(detail::dependent_false<S>,                                                                          \
                  "refx: " #name                                                                                       \
                  " takes a semaphore handle (a RegularSemaphore from run_scoped, or get_barrier_semaphore()), not a " \
                  "Ref or a Value; an Smem Ref is ordinary memory, not a semaphore");                                  \
  }
REFX_NOT_A_SEMAPHORE(semaphore_signal)
REFX_NOT_A_SEMAPHORE(semaphore_wait)
#undef REFX_NOT_A_SEMAPHORE
template <class S, class... A>
  requires(!is_semaphore_v<S>)
Scalar<std::int32_t> semaphore_read(const S&, const A&...) {
  static_assert(detail::dependent_false<S>,
                "refx: semaphore_read takes a semaphore handle, not a Ref or a Value; read an Smem Ref with load()");
  return {};
}

/// The barrier semaphore of the kernel's collective id (set on the kernel
/// builder), or of an explicit one.
inline BarrierSemaphore get_barrier_semaphore(IntArg<std::int64_t, IntArgKind::collective_id> id = -1,
                                              refx::source_location loc = refx::source_location::current()) {
  std::int64_t collective_id = id;
  auto& t = detail::Tracer::current(loc);
  if (collective_id < 0) collective_id = t.collective_id();
  if (collective_id < 0)
    trace_error(loc, hint("set one with kernel(...).collective_id(k) or pass it"),
                "get_barrier_semaphore needs a collective id");
  const std::int64_t attrs[] = {collective_id};
  const ValueId sem = t.bind1(prim::barrier_semaphore, {}, {}, attrs, loc);
  return BarrierSemaphore::from_view(whole_view(t.graph(), sem));
}

}  // namespace refx
