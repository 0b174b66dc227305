#pragma once
// Ring reduce-scatter and all-reduce over a mesh axis, uni- or
// bidirectional. In place, blocks move by combining copies
// (start(accumulate)): the receiver's chunk is added to in place, so no
// staging copy is made. Out of place (x into out), blocks move by plain
// copies and the receiver adds its own chunk of x, so x is not staged either.
// The one-shot and direct all-reduce, and the direct reduce-scatter, are here
// too.
//
// Reduce-scatter: after N-1 steps device `me` holds the fully reduced chunk
// `me` (chunks cut along the leading dimension; sizes need not divide).
// All-gather then circulates the reduced chunks for N-1 more steps
// (Algorithm::ring), or each device sends its chunk to every other device
// in one round (Algorithm::ring_direct).

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

enum class Direction { unidirectional, bidirectional };

}  // namespace refx::collectives

namespace refx::detail {

/// One ring lane: a part of the buffer circulating in one direction.
template <class R>
struct Lane {
  R buffer;
  int dir;  // +1: send to the right; -1: send to the left
  RegularSemaphore capacity;
  DmaSemaphore send, recv;
  DmaSemaphore local;       // out of place: adding this device's own values
  int part = 0, parts = 1;  // this lane's share of every chunk
};

/// This lane's part of a chunk: lanes split every chunk (not the buffer), so
/// chunk me is reduced by all lanes.
template <class R, class V>
auto lane_part(const Lane<R>& l, const V& chunk) {
  const std::int64_t len = chunk.shape()[0], b = len * l.part / l.parts, e = len * (l.part + 1) / l.parts;
  return chunk.at(ds(b, e - b));
}

/// Calls fn(view) with this lane's part of chunk c of the buffer.
template <class R, class F>
void for_lane_chunk(const Lane<R>& l, const Scalar<std::int32_t>& c, std::int64_t n, F&& fn) {
  for_chunk(l.buffer, c, n, [&](auto v) { fn(lane_part(l, v)); });
}

/// Calls fn(own, view) with this lane's part of chunk c of `own` (a Ref
/// shaped like the buffer) and of the buffer.
template <class R, class X, class F>
void for_lane_chunk(const Lane<R>& l, const X& own, const Scalar<std::int32_t>& c, std::int64_t n, F&& fn) {
  for_chunk_bounds(l.buffer.shape()[0], c, n, [&](const Scalar<std::int32_t>& start, std::int64_t rows) {
    fn(lane_part(l, own.at(ds(start, rows))), lane_part(l, l.buffer.at(ds(start, rows))));
  });
}

/// Runs `steps` ring steps on every lane together (their copies overlap).
/// At step s a lane sends chunk send_chunk(s) and receives recv_chunk(s).
/// With `reduce`, blocks are combined into the receiver's buffer. With `own`
/// as well (out of place), this device's values are in *own, not in the
/// buffer: step 0 sends them, every block travels as a plain copy, and its
/// receiver then adds its own values to it (no copy of *own into the buffer
/// beforehand, and every chunk of the buffer is written before it is read).
template <class R, class SendChunk, class RecvChunk, class X = R>
void ring_steps(const Ring& ring, std::vector<Lane<R>>& lanes, int steps, SendChunk send_chunk, RecvChunk recv_chunk,
                bool reduce, ReduceOp op, bool entry, const X* own = nullptr) {
  for (int s = 0; s < steps; ++s) {
    // At kernel entry the first step's receivers are free (nothing to wait
    // for). Every lane signals before any lane waits: lane B's sender is not
    // held up by lane A's wait (one hop of latency per step otherwise).
    if (s > 0 || !entry) {
      for (auto& l : lanes) semaphore_signal(l.capacity, 1, ring.peer(-l.dir));
      for (auto& l : lanes) semaphore_wait(l.capacity, 1);
    }
    for (auto& l : lanes) {
      if (own != nullptr && s == 0) {
        for_lane_chunk(l, *own, send_chunk(l, s), ring.size, [&](auto mine, auto v) {
          make_async_remote_copy(mine, v, l.send, l.recv, ring.peer(l.dir)).start();
        });
        continue;
      }
      for_lane_chunk(l, send_chunk(l, s), ring.size, [&](auto v) {
        const auto c = make_async_remote_copy(v, v, l.send, l.recv, ring.peer(l.dir));
        if (reduce && own == nullptr) c.start(combine(op));
        else c.start();
      });
    }
    for (auto& l : lanes) {
      for_lane_chunk(l, send_chunk(l, s), ring.size,
                     [&](auto v) { make_async_remote_copy(v, v, l.send, l.recv, ring.peer(l.dir)).wait_send(); });
      for_lane_chunk(l, recv_chunk(l, s), ring.size,
                     [&](auto v) { make_async_remote_copy(v, v, l.send, l.recv, ring.peer(l.dir)).wait_recv(); });
    }
    if (reduce && own != nullptr) {
      for (auto& l : lanes)
        for_lane_chunk(l, *own, recv_chunk(l, s), ring.size,
                       [&](auto mine, auto v) { make_async_copy(mine, v, l.local).start(combine(op)); });
      for (auto& l : lanes)
        for_lane_chunk(l, *own, recv_chunk(l, s), ring.size,
                       [&](auto mine, auto v) { make_async_copy(mine, v, l.local).wait(); });
    }
  }
}

template <class R, class F>
void with_lanes(const R& x, collectives::Direction d, F&& body) {
  const std::int64_t m = x.shape()[0];
  using View = decltype(x.at(ds(0, 1)));
  run_scoped([&](RegularSemaphores<2> capacity, DmaSemaphores<2> send, DmaSemaphores<2> recv, DmaSemaphores<2> local) {
    std::vector<Lane<View>> lanes;
    if (d == collectives::Direction::unidirectional || m < 2) {
      lanes.push_back({x.at(ds(0, m)), +1, capacity.at(0), send.at(0), recv.at(0), local.at(0)});
    } else {
      lanes.push_back({x.at(ds(0, m)), +1, capacity.at(0), send.at(0), recv.at(0), local.at(0), 0, 2});
      lanes.push_back({x.at(ds(0, m)), -1, capacity.at(1), send.at(1), recv.at(1), local.at(1), 1, 2});
    }
    body(lanes);
  });
}

/// In place, or with `own` out of place from *own into the lanes' buffer
/// (see ring_steps).
template <class R, class X = R>
void reduce_scatter_steps(const Ring& ring, std::vector<Lane<R>>& lanes, ReduceOp op, const X* own = nullptr) {
  // Send chunk me - dir*(s+1), receive me - dir*(s+2): device me ends with chunk me.
  ring_steps(
      ring, lanes, ring.size - 1, [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * (s + 1)); },
      [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * (s + 2)); }, true, op, ring.entry, own);
}

