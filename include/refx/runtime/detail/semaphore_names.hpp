#pragma once
// How the runtime's deadlock and exit reports name a semaphore: as
// semaphore_name() does (ir/printer.hpp: its name, or where it was
// allocated), and, for an unnamed dma semaphore, which copy it serves and as
// what, so that the send and the receive semaphore of one scope read apart:
// "... (receive semaphore of the remote copy at k.cpp:12)".

#include <string>

#include <fmt/format.h>

#include <refx/ir/graph.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/ir/printer.hpp>

namespace refx::detail {

/// The role of dma semaphore `v` in the first copy that uses it, or "".
inline std::string semaphore_role(const Graph& g, ValueId v) {
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim != &prim::dma_start) continue;
    const auto views = g.views(op);  // [src, dst, recv_sem(, send_sem)]
    for (std::size_t i = 2; i < views.size() && i < 4; ++i)
      if (g.view(views[i]).ref == v)
        return fmt::format("{} semaphore of the {}copy at {}", i == 2 ? "receive" : "send",
                           prim::dma_start_attrs(g, op).remote ? "remote " : "", op.loc);
  }
  return {};
}

/// semaphore_name(), with the role of an unnamed dma semaphore.
inline std::string report_semaphore_name(const Graph& g, ValueId v) {
  std::string s = semaphore_name(g, v);
  if (g.name(v).empty() && g.type(v).is_semaphore() && g.type(v).semaphore == SemaphoreKind::dma)
    if (std::string role = semaphore_role(g, v); !role.empty()) s += " (" + role + ")";
  return s;
}

}  // namespace refx::detail
