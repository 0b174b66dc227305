#pragma once
// Collective matmul: out = all_gather(a) @ b, with the all-gather of a's
// row blocks overlapped with the local matmul of the block already here.
// a (m, k) and b (k, n) per device, out (N*m, n); all in Vmem.

#include <refx/collectives/ring.hpp>
#include <refx/trace/scopes.hpp>

namespace refx::collectives {

template <class A, class B, class Out>
void collective_matmul(const A& a, const B& b, const Out& out, std::string_view axis,
                       std::source_location loc = std::source_location::current()) {
  static_assert(A::rank == 2 && B::rank == 2 && Out::rank == 2, "refx: collective_matmul multiplies matrices");
  static_assert(!std::is_same_v<std::remove_const_t<typename A::value_type>, bool>,
                "refx: collective_matmul multiplies numbers; a bool matrix has no product");
  using T = typename A::value_type;
  const detail::Ring ring(axis, loc);
  const std::int64_t m = a.shape()[0], k = a.shape()[1];
  if (out.shape()[0] != m * ring.size || out.shape()[1] != b.shape()[1] || b.shape()[0] != k)
    throw TraceError(fmt::format("refx: collective_matmul: shapes a{} b{} out{} do not fit {} devices (at {})", a.shape(),
                                 b.shape(), out.shape(), ring.size, SourceLoc(loc)));
  run_scoped({Shape{2, m, k}, Shape{}, Shape{}, Shape{}},
             [&](Ref<T, extents<2, dyn, dyn>, Vmem> blocks, RegularSemaphore capacity, DmaSemaphore send,
                 DmaSemaphore recv) {
               blocks.at(0).store(a.load(loc));
               const auto rhs = b.load(loc);
               for (int s = 0; s < ring.size; ++s) {
                 const auto cur = blocks.at(s % 2), next = blocks.at((s + 1) % 2);
                 const bool more = s + 1 < ring.size;
                 std::optional<AsyncRemoteCopy> c;
                 if (more) {
                   // At kernel entry the right neighbour's slot 1 is free
                   // before step 0 (docs/collectives.md, "At kernel entry").
                   if (s > 0 || !ring.entry) detail::handshake(capacity, ring.peer(-1));
                   c = make_async_remote_copy(cur, next, send, recv, ring.peer(1), loc);
                   c->start(loc);
                 }
                 // The block held now came from device me - s: its rows of the product.
                 const auto owner = ring.offset(-s);
                 out.at(ds(owner * static_cast<std::int32_t>(m), m)).store(dot(cur.load(loc), rhs));
                 if (c) c->wait(loc);
               }
             },
             loc);
}

}  // namespace refx::collectives