template <class R>
void all_gather_steps(const Ring& ring, std::vector<Lane<R>>& lanes) {
  ring_steps(
      ring, lanes, ring.size - 1, [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * s); },
      [&](const Lane<R>& l, int s) { return ring.offset(-l.dir * (s + 1)); }, false, ReduceOp::sum, false);
}

/// Sends this device's reduced chunk `mine` (rows of `buffer`) into every
/// other device's buffer, then waits once for the N-1 other chunks: the rest
/// of the buffer's rows (DMA semaphores count bytes). The all-gather of
/// ring_direct and round 2 of direct.
template <class R, class V>
void send_chunk_to_all(const Ring& ring, const R& buffer, const V& mine, const DmaSemaphore& send,
                       const DmaSemaphore& recv) {
  for (std::int32_t k = 1; k < ring.size; ++k) make_async_remote_copy(mine, mine, send, recv, ring.peer(k)).start();
  for (std::int32_t k = 1; k < ring.size; ++k) make_async_remote_copy(mine, mine, send, recv, ring.peer(k)).wait_send();
  const auto rest = buffer.at(ds(0, buffer.shape()[0] - mine.shape()[0]));
  make_async_remote_copy(rest, rest, send, recv, ring.peer(0)).wait_recv();
}

/// Algorithm::ring_direct's all-gather: device `me` sends its reduced chunk
/// straight into chunk `me` of every other device, then waits for the N-1
/// others. Neither a barrier nor a handshake is needed: a device completes
/// its chunk only once every other device's part of it has reached it
/// (in each lane the chunk's partial sum passes through every device, and
/// each send is waited for), so by then no device reads or adds into that
/// chunk any more. The only chunk a device reads here is its own, which no
/// other device writes.
template <class R>
void all_gather_to_all(const Ring& ring, const R& buffer) {
  // Semaphores of its own: DMA semaphores count bytes, so a fast peer's
  // chunk must not satisfy a reduce-scatter wait.
  run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
    for_chunk_bounds(buffer.shape()[0], ring.me, ring.size, [&](const Scalar<std::int32_t>& start, std::int64_t rows) {
      send_chunk_to_all(ring, buffer, buffer.at(ds(start, rows)), send, recv);
    });
  });
}

