#pragma once
// Collective matmul: out = all_gather(a) @ b, with the all-gather of a's
// row blocks overlapped with the local matmul of the block already here.
// a (m, k) and b (k, n) per device, out (N*m, n); all in Vmem. out's
// element type may be wider than a's and b's: bf16 blocks multiply into an
// f32 out through dot<float> (JAX's preferred_element_type), unrounded.

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

template <class A, class B, class Out>
void collective_matmul(const A& a, const B& b, const Out& out, AxisName axis,
                       refx::source_location loc = refx::source_location::current()) {
  constexpr bool refs =
      is_ref_v<A> && is_ref_v<B> && is_ref_v<Out> && !is_semaphore_v<A> && !is_semaphore_v<B> && !is_semaphore_v<Out>;
  static_assert(refs, "refx: collective_matmul operates on Refs (a and b read-only, out writable)");
  if constexpr (!refs) {
    return;
  } else {
    constexpr bool ok = A::rank == 2 && B::rank == 2 && Out::rank == 2 &&
                        !std::is_same_v<std::remove_const_t<typename A::value_type>, bool> &&
                        std::is_same_v<typename A::value_type, typename B::value_type> && !Out::read_only;
    static_assert(A::rank == 2 && B::rank == 2 && Out::rank == 2, "refx: collective_matmul multiplies matrices");
    static_assert(!std::is_same_v<std::remove_const_t<typename A::value_type>, bool>,
                  "refx: collective_matmul multiplies numbers; a bool matrix has no product");
    static_assert(std::is_same_v<typename A::value_type, typename B::value_type>,
                  "refx: collective_matmul: a and b must have one element type; cast one of them first");
    static_assert(!Out::read_only, "refx: collective_matmul's output must be a writable Ref<T>, not Ref<const T>");
    if constexpr (!ok) {
      return;
    } else {
      using T = typename A::value_type;
      using R = std::remove_const_t<typename Out::value_type>;  // the local products' element type
      const detail::Ring ring(axis, loc);
      const std::int64_t m = a.shape()[0], k = a.shape()[1];
      if (out.shape()[0] != m * ring.size || out.shape()[1] != b.shape()[1] || b.shape()[0] != k)
        trace_error(loc, "collective_matmul: shapes a{} b{} out{} do not fit {} devices", a.shape(), b.shape(),
                    out.shape(), ring.size);
      // bf16 / f16 / f8 blocks multiplying into f32: b is widened once here, not
      // inside each of the N products (exact either way: a narrow float widens exactly).
      constexpr bool widen = is_narrow_float_v<T> && std::is_same_v<R, float>;
      run_scoped(
          {Shape{2, m, k}, Shape{}, Shape{}, Shape{}},
          [&](Ref<T, extents<2, dyn, dyn>, Vmem> blocks, RegularSemaphore capacity, DmaSemaphore send,
              DmaSemaphore recv) {
            const auto rhs = [&] {
              if constexpr (widen) return cast<float>(b.load(loc), loc);
              else return b.load(loc);
            }();
            // Step s multiplies the block of device me - s (a itself at
            // step 0, then the one received into slot (s - 1) % 2) while
            // sending it on into the right neighbour's slot s % 2.
            const auto step = [&](const auto& cur, int s) {
              std::optional<AsyncRemoteCopy> c;
              if (s + 1 < ring.size) {
                // The neighbour's slot s % 2 held the block it multiplied
                // at step s - 1: wait until it says it is done. At kernel
                // entry, before step 0, the slot was never used
                // (docs/collectives.md, "At kernel entry").
                if (s > 0 || !ring.entry) detail::handshake(capacity, ring.peer(-1));
                c = make_async_remote_copy(cur, blocks.at(s % 2), send, recv, ring.peer(1), loc);
                c->start(loc);
              }
              const auto lhs = [&] {
                if constexpr (widen) return cast<float>(cur.load(loc), loc);
                else return cur.load(loc);
              }();
              const auto owner = ring.offset(-s);
              out.at(ds(owner * static_cast<std::int32_t>(m), m)).store(dot<R>(lhs, rhs, loc));
              if (c) c->wait(loc);
            };
            step(a, 0);
            for (int s = 1; s < ring.size; ++s) step(blocks.at((s - 1) % 2), s);
          },
          loc);
    }
  }
}

}  // namespace refx::collectives
