#pragma once
// Copy descriptors. Nothing moves until start(); between start and its wait
// the runtime owns the source (for reading) and the destination (for
// writing).
//   make_async_copy(src, dst, sem)                          local; wait() = wait_recv()
//   make_async_remote_copy(src, dst, send, recv, device)    push src into dst on device;
//                                                           wait() = wait_send() then wait_recv()
//   start(accumulate) adds into the destination instead of overwriting it.
//   A semaphore may be REGULAR instead of DMA (TPU v6e and later): it rises
//   by 1 when the copy lands, whatever its size, and is waited with
//   semaphore_wait; the copy's own wait() counts a DMA semaphore's bytes.
//   sync_copy(src, dst) starts and waits (with a scoped DMA semaphore).

#include <array>

#include <refx/core/source_location.hpp>

#include <refx/ir/attrs.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/semaphore.hpp>

namespace refx {

/// Tags for `start(accumulate)` (add into the destination, as Pallas'
/// start(add=True)) and `start(accumulate_max)` (keep the elementwise maximum).
struct Accumulate {
  CopyReduce op = CopyReduce::sum;
};
inline constexpr Accumulate accumulate{CopyReduce::sum};
inline constexpr Accumulate accumulate_max{CopyReduce::max};

/// Pallas' start(priority=p): the DMA engine's queue a copy waits in, 0 (the
/// default, highest) or 1 (lower; local copies only). The threaded runtime
/// runs copies alike; predict lets a priority-0 copy take a link first.
struct Priority {
  std::int32_t level = 0;
};

namespace detail {
// The checks return whether the arguments are right, so that an entry point
// can stop at the first failed check (`if constexpr`) instead of compiling on
// into a cascade of follow-on errors.
template <class Src, class Dst>
constexpr bool check_copy_types() {
  constexpr bool dst_is_sem = is_semaphore_v<Dst>;
  static_assert(!dst_is_sem,
                "refx: a copy's destination is a semaphore here; the arguments are (src, dst, sem) for make_async_copy "
                "and (src, dst, send_sem, recv_sem, device) for make_async_remote_copy");
  if constexpr (dst_is_sem) {
    return false;
  } else {
    constexpr bool refs = is_ref_v<Src> && !is_semaphore_v<Src> && is_ref_v<Dst>;
    static_assert(
        refs, "refx: a copy's source and destination must be Refs (a Value is immutable; store it into a Ref first)");
    if constexpr (!refs) {
      return false;
    } else {
      constexpr bool same = std::is_same_v<typename Src::value_type, typename Dst::value_type>;
      static_assert(same, "refx: a copy's source and destination must have one element type (copies do not convert)");
      constexpr bool ext =
          Src::rank == Dst::rank && extents_compatible<typename Src::extents_type, typename Dst::extents_type>;
      static_assert(ext, "refx: a copy's source and destination have different static extents");
      static_assert(!Dst::read_only,
                    "refx: cannot copy into a read-only Ref<const T>; the destination must be writable");
      return same && ext && !Dst::read_only;
    }
  }
}
template <class S>
constexpr bool check_dma_semaphore() {
  static_assert(is_semaphore_v<S>, "refx: a copy needs a DMA semaphore here");
  if constexpr (is_semaphore_v<S>) {
    static_assert(S::kind != SemaphoreKind::barrier,
                  "refx: copies need a DMA semaphore; the BARRIER semaphore (get_barrier_semaphore) only synchronises "
                  "devices with semaphore_signal / semaphore_wait; allocate a DmaSemaphore with run_scoped");
    static_assert(S::rank == 0, "refx: a copy needs one DMA semaphore; index the semaphore array with .at(i)");
    return S::kind != SemaphoreKind::barrier && S::rank == 0;
  } else {
    return false;
  }
}
template <class S>
inline constexpr bool is_regular_v = is_semaphore_v<S> && S::kind == SemaphoreKind::regular;
template <class D>
constexpr bool check_device_id() {
  constexpr bool ok = std::is_convertible_v<const D&, DeviceId>;
  static_assert(ok,
                "refx: a remote copy's last argument is the target device: an integer, a Scalar<std::int32_t> or a "
                "DeviceId (the arguments are src, dst, send_sem, recv_sem, device)");
  return ok;
}

class CopyBase {
 public:
  /// Starts the copy; start(accumulate) / start(accumulate_max) combine into
  /// the destination instead of overwriting it.
  void start(refx::source_location loc = refx::source_location::current()) const { do_start(CopyReduce::none, loc); }
  void start(Accumulate a, refx::source_location loc = refx::source_location::current()) const { do_start(a.op, loc); }
  void start(Priority p, refx::source_location loc = refx::source_location::current()) const {
    do_start(CopyReduce::none, loc, no_id, p.level);
  }
  void start(Accumulate a, Priority p, refx::source_location loc = refx::source_location::current()) const {
    do_start(a.op, loc, no_id, p.level);
  }
  /// start(true) and the like: one sentence instead of "no matching function".
  template <class X>
    requires(!std::is_same_v<X, Accumulate> && !std::is_same_v<X, Priority> &&
             !std::is_convertible_v<const X&, refx::source_location>)
  void start(const X&, refx::source_location = refx::source_location::current()) const {
    static_assert(dependent_false<X>,
                  "refx: a copy's start() takes nothing, or the tag refx::accumulate (add into the destination) or "
                  "refx::accumulate_max (keep the maximum), and perhaps a refx::Priority; not a bool or a number");
  }
  std::int64_t descriptor() const noexcept { return id_; }