/// The all-gather phase after reduce_scatter_steps: ring steps, or with
/// Algorithm::ring_direct one round to all.
template <class R>
void all_gather_phase(const Ring& ring, std::vector<Lane<R>>& lanes, collectives::Algorithm a) {
  if (a == collectives::Algorithm::ring_direct) all_gather_to_all(ring, lanes.front().buffer);
  else all_gather_steps(ring, lanes);
}

}  // namespace refx::detail

namespace refx::collectives {

/// In-place ring reduce-scatter along `axis`: afterwards chunk `me` of x's
/// leading dimension holds the reduction over all devices (the other chunks
/// hold partial results).
template <class R>
void reduce_scatter_in_place(const R& x, AxisName axis, ReduceOp op = ReduceOp::sum,
                             Direction d = Direction::unidirectional,
                             refx::source_location loc = refx::source_location::current()) {
  if constexpr (!(detail::check_in_place_ref<R>() && detail::check_reducible<R>())) {
    return;
  } else {
    const detail::Ring ring(axis, loc);
    if (ring.size == 1) return;
    detail::with_lanes(x, d, [&](auto& lanes) { detail::reduce_scatter_steps(ring, lanes, op); });
  }
}

/// all_reduce's Algorithm::automatic: one_shot up to `one_shot_max_bytes` per
/// device, direct for N > 2 below `direct_max_bytes`, ring_direct otherwise
/// (from 128 KiB to 4 MiB, in place and out of place, ring_direct took up to
/// 47% less time than direct at N = 4 and 8; at 64 KiB direct was level or
/// ahead at N = 8: docs/notes/performance-history.md, 881461e).
///
/// The largest x (bytes per device) that Algorithm::automatic reduces in one shot.
inline constexpr std::int64_t one_shot_max_bytes = 32 << 10;
/// all_reduce's Algorithm::automatic uses the direct algorithm (N > 2) below
/// this size per device, in place and out of place.
inline constexpr std::int64_t direct_max_bytes = 128 << 10;
/// The out-of-place reduce_scatter's Algorithm::automatic uses the direct
/// algorithm for N > 2 below this size of x per device (for N = 2 up to
/// `one_shot_max_bytes`), the ring otherwise: docs/notes/performance-history.md,
/// bb3b852.
inline constexpr std::int64_t reduce_scatter_direct_max_bytes = 256 << 10;

}  // namespace refx::collectives

