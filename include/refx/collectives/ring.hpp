#pragma once
// What the ring collectives share: the ring along a mesh axis, chunking a
// Ref's leading dimension into N nearly equal parts (sizes need not divide),
// and the capacity handshake that keeps neighbours within one step.
// Everything here is written with the public DSL, as a user would.

#include <refx/core/source_location.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include <refx/trace/control_flow.hpp>
#include <refx/trace/copy.hpp>
#include <refx/trace/device_id.hpp>
#include <refx/trace/semaphore.hpp>

namespace refx {

/// How collectives combine values.
enum class ReduceOp { sum, max };

namespace collectives {

/// Which algorithm a collective uses. `ring`: neighbours only, N-1 (all-gather)
/// or 2(N-1) (all-reduce) lock-step rounds -- what a torus or a ring network
/// wants. `direct`: copies between all pairs in one round (all-gather) or a
/// reduce-scatter and an all-gather of direct copies in three (all-reduce):
/// the same bytes, what shared memory wants. `ring_direct` (all-reduce only):
/// the ring's reduce-scatter, then each device sends its reduced chunk
/// straight to every other device in one round, without the ring
/// all-gather's handshakes: the ring's bytes. `one_shot` (all-reduce only):
/// every device sends all of x to every other and reduces all N copies
/// itself; N times the bytes of `direct` in one round and a handful of ops,
/// which is what small messages want (latency is ops and rounds, not bytes).
/// `automatic`: see each collective.
enum class Algorithm { automatic, ring, direct, one_shot, ring_direct };

/// The enumerator's name, as in messages ("ring_direct").
constexpr std::string_view algorithm_name(Algorithm a) noexcept {
  switch (a) {
    case Algorithm::automatic: return "automatic";
    case Algorithm::ring: return "ring";
    case Algorithm::direct: return "direct";
    case Algorithm::one_shot: return "one_shot";
    case Algorithm::ring_direct: return "ring_direct";
  }
  return "?";
}

/// Only all_reduce has `one_shot` and `ring_direct`.
constexpr bool all_reduce_only(Algorithm a) noexcept { return a == Algorithm::one_shot || a == Algorithm::ring_direct; }

}  // namespace collectives

namespace detail {

inline Accumulate combine(ReduceOp op) { return op == ReduceOp::sum ? accumulate : accumulate_max; }

/// The static size of a mesh axis (collectives unroll over it).
inline std::int32_t static_axis_size(std::string_view axis, SourceLoc loc) {
  const Mesh* mesh = refx::detail::Tracer::current(loc).mesh();
  if (mesh == nullptr) trace_error(loc, "collectives need a mesh; compile the kernel with kernel(...).compile(mesh)");
  return refx::detail::traced_mesh_axis(*mesh, axis, loc).size;
}

/// This device's position on a ring along one mesh axis. A collective
/// makes one first; while it lives, the ops the collective traces are
/// attributed to the caller's line (`user_line`).
struct Ring {
  refx::detail::AttributeTo user_line;
  std::string axis;
  std::int32_t size = 1;
  Scalar<std::int32_t> me;
  /// The collective is the first thing the kernel does (at_kernel_entry):
  /// its peers' buffers are free, so it skips its entry barrier or handshake.
  bool entry = false;

  Ring(std::string_view a, refx::source_location loc)
      : user_line(loc), axis(a), size(static_axis_size(a, loc)), me(axis_index(a)), entry(at_kernel_entry(loc)) {}

