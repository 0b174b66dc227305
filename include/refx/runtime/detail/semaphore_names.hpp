#pragma once
// How the runtime's deadlock and exit reports name a semaphore: as
// semaphore_name() does (ir/printer.hpp: its name, or where it was
// allocated), and, for an unnamed dma semaphore, which copy it serves and as
// what, so that the send and the receive semaphore of one scope read apart:
// "... (receive semaphore of the remote copy at k.cpp:12)".

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/ir/graph.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/ir/printer.hpp>
#include <refx/runtime/program.hpp>

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

/// One line per semaphore of program `p` not back to 0 when its lanes end
/// (every signal must be waited and every copy waited), "" when all are:
/// `context(lane)` is the lane's ExecContext (null: not hosted here),
/// `barrier(lane, id)` its barrier semaphore of collective id `id` (null:
/// not checked, as when a lane leaves one of several calls). The
/// runtime's exit check and the controlled scheduler's (refx/explore.hpp).
template <class Context, class Barrier>
std::string unbalanced_semaphore_lines(const Program& p, Context&& context, Barrier&& barrier) {
  std::vector<std::string> problems;
  const Graph& g = p.graph;
  for (std::int32_t lane = 0; lane < p.mesh.lanes(); ++lane) {
    const auto* ctx = context(lane);
    if (ctx == nullptr) continue;
    ctx->for_each_scoped([&](ValueId v, const Buffer& b) {
      if (!g.type(v).is_semaphore()) return;
      for (std::int64_t i = 0; i < b.size(); ++i)
        if (const std::int64_t c = b.data<std::int64_t>()[i]; c != 0)
          problems.push_back(fmt::format("  {}: {}{} ends at {}{}", p.mesh.describe_lane(lane),
                                         report_semaphore_name(g, v), b.size() > 1 ? fmt::format("[{}]", i) : "", c,
                                         g.type(v).semaphore == SemaphoreKind::dma
                                             ? " (bytes of a copy started and never waited, or sent and not received)"
                                             : ""));
    });
    for (std::int64_t id : p.barrier_ids)
      if (const Buffer* b = barrier(lane, id); b != nullptr && *b->template data<std::int64_t>() != 0)
        problems.push_back(fmt::format("  {}: barrier semaphore (collective id {}) ends at {}",
                                       p.mesh.describe_lane(lane), id, *b->template data<std::int64_t>()));
  }
  if (problems.empty()) return {};  // every launch that ends clean: no formatting
  return fmt::format("{}", fmt::join(problems, "\n"));
}

/// The exit check's error for `lines` (unbalanced_semaphore_lines).
inline std::string unbalanced_semaphores_message(const Program& p, const std::string& lines) {
  return fmt::format(
      "refx: kernel '{}' ended with semaphores not back to 0 (every signal must be waited and every copy "
      "waited):\n{}",
      p.name, lines);
}

}  // namespace refx::detail