 protected:
  CopyBase(ViewId src, ViewId dst, ViewId recv, ViewId send, std::optional<ValueId> device, SourceLoc loc)
      : src_(src), dst_(dst), recv_(recv), send_(send), device_(device) {
    Tracer& t = Tracer::current(loc);
    id_ = t.graph().add_descriptor({loc, device.has_value()});
    trace_ = t.serial();
  }
  void do_start(CopyReduce reduce, SourceLoc loc, ValueId predicate = no_id, std::int32_t priority = 0) const {
    start_views({src_, dst_, recv_, send_}, reduce, loc, predicate, priority);
  }
  void do_wait(prim::WaitSide side, SourceLoc loc) const {
    wait_views({src_, dst_, side == prim::WaitSide::recv ? recv_ : send_}, side, loc);
  }
  /// Starts the copy between views v = {src, dst, recv, send} (a choice's alternatives: select_ref.hpp).
  void start_views(std::array<ViewId, 4> v, CopyReduce reduce, SourceLoc loc, ValueId predicate = no_id,
                   std::int32_t priority = 0) const {
    auto& t = Tracer::current(loc);
    t.note(loc);
    Tracer::check_serial(trace_);
    if (reduce != CopyReduce::none && t.graph().type(t.graph().view(v[0]).ref).dtype == DType::pred)
      trace_error(loc, hint("copy without accumulate, or use u8 / i32 elements"),
                  "start(accumulate) adds into the destination, but bool elements cannot be added or maximised");
    std::vector<ViewId> views{v[0], v[1], v[2]};
    if (v[3] != no_id) views.push_back(v[3]);
    std::vector<ValueId> ins;
    if (device_) ins.push_back(*device_);
    if (predicate != no_id) ins.push_back(predicate);
    // (descriptor, reduce, remote[, predicated[, priority]])
    const std::int64_t attrs[] = {id_, static_cast<std::int64_t>(reduce), device_ ? 1 : 0, predicate != no_id ? 1 : 0,
                                  priority};
    const std::size_t n = priority != 0 ? 5 : predicate != no_id ? 4 : 3;
    t.bind(prim::dma_start, ins, views, std::span<const std::int64_t>(attrs, n), loc);
  }
  /// Waits on views v = {src, dst, the side's semaphore}.
  void wait_views(std::array<ViewId, 3> views, prim::WaitSide side, SourceLoc loc) const {
    auto& t = Tracer::current(loc);
    t.note(loc);
    Tracer::check_serial(trace_);
    const std::int64_t attrs[] = {id_, static_cast<std::int64_t>(side)};
    t.bind(prim::dma_wait, {}, views, attrs, loc);
  }
  ViewId src_, dst_, recv_, send_;
  std::optional<ValueId> device_;
  std::int64_t id_ = 0;
  std::uint64_t trace_ = 0;  // the trace that made it (Tracer::serial)
};
}  // namespace detail

/// A local copy descriptor (see make_async_copy).
class AsyncCopy : detail::CopyBase {
 public:
  AsyncCopy(ViewId src, ViewId dst, ViewId sem, SourceLoc loc) : CopyBase(src, dst, sem, no_id, std::nullopt, loc) {}
  using CopyBase::start;
  /// The library's run-time fetch rule (emit_pipeline): starts the copy where
  /// the traced bool scalar `predicate` is true; where it is false nothing
  /// moves and the semaphore rises as if the copy had landed, so wait() stays
  /// unconditional (a predicated dma_start, ir/primitives/comm.hpp).
  void start_if(ValueId predicate, SourceLoc loc) const { do_start(CopyReduce::none, loc, predicate); }
  /// Waits until the copy has landed in the destination.
  void wait(refx::source_location loc = refx::source_location::current()) const { do_wait(prim::WaitSide::recv, loc); }
  void wait_recv(refx::source_location loc = refx::source_location::current()) const {
    do_wait(prim::WaitSide::recv, loc);
  }
  template <class T = void>
  void wait_send(refx::source_location = refx::source_location::current()) const {
    static_assert(detail::dependent_false<T>,
                  "refx: wait_send is for remote copies; a local copy has no send semaphore, use wait()");
  }
  using CopyBase::descriptor;
};

/// A remote copy descriptor (see make_async_remote_copy).
class AsyncRemoteCopy : detail::CopyBase {
 public:
  AsyncRemoteCopy(ViewId src, ViewId dst, ViewId send, ViewId recv, ValueId device, SourceLoc loc)
      : CopyBase(src, dst, recv, send, device, loc) {}
  using CopyBase::start;
  /// Waits until the source may be reused (this device's send semaphore).
  void wait_send(refx::source_location loc = refx::source_location::current()) const {
    do_wait(prim::WaitSide::send, loc);
  }
  /// Waits until a copy of this size has landed here (this device's receive
  /// semaphore): the matching copy is the one the peer sent to us.
  void wait_recv(refx::source_location loc = refx::source_location::current()) const {
    do_wait(prim::WaitSide::recv, loc);
  }
  void wait(refx::source_location loc = refx::source_location::current()) const {
    wait_send(loc);
    wait_recv(loc);
  }
  using CopyBase::descriptor;
};

namespace detail {
/// Whether a copy may be waited on through its descriptor on a side whose
/// semaphore is (`Regular`) REGULAR: a compile error where it is.
template <bool Regular>
constexpr bool dma_side() {
  static_assert(!Regular,
                "refx: this copy completes on a REGULAR semaphore, which rises by 1 when the copy lands: wait for it "
                "with semaphore_wait(sem) (a copy's wait counts the bytes of a DMA semaphore)");
  return !Regular;
}

/// A copy descriptor that knows its element type, so that start(accumulate)
/// on bool elements stops at compile time, and which of its semaphores are
/// REGULAR, so that waiting on one through the copy does too.
template <class Base, class T, bool RecvRegular = false, bool SendRegular = false>
class TypedCopy : public Base {
 public:
  using Base::Base;
  using Base::start;
  void start(Accumulate a, refx::source_location loc = refx::source_location::current()) const {
    static_assert(!std::is_same_v<T, bool>,
                  "refx: start(accumulate) adds into the destination, but bool elements cannot be added or "
                  "maximised; copy without accumulate, or use u8 / i32 elements");
    Base::start(a, loc);
  }
  void wait(refx::source_location loc = refx::source_location::current()) const {
    if constexpr (dma_side<(RecvRegular || SendRegular)>()) Base::wait(loc);
  }
  void wait_recv(refx::source_location loc = refx::source_location::current()) const {
    if constexpr (dma_side<RecvRegular>()) Base::wait_recv(loc);
  }
  void wait_send(refx::source_location loc = refx::source_location::current()) const {
    if constexpr (dma_side<SendRegular>()) Base::wait_send(loc);
  }
};
}  // namespace detail

/// A local copy from `src` to `dst`, completing on `sem`.
template <class Src, class Dst, class Sem>
auto make_async_copy(const Src& src, const Dst& dst, const Sem& sem,
                     refx::source_location loc = refx::source_location::current()) {
  if constexpr (detail::check_copy_types<Src, Dst>() && detail::check_dma_semaphore<Sem>()) {
    detail::Tracer::current(loc).note(loc);
    return detail::TypedCopy<AsyncCopy, typename Src::value_type, detail::is_regular_v<Sem>>(src.view(), dst.view(),
                                                                                             sem.view(), loc);
  } else {
    return AsyncCopy(no_id, no_id, no_id, loc);  // not reached: a check above failed to compile
  }
}

/// The remote form's arguments given to make_async_copy (two semaphores, and
/// perhaps a device): one sentence instead of "no matching function".
template <class Src, class Dst, class Sem, class Sem2, class... Rest>
  requires is_semaphore_v<Sem2>
AsyncCopy make_async_copy(const Src&, const Dst&, const Sem&, const Sem2&, const Rest&...) {
  static_assert(detail::dependent_false<Src>,
                "refx: make_async_copy takes one DMA semaphore: make_async_copy(src, dst, sem); a copy to another "
                "device with a send and a receive semaphore is make_async_remote_copy(src, dst, send_sem, recv_sem, "
                "device)");
  return AsyncCopy(no_id, no_id, no_id, refx::source_location::current());
}

/// A copy of local `src` into `dst` on `device`; `send` rises here when the
/// source may be reused, `recv` rises on `device` when the data has landed.
template <class Src, class Dst, class SendSem, class RecvSem, class Device = DeviceId>
auto make_async_remote_copy(const Src& src, const Dst& dst, const SendSem& send, const RecvSem& recv,
                            const Device& device, refx::source_location loc = refx::source_location::current()) {
  if constexpr (detail::check_copy_types<Src, Dst>() && detail::check_dma_semaphore<SendSem>() &&
                detail::check_dma_semaphore<RecvSem>() && detail::check_device_id<Device>()) {
    auto& t = detail::Tracer::current(loc);
    t.note(loc);
    const DeviceId& id = device;
    return detail::TypedCopy<AsyncRemoteCopy, typename Src::value_type, detail::is_regular_v<RecvSem>,
                             detail::is_regular_v<SendSem>>(src.view(), dst.view(), send.view(), recv.view(),
                                                            id.resolve(t, loc), loc);
  } else {
    return AsyncRemoteCopy(no_id, no_id, no_id, no_id, no_id, loc);  // not reached: a check above failed to compile
  }
}

/// Pallas' pltpu.async_copy: make_async_copy(src, dst, sem), started; returns
/// the descriptor to wait on.
template <class Src, class Dst, class Sem>
auto async_copy(const Src& src, const Dst& dst, const Sem& sem,
                refx::source_location loc = refx::source_location::current()) {
  auto c = make_async_copy(src, dst, sem, loc);
  if constexpr (detail::check_copy_types<Src, Dst>() && detail::check_dma_semaphore<Sem>()) c.start(loc);
  return c;
}

/// async_copy(src, dst, sem, Priority{1}): started at that priority.
template <class Src, class Dst, class Sem>
auto async_copy(const Src& src, const Dst& dst, const Sem& sem, Priority p,
                refx::source_location loc = refx::source_location::current()) {
  auto c = make_async_copy(src, dst, sem, loc);
  if constexpr (detail::check_copy_types<Src, Dst>() && detail::check_dma_semaphore<Sem>()) c.start(p, loc);
  return c;
}

/// Pallas' pltpu.async_remote_copy: make_async_remote_copy(...), started;
/// returns the descriptor to wait on.
template <class Src, class Dst, class SendSem, class RecvSem, class Device = DeviceId>
auto async_remote_copy(const Src& src, const Dst& dst, const SendSem& send, const RecvSem& recv, const Device& device,
                       refx::source_location loc = refx::source_location::current()) {
  auto c = make_async_remote_copy(src, dst, send, recv, device, loc);
  if constexpr (detail::check_copy_types<Src, Dst>() && detail::check_dma_semaphore<SendSem>() &&
                detail::check_dma_semaphore<RecvSem>() && detail::check_device_id<Device>())
    c.start(loc);
  return c;
}

/// Copies `src` into `dst` and waits for it.
template <class Src, class Dst>
void sync_copy(const Src& src, const Dst& dst, refx::source_location loc = refx::source_location::current()) {
  if constexpr (!detail::check_copy_types<Src, Dst>()) return;
  else
    run_scoped(
        [&](DmaSemaphore sem) {
          const auto c = make_async_copy(src, dst, sem, loc);
          c.start(loc);
          c.wait(loc);
        },
        loc);
}

}  // namespace refx