  /// The ring position `me + k` (k may be negative), wrapped.
  Scalar<std::int32_t> offset(std::int64_t k) const {
    const std::int64_t m = ((k % size) + size) % size;
    return (me + static_cast<std::int32_t>(m)) % size;
  }
  /// The device at ring position `me + k`; other mesh axes are this device's own.
  DeviceId peer(std::int64_t k) const { return DeviceId::named({{axis, offset(k)}}); }
  DeviceId at(const Scalar<std::int32_t>& pos) const { return DeviceId::named({{axis, pos}}); }
};

/// Calls fn(start, rows) with the bounds of chunk `c` (traced) of a leading
/// dimension of m rows cut into `parts` nearly equal chunks (the first
/// m % parts chunks are one longer; a chunk may be empty when m < parts).
template <class F>
void for_chunk_bounds(std::int64_t m, const Scalar<std::int32_t>& c, std::int64_t parts, F&& fn) {
  const std::int64_t q = m / parts, r = m % parts;
  if (r == 0) {
    fn(c * static_cast<std::int32_t>(q), q);
    return;
  }
  const auto start = c * static_cast<std::int32_t>(q) + refx::min(c, static_cast<std::int32_t>(r));
  when(c < static_cast<std::int32_t>(r), [&] { fn(start, q + 1); });
  when(c >= static_cast<std::int32_t>(r), [&] { fn(start, q); });
}

/// Calls fn(view) with chunk `c` (traced) of x's leading dimension (see
/// for_chunk_bounds).
template <class R, class F>
void for_chunk(const R& x, const Scalar<std::int32_t>& c, std::int64_t parts, F&& fn) {
  for_chunk_bounds(x.shape()[0], c, parts,
                   [&](const Scalar<std::int32_t>& start, std::int64_t rows) { fn(x.at(ds(start, rows))); });
}

/// The out-of-place collectives, for check_collective_io's messages.
enum class Collective { all_gather, all_reduce, reduce_scatter, all_to_all };

// A static_assert whose message names the collective C: a message must be a
// string literal, so the name is spliced in by the preprocessor (one
// if-constexpr per collective; the messages are matched by tests/compile_fail/).
#define REFX_COLLECTIVE_ASSERT(name, cond, rest) \
  if constexpr (C == Collective::name) static_assert(cond, "refx: " #name rest);
#define REFX_EACH_COLLECTIVE_ASSERT(cond, rest)      \
  REFX_COLLECTIVE_ASSERT(all_gather, cond, rest)     \
  REFX_COLLECTIVE_ASSERT(all_reduce, cond, rest)     \
  REFX_COLLECTIVE_ASSERT(reduce_scatter, cond, rest) \
  REFX_COLLECTIVE_ASSERT(all_to_all, cond, rest)

/// A collective's input and output, checked at its entry (on the caller's
/// line) rather than by a copy deep inside: both Refs, the output writable,
/// one element type, and static extents that fit. Returns false (after the
/// static_assert) so the caller stops compiling there.
template <Collective C, class Src, class Dst>
constexpr bool check_collective_io() {
  constexpr bool refs = is_ref_v<Src> && !is_semaphore_v<Src> && is_ref_v<Dst> && !is_semaphore_v<Dst>;
  REFX_EACH_COLLECTIVE_ASSERT(refs,
                              " operates on Refs (read-only input, writable output); a Value is immutable, store it "
                              "into a Ref first");
  if constexpr (!refs) {
    return false;
  } else {
    constexpr bool ranked = C == Collective::all_gather || Src::rank >= 1;
    static_assert(ranked, "refx: collectives cut the leading dimension into chunks; pass a Ref of rank >= 1");
    constexpr bool reducible = (C != Collective::all_reduce && C != Collective::reduce_scatter) ||
                               !std::is_same_v<typename Src::value_type, bool>;
    static_assert(reducible,
                  "refx: all_reduce and reduce_scatter combine numbers; a bool Ref has no sum or max (reduce int32_t)");
    constexpr bool writable = !Dst::read_only;
    REFX_EACH_COLLECTIVE_ASSERT(writable, "'s output must be a writable Ref<T>, not Ref<const T>");
    constexpr bool same = std::is_same_v<typename Src::value_type, typename Dst::value_type>;
    REFX_EACH_COLLECTIVE_ASSERT(same,
                                "'s output must have its input's element type (collectives do not convert); cast "
                                "before or after");
    using SE = typename Src::extents_type;
    using DE = typename Dst::extents_type;
    constexpr bool fits = [] {
      if constexpr (C == Collective::all_gather) {
        if constexpr (DE::rank == SE::rank + 1) return extents_compatible<refx::detail::drop_axis_t<0, DE>, SE>;
        else return false;
      } else if constexpr (C == Collective::reduce_scatter) {
        if constexpr (DE::rank == SE::rank && SE::rank >= 1)
          return extents_compatible<refx::detail::drop_axis_t<0, DE>, refx::detail::drop_axis_t<0, SE>>;
        else return false;
      } else {
        return DE::rank == SE::rank && extents_compatible<SE, DE>;
      }
    }();
    if constexpr (C == Collective::all_gather)
      static_assert(DE::rank == SE::rank + 1,
                    "refx: all_gather's output has one more (leading) dimension than its input");
    if constexpr (C == Collective::all_gather)
      static_assert(fits || DE::rank != SE::rank + 1,
                    "refx: all_gather's output (N, block...) must hold blocks of the input's extents");
    if constexpr (C == Collective::reduce_scatter)
      static_assert(fits,
                    "refx: reduce_scatter's output must have its input's rank and, after the leading dimension, "
                    "its input's extents");
    if constexpr (C == Collective::all_reduce)
      static_assert(fits, "refx: all_reduce's output must have its input's extents");
    if constexpr (C == Collective::all_to_all)
      static_assert(fits, "refx: all_to_all's output must have its input's extents");
    return ranked && reducible && writable && same && fits;
  }
}

#undef REFX_EACH_COLLECTIVE_ASSERT
#undef REFX_COLLECTIVE_ASSERT

template <class R>
constexpr bool check_collective_ref() {
  constexpr bool refs = is_ref_v<R> && !is_semaphore_v<R>;
  static_assert(refs, "refx: collectives operate on Refs");
  if constexpr (!refs) {
    return false;
  } else {
    static_assert(R::rank >= 1, "refx: collectives cut the leading dimension into chunks; pass a Ref of rank >= 1");
    return R::rank >= 1;
  }
}

/// all_reduce and reduce_scatter combine elements with sum or max, which a
/// bool Ref does not have (the traced add and max refuse bool too, but only
/// at trace time and naming the collective's line, not the caller's).
template <class R>
constexpr bool check_reducible() {
  if constexpr (!is_ref_v<R> || is_semaphore_v<R>) {
    return false;
  } else {
    constexpr bool ok = !std::is_same_v<std::remove_const_t<typename R::value_type>, bool>;
    static_assert(ok,
                  "refx: all_reduce and reduce_scatter combine numbers; a bool Ref has no sum or max (reduce int32_t)");
    return ok;
  }
}

/// The checks of an in-place collective's Ref; false stops the caller
/// (`if constexpr`) before follow-on errors.
template <class R>
constexpr bool check_in_place_ref() {
  if constexpr (!check_collective_ref<R>()) {
    return false;
  } else {
    static_assert(!R::read_only, "refx: an in-place collective needs a writable Ref<T>, not Ref<const T>");
    return !R::read_only;
  }
}

/// Tells the device that sends to me that I can take its next block, then
/// waits until the device I send to says the same: neighbours stay within
/// one step of each other, so a block is never written into a slot its
/// owner still reads.
inline void handshake(const RegularSemaphore& capacity, const DeviceId& sender_to_me) {
  semaphore_signal(capacity, 1, sender_to_me);
  semaphore_wait(capacity, 1);
}

/// Every device on the ring signals every device (itself included) and waits
/// for all N signals: afterwards every device has reached this point, so
/// buffers it used before are free for direct copies from anyone. Nothing to
/// do at kernel entry, where they are free already.
inline void barrier_all(const RegularSemaphore& ready, const Ring& ring,
                        refx::source_location loc = refx::source_location::current()) {
  if (ring.entry) return;
  for (std::int32_t j = 0; j < ring.size; ++j) semaphore_signal(ready, 1, ring.at(j), loc);
  semaphore_wait(ready, ring.size, loc);
}

}  // namespace detail
}  // namespace refx