namespace refx::detail {
/// What Algorithm::automatic picks for an all-reduce of x.
template <class R>
collectives::Algorithm automatic_all_reduce(const R& x, const Ring& ring) {
  const std::int64_t bytes = x.shape().num_elements() * static_cast<std::int64_t>(sizeof(typename R::value_type));
  if (bytes <= collectives::one_shot_max_bytes) return collectives::Algorithm::one_shot;
  if (ring.size > 2 && bytes < collectives::direct_max_bytes) return collectives::Algorithm::direct;
  return collectives::Algorithm::ring_direct;
}

/// Direct ("two-shot") all-reduce. Round 1: chunk p of x goes to device p's
/// slot `me`; each device combines its chunk, its own part first, then the
/// others in the order of device ids, into out (x itself in place). Round 2:
/// each device's reduced chunk goes to every other device's out. Every
/// device ends with bitwise the same result (the owner reduced it).
/// Takes x, or null in place (x is out).
template <class Src, class Dst>
void all_reduce_direct(const Src* x, const Dst& out, const Ring& ring, ReduceOp op) {
  const std::int32_t n = ring.size;
  const std::int64_t m = out.shape()[0];
  Shape slots_shape{n, (m + n - 1) / n};
  for (std::size_t d = 1; d < out.shape().rank(); ++d) slots_shape.push_back(out.shape()[d]);
  using Slots = Ref<typename Dst::value_type, dyn_extents<Dst::rank + 1>, Hbm>;
  run_scoped({slots_shape, Shape{}, Shape{}, Shape{}, Shape{}, Shape{}},
             // Round 1's parts and round 2's results arrive on separate semaphores: DMA
             // semaphores count bytes, so a fast peer's result must not satisfy a wait for parts.
             [&](Slots slots, RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv, DmaSemaphore local,
                 DmaSemaphore recv2) {
               // Every device's slots and out are free (it has reached this call).
               barrier_all(ready, ring);
               // Round 1: my part of every other device's chunk.
               const auto send_parts = [&](const auto& src) {
                 for (std::int32_t k = 1; k < n; ++k) {
                   const auto p = ring.offset(k);
                   for_chunk(src, p, n, [&](auto v) {
                     const auto c =
                         make_async_remote_copy(v, slots.at(ring.me).at(ds(0, v.shape()[0])), send, recv, ring.at(p));
                     c.start();
                     c.wait_send();
                   });
                 }
               };
               if (x != nullptr) send_parts(*x);
               else send_parts(out);
               for_chunk_bounds(m, ring.me, n, [&](const Scalar<std::int32_t>& start, std::int64_t rows) {
                 const auto mine = out.at(ds(start, rows));
                 if (x != nullptr) {
                   const auto own = make_async_copy(x->at(ds(start, rows)), mine, local);
                   own.start();
                   own.wait();
                 }
                 // n-1 parts of my chunk arrive; DMA semaphores count bytes, so one wait takes them all.
                 const auto parts = slots.at(ds(0, n - 1)).at(all, ds(0, rows));
                 make_async_remote_copy(parts, parts, send, recv, ring.peer(0)).wait_recv();
                 // Combine in device order: slot j holds device j's part (mine is in out already).
                 for (std::int32_t j = 0; j < n; ++j) {
                   when(ring.me != j, [&] {
                     const auto c = make_async_copy(slots.at(j).at(ds(0, rows)), mine, local);
                     c.start(combine(op));
                     c.wait();
                   });
                 }
                 // Round 2: every peer received its parts from me, so it has finished reading
                 // its copy of my chunk: send it the result.
                 send_chunk_to_all(ring, out, mine, send, recv2);
               });
             });
}
/// One-shot all-reduce: x goes to slot `me` of every device (its own by a
/// local copy); each device then reduces slots 0..N-1 in device order (one
/// fused loop in Vmem) and copies the result into out (x itself in place),
/// so every device ends with bitwise the same result.
template <class Src, class Dst>
void all_reduce_one_shot(const Src& x, const Dst& out, const Ring& ring, ReduceOp op) {
  const std::int32_t n = ring.size;
  Shape slots_shape{n};
  for (std::size_t d = 0; d < x.shape().rank(); ++d) slots_shape.push_back(x.shape()[d]);
  using T = typename Dst::value_type;
  using Slots = Ref<T, dyn_extents<Dst::rank + 1>, Vmem>;
  using Result = Ref<T, dyn_extents<Dst::rank>, Vmem>;
  run_scoped({slots_shape, x.shape(), Shape{}, Shape{}, Shape{}, Shape{}},
             [&](Slots slots, Result result, RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv,
                 DmaSemaphore local) {
               // Every device has reached this call: its slots are free.
               barrier_all(ready, ring);
               const auto mine = slots.at(ring.me);
               for (std::int32_t k = 1; k < n; ++k) make_async_remote_copy(x, mine, send, recv, ring.peer(k)).start();
               const auto own = make_async_copy(x, mine, local);
               own.start();
               for (std::int32_t k = 1; k < n; ++k)
                 make_async_remote_copy(x, mine, send, recv, ring.peer(k)).wait_send();
               own.wait();
               // N-1 copies arrive; DMA semaphores count bytes, so one wait takes them all.
               const auto parts = slots.at(ds(0, n - 1));
               make_async_remote_copy(parts, parts, send, recv, ring.peer(0)).wait_recv();
               auto acc = slots.at(0).load();
               for (std::int32_t j = 1; j < n; ++j)
                 acc = op == ReduceOp::sum ? acc + slots.at(j).load() : max(acc, slots.at(j).load());
               result.store(acc);
               const auto done = make_async_copy(result, out, local);
               done.start();
               done.wait();
             });
}
}  // namespace refx::detail

