#pragma once
// Dimension semantics (Pallas' dimension_semantics): which grid dimensions
// of a pipeline are `parallel` (their steps are independent, so the cores of
// a device may share them out) and which are `arbitrary` (a sequence, e.g.
// the reduction over k that accumulates into one output block). On a mesh
// whose devices have C cores (Mesh::with_cores), each core's copy of the
// kernel (trace/cores.hpp) runs the grid points whose parallel indices fall
// in its share: the combinations of the parallel dimensions' indices, in
// row-major order, cut into C contiguous chunks (the first chunks one longer
// when C does not divide them). A grid without a parallel dimension runs on
// core 0. Each core then pipelines its own steps, with Pallas' fetch and
// write-back rule applied between its consecutive steps. A pipeline nested in
// another's body is split the same way on every step of the outer one: mark
// parallel only the dimensions of the grid the cores should share out.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <refx/config.hpp>

namespace refx {

enum class DimensionSemantics : std::uint8_t { arbitrary, parallel };
/// A grid dimension whose steps the cores of a device may share out.
inline constexpr DimensionSemantics parallel = DimensionSemantics::parallel;
/// A grid dimension run in order on one core (the default).
inline constexpr DimensionSemantics arbitrary = DimensionSemantics::arbitrary;

namespace detail {
/// The points of `points` (a grid of extents `dims`, row-major) that core
/// `core` of `cores` runs, in order.
REFX_DECL std::vector<std::vector<std::int64_t>> core_share(const std::vector<std::vector<std::int64_t>>& points,
                                                            std::span<const std::int64_t> dims,
                                                            std::span<const DimensionSemantics> semantics,
                                                            std::int32_t core, std::int32_t cores);

/// This core's share as a range of steps [first, first + count) of the
/// row-major grid, for a rolled grid (one loop over consecutive steps): the
/// share is contiguous when no arbitrary dimension comes before a parallel
/// one. std::nullopt when it is not (the grid then stays unrolled, or a
/// rolled one is refused). A grid without a parallel dimension: all steps on
/// core 0, none on the others.
struct StepRange {
  std::int64_t first = 0, count = 0;
};
REFX_DECL std::optional<StepRange> core_step_range(std::span<const std::int64_t> dims,
                                                   std::span<const DimensionSemantics> semantics, std::int32_t core,
                                                   std::int32_t cores);
}  // namespace detail

}  // namespace refx

#if REFX_DEFINITIONS
namespace refx::detail {
/// Where chunk c of `combos` combinations cut into `cores` chunks begins
/// (the first combos % cores chunks one longer).
inline std::int64_t chunk_begin(std::int64_t c, std::int64_t combos, std::int32_t cores) {
  return c * (combos / cores) + std::min<std::int64_t>(c, combos % cores);
}

REFX_DECL std::vector<std::vector<std::int64_t>> core_share(const std::vector<std::vector<std::int64_t>>& points,
                                                            std::span<const std::int64_t> dims,
                                                            std::span<const DimensionSemantics> semantics,
                                                            std::int32_t core, std::int32_t cores) {
  if (cores == 1) return points;
  std::int64_t combos = 1;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (semantics[d] == DimensionSemantics::parallel) combos *= dims[d];
  const bool any_parallel =
      std::find(semantics.begin(), semantics.end(), DimensionSemantics::parallel) != semantics.end();
  if (!any_parallel) return core == 0 ? points : std::vector<std::vector<std::int64_t>>{};
  // Chunk c holds combinations [begin(c), begin(c + 1)).
  const auto begin = [&](std::int64_t c) { return chunk_begin(c, combos, cores); };
  std::vector<std::vector<std::int64_t>> mine;
  for (const auto& p : points) {
    std::int64_t combo = 0;
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (semantics[d] == DimensionSemantics::parallel) combo = combo * dims[d] + p[d];
    if (combo >= begin(core) && combo < begin(core + 1)) mine.push_back(p);
  }
  return mine;
}

REFX_DECL std::optional<StepRange> core_step_range(std::span<const std::int64_t> dims,
                                                   std::span<const DimensionSemantics> semantics, std::int32_t core,
                                                   std::int32_t cores) {
  std::int64_t steps = 1, combos = 1;
  std::size_t leading = 0;  // the parallel dimensions before the first arbitrary one
  while (leading < dims.size() && semantics[leading] == DimensionSemantics::parallel) combos *= dims[leading++];
  for (const std::int64_t d : dims) steps *= d;
  if (cores == 1) return StepRange{0, steps};
  if (std::find(semantics.begin() + static_cast<std::ptrdiff_t>(leading), semantics.end(),
                DimensionSemantics::parallel) != semantics.end())
    return std::nullopt;
  if (leading == 0) return core == 0 ? StepRange{0, steps} : StepRange{0, 0};
  const std::int64_t inner = steps / combos;  // the steps of one combination of the parallel indices
  const auto begin = [&](std::int64_t c) { return chunk_begin(c, combos, cores); };
  return StepRange{begin(core) * inner, (begin(core + 1) - begin(core)) * inner};
}
}  // namespace refx::detail
#endif  // REFX_DEFINITIONS
