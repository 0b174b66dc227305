#pragma once
// Ring reduce-scatter and all-reduce over a mesh axis, in place on a Ref,
// uni- or bidirectional. Blocks move by combining copies (start(accumulate)):
// the receiver's chunk is added to in place, so no staging copy is made.
//
// Reduce-scatter: after N-1 steps device `me` holds the fully reduced chunk
// `me` (chunks cut along the leading dimension; sizes need not divide).
// All-gather then circulates the reduced chunks for N-1 more steps.

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

enum class Direction { unidirectional, bidirectional };

namespace detail {

/// One ring lane: a part of the buffer circulating in one direction.
template <class R>
struct Lane {
  R buffer;
  int dir;  // +1: send to the right; -1: send to the left
  RegularSemaphore capacity;
  DmaSemaphore send, recv;
};

/// Runs `steps` ring steps on every lane together (their copies overlap).
/// At step s a lane sends chunk send_chunk(s) and receives recv_chunk(s).
template <class R, class SendChunk, class RecvChunk>
void ring_steps(const Ring& ring, std::vector<Lane<R>>& lanes, int steps, SendChunk send_chunk, RecvChunk recv_chunk,
                bool reduce, ReduceOp op) {
  for (int s = 0; s < steps; ++s) {
    for (auto& l : lanes) handshake(l.capacity, ring.peer(-l.dir));
    for (auto& l : lanes)
      for_chunk(l.buffer, send_chunk(l, s), ring.size, [&](auto v) {
        const auto c = make_async_remote_copy(v, v, l.send, l.recv, ring.peer(l.dir));
        if (reduce) c.start(combine(op));
        else c.start();
      });
    for (auto& l : lanes) {
      for_chunk(l.buffer, send_chunk(l, s), ring.size,
                [&](auto v) { make_async_remote_copy(v, v, l.send, l.recv, ring.peer(l.dir)).wait_send(); });
      for_chunk(l.buffer, recv_chunk(l, s), ring.size,
                [&](auto v) { make_async_remote_copy(v, v, l.send, l.recv, ring.peer(l.dir)).wait_recv(); });
    }
  }
}

template <class R, class F>
void with_lanes(const R& x, Direction d, F&& body) {
  const std::int64_t m = x.shape()[0];
  using View = decltype(x.at(ds(0, 1)));
  run_scoped([&](RegularSemaphores<2> capacity, DmaSemaphores<2> send, DmaSemaphores<2> recv) {
    std::vector<Lane<View>> lanes;
    if (d == Direction::unidirectional || m < 2) {
      lanes.push_back({x.at(ds(0, m)), +1, capacity.at(0), send.at(0), recv.at(0)});
    } else {
      lanes.push_back({x.at(ds(0, m / 2)), +1, capacity.at(0), send.at(0), recv.at(0)});
      lanes.push_back({x.at(ds(m / 2, m - m / 2)), -1, capacity.at(1), send.at(1), recv.at(1)});
    }
    body(lanes);
  });
}

template <class R>
void reduce_scatter_steps(const Ring& ring, std::vector<Lane<R>>& lanes, ReduceOp op) {
  // Send chunk me - dir*(s+1), receive me - dir*(s+2): device me ends with chunk me.
  ring_steps(
      ring, lanes, ring.size - 1, [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * (s + 1)); },
      [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * (s + 2)); }, true, op);
}

template <class R>
void all_gather_steps(const Ring& ring, std::vector<Lane<R>>& lanes) {
  ring_steps(
      ring, lanes, ring.size - 1, [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * s); },
      [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * (s + 1)); }, false, ReduceOp::sum);
}

template <class R>
constexpr void check_in_place_ref() {
  static_assert(is_ref_v<R> && !is_semaphore_v<R>, "refx: collectives operate on Refs");
  static_assert(!R::read_only, "refx: an in-place collective needs a writable Ref<T>, not Ref<const T>");
  static_assert(R::rank >= 1, "refx: collectives cut the leading dimension into chunks; pass a Ref of rank >= 1");
}

}  // namespace detail

/// In-place ring reduce-scatter along `axis`: afterwards chunk `me` of x's
/// leading dimension holds the reduction over all devices (the other chunks
/// hold partial results).
template <class R>
void reduce_scatter_in_place(const R& x, std::string_view axis, ReduceOp op = ReduceOp::sum,
                             Direction d = Direction::unidirectional,
                             std::source_location loc = std::source_location::current()) {
  detail::check_in_place_ref<R>();
  const detail::Ring ring(axis, loc);
  if (ring.size == 1) return;
  detail::with_lanes(x, d, [&](auto& lanes) { detail::reduce_scatter_steps(ring, lanes, op); });
}

/// In-place ring all-reduce along `axis`: afterwards every device's x holds
/// the elementwise reduction of all devices' x.
template <class R>
void all_reduce(const R& x, std::string_view axis, ReduceOp op = ReduceOp::sum, Direction d = Direction::unidirectional,
                std::source_location loc = std::source_location::current()) {
  detail::check_in_place_ref<R>();
  const detail::Ring ring(axis, loc);
  if (ring.size == 1) return;
  detail::with_lanes(x, d, [&](auto& lanes) {
    detail::reduce_scatter_steps(ring, lanes, op);
    detail::all_gather_steps(ring, lanes);
  });
}

/// Out-of-place all-reduce: out = reduction of every device's x.
template <class Src, class Dst>
void all_reduce(const Src& x, const Dst& out, std::string_view axis, ReduceOp op = ReduceOp::sum,
                Direction d = Direction::unidirectional, std::source_location loc = std::source_location::current()) {
  sync_copy(x, out, loc);
  all_reduce(out, axis, op, d, loc);
}

/// Out-of-place reduce-scatter: x (the leading dimension cut into N chunks)
/// is kept; out's first rows receive this device's reduced chunk `me` (out
/// needs ceil(rows / N) rows; a shorter chunk leaves the last row untouched).
template <class Src, class Dst>
void reduce_scatter(const Src& x, const Dst& out, std::string_view axis, ReduceOp op = ReduceOp::sum,
                    Direction d = Direction::unidirectional, std::source_location loc = std::source_location::current()) {
  static_assert(is_ref_v<Src> && is_ref_v<Dst>, "refx: reduce_scatter operates on Refs");
  const detail::Ring ring(axis, loc);
  const std::int64_t m = x.shape()[0];
  if (out.shape()[0] * ring.size < m)
    throw TraceError(fmt::format("refx: reduce_scatter: out has {} rows but {} rows over {} devices need {} (at {})",
                                 out.shape()[0], m, ring.size, (m + ring.size - 1) / ring.size, SourceLoc(loc)));
  using Work = Ref<typename Src::value_type, dyn_extents<Src::rank>, typename Src::space_type>;
  run_scoped({x.shape()}, [&](Work work) {
    sync_copy(x, work, loc);
    reduce_scatter_in_place(work, axis, op, d, loc);
    detail::for_chunk(work, ring.me, ring.size, [&](auto v) { sync_copy(v, out.at(ds(0, v.shape()[0])), loc); });
  }, loc);
}

}  // namespace refx::collectives