namespace refx::collectives {

/// In-place all-reduce along `axis`: afterwards every device's x holds the
/// elementwise reduction of all devices' x.
template <class R>
void all_reduce(const R& x, AxisName axis, ReduceOp op = ReduceOp::sum, Direction d = Direction::unidirectional,
                Algorithm a = Algorithm::automatic, refx::source_location loc = refx::source_location::current()) {
  if constexpr (!(detail::check_in_place_ref<R>() && detail::check_reducible<R>())) {
    return;
  } else {
    const detail::Ring ring(axis, loc);
    if (ring.size == 1) return;
    if (a == Algorithm::automatic) a = automatic_all_reduce(x, ring);
    if (a == Algorithm::one_shot) {
      detail::all_reduce_one_shot(x, x, ring, op);
      return;
    }
    if (a == Algorithm::direct) {
      detail::all_reduce_direct<R>(nullptr, x, ring, op);
      return;
    }
    detail::with_lanes(x, d, [&](auto& lanes) {
      detail::reduce_scatter_steps(ring, lanes, op);
      detail::all_gather_phase(ring, lanes, a);
    });
  }
}

/// Out-of-place all-reduce: out = reduction of every device's x (x is kept).
/// No algorithm copies x into out first: each reads x where its in-place form
/// reads its buffer (the ring and one-shot send from x; direct sends from x
/// and starts its own chunk of out with a copy of x's).
template <class Src, class Dst>
void all_reduce(const Src& x, const Dst& out, AxisName axis, ReduceOp op = ReduceOp::sum,
                Direction d = Direction::unidirectional, Algorithm a = Algorithm::automatic,
                refx::source_location loc = refx::source_location::current()) {
  if constexpr (!detail::check_collective_io<detail::Collective::all_reduce, Src, Dst>()) {
    return;
  } else {
    if (x.shape() != out.shape())
      trace_error(loc, "all_reduce: x has shape {} but out has shape {}; they must be equal", x.shape(), out.shape());
    const detail::Ring ring(axis, loc);  // before any effect: at kernel entry, the peers' out is free
    if (ring.size == 1) {
      sync_copy(x, out, loc);
      return;
    }
    if (a == Algorithm::automatic) a = automatic_all_reduce(out, ring);
    if (a == Algorithm::one_shot) {
      detail::all_reduce_one_shot(x, out, ring, op);
      return;
    }
    if (a == Algorithm::direct) {
      detail::all_reduce_direct(&x, out, ring, op);
      return;
    }
    detail::with_lanes(out, d, [&](auto& lanes) {
      detail::reduce_scatter_steps(ring, lanes, op, &x);
      detail::all_gather_phase(ring, lanes, a);
    });
  }
}

}  // namespace refx::collectives

namespace refx::detail {
/// Direct out-of-place reduce-scatter: after an all-device barrier, chunk p
/// of x goes to slot `me` of device p; each device reduces its N slots in
/// device order (one fused loop in Vmem) and copies the result to out. One
/// round, and x is never staged.
template <class Src, class Dst>
void reduce_scatter_direct(const Src& x, const Dst& out, const Ring& ring, ReduceOp op, refx::source_location loc) {
  const std::int32_t n = ring.size;
  const std::int64_t m = x.shape()[0], rows_max = (m + n - 1) / n;
  Shape slots_shape{n, rows_max}, result_shape{rows_max};
  for (std::size_t d = 1; d < x.shape().rank(); ++d) {
    slots_shape.push_back(x.shape()[d]);
    result_shape.push_back(x.shape()[d]);
  }
  using T = std::remove_const_t<typename Src::value_type>;
  using Slots = Ref<T, dyn_extents<Src::rank + 1>, Vmem>;
  using Result = Ref<T, dyn_extents<Src::rank>, Vmem>;
  run_scoped(
      {slots_shape, result_shape, Shape{}, Shape{}, Shape{}, Shape{}},
      [&](Slots slots, Result result, RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv,
          DmaSemaphore local) {
        // Every device has reached this call: its slots are free.
        barrier_all(ready, ring, loc);
        for (std::int32_t k = 1; k < n; ++k) {
          const auto p = ring.offset(k);
          for_chunk(x, p, n, [&](auto v) {
            const auto c =
                make_async_remote_copy(v, slots.at(ring.me).at(ds(0, v.shape()[0])), send, recv, ring.at(p), loc);
            c.start(loc);
            c.wait_send(loc);
          });
        }
        for_chunk(x, ring.me, n, [&](auto mine) {
          const std::int64_t rows = mine.shape()[0];
          const auto own = make_async_copy(mine, slots.at(ring.me).at(ds(0, rows)), local, loc);
          own.start(loc);
          own.wait(loc);
          // N-1 parts of my chunk arrive; DMA semaphores count bytes, so one wait takes them all.
          const auto parts = slots.at(ds(0, n - 1)).at(all, ds(0, rows));
          make_async_remote_copy(parts, parts, send, recv, ring.peer(0), loc).wait_recv(loc);
          if (rows == 0) return;
          auto acc = slots.at(0).at(ds(0, rows)).load(loc);
          for (std::int32_t j = 1; j < n; ++j) {
            const auto part = slots.at(j).at(ds(0, rows)).load(loc);
            acc = op == ReduceOp::sum ? acc + part : max(acc, part);
          }
          result.at(ds(0, rows)).store(acc);
          const auto done = make_async_copy(result.at(ds(0, rows)), out.at(ds(0, rows)), local, loc);
          done.start(loc);
          done.wait(loc);
        });
      },
      loc);
}
}  // namespace refx::detail

namespace refx::collectives {

/// Out-of-place reduce-scatter: x (the leading dimension cut into N chunks)
/// is kept; out's first rows receive this device's reduced chunk `me` (out
/// needs ceil(rows / N) rows; a shorter chunk leaves the last row untouched).
///
/// Algorithm::automatic: direct (one round, x not staged) for N > 2 below
/// `reduce_scatter_direct_max_bytes` of x per device, for N = 2 up to
/// `one_shot_max_bytes`; else, or with Algorithm::ring, the
/// ring reduces into scratch, reading x where the in-place ring reads its
/// buffer (x is not copied), and the result chunk is copied to out.
template <class Src, class Dst>
void reduce_scatter(const Src& x, const Dst& out, AxisName axis, ReduceOp op = ReduceOp::sum,
                    Direction d = Direction::unidirectional, Algorithm a = Algorithm::automatic,
                    refx::source_location loc = refx::source_location::current()) {
  if constexpr (!detail::check_collective_io<detail::Collective::reduce_scatter, Src, Dst>()) {
    return;
  } else {
    const detail::Ring ring(axis, loc);
    const std::int64_t m = x.shape()[0];
    if (out.shape()[0] * ring.size < m)
      trace_error(loc, "reduce_scatter: out has {} rows but {} rows over {} devices need {}", out.shape()[0], m,
                  ring.size, (m + ring.size - 1) / ring.size);
    if (all_reduce_only(a))
      trace_error(loc, "reduce_scatter: Algorithm::{} is an all_reduce algorithm; use ring, direct or automatic",
                  algorithm_name(a));
    const std::int64_t bytes = x.shape().num_elements() * static_cast<std::int64_t>(sizeof(typename Src::value_type));
    const bool direct_size = ring.size > 2 ? bytes < reduce_scatter_direct_max_bytes : bytes <= one_shot_max_bytes;
    if (ring.size > 1 && (a == Algorithm::direct || (a == Algorithm::automatic && direct_size))) {
      detail::reduce_scatter_direct(x, out, ring, op, loc);
      return;
    }
    if (ring.size == 1) {
      sync_copy(x, out.at(ds(0, m)), loc);
      return;
    }
    // The ring reduces into scratch, reading x where the in-place ring would read its buffer.
    using Work = Ref<std::remove_const_t<typename Src::value_type>, dyn_extents<Src::rank>, typename Src::space_type>;
    run_scoped(
        {x.shape()},
        [&](Work work) {
          detail::with_lanes(work, d, [&](auto& lanes) { detail::reduce_scatter_steps(ring, lanes, op, &x); });
          detail::for_chunk(work, ring.me, ring.size, [&](auto v) { sync_copy(v, out.at(ds(0, v.shape()[0])), loc); });
        },
        loc);
  }
}

}  // namespace refx::collectives
