#pragma once
// Fidelity checks against a Target (docs/targets.md): what a kernel that runs
// here would break on that TPU generation, found in the traced graph.
//
//   tiling        every Vmem buffer a copy fills from, or drains into, an Hbm
//                 array is a block of it: its last two extents must be
//                 multiples of the target's tile or span the array's (Pallas'
//                 BlockSpec rule; rank-1 blocks have their own)
//   capacity      the Vmem (and Smem) buffers live at once (kernel operands,
//                 allocate, nested run_scoped / run_state, a pipeline's slots)
//                 must fit one TensorCore, Vmem within the scoped limit
//                 (Target::vmem_limit); buffers are padded to whole tiles
//   element type  every Ref, and every value of rank >= 1, holds an element
//                 type the target supports; dot operands one its matrix unit
//                 takes
//   mesh          the mesh fits the largest slice, its axes laid out along
//                 the torus axes; its cores per device are the target's
//
// Each violation is a sentence "refx: ... (at file:line)" naming the user's
// line. Kernel::target(t) runs the checks when the kernel is compiled; in
// TargetMode::error the first violation is thrown as a TraceError, in
// TargetMode::warn all are kept in the Executable's target_report().

#include <cstdint>
#include <string>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/error.hpp>
#include <refx/core/mesh.hpp>
#include <refx/ir/graph.hpp>
#include <refx/target/target.hpp>

namespace refx {

/// What compiling for a target does with a violation.
enum class TargetMode : std::uint8_t {
  error,  ///< throw the first as a TraceError
  warn,   ///< keep them all in the report; compile anyway
};

/// One broken rule of a target.
struct TargetViolation {
  enum class Rule : std::uint8_t { tiling, capacity, element_type, matmul_type, mesh, semaphore };
  Rule rule = Rule::tiling;
  SourceLoc loc;        ///< the user's line it names
  std::string message;  ///< the whole sentence, "refx: ... (at file:line)[; hint]"
  /// Rule::capacity: the bytes needed and the limit they pass (0 otherwise).
  std::int64_t needed_bytes = 0, limit_bytes = 0;
};

/// What the checks found for one kernel (empty `target`: none was given).
struct TargetReport {
  std::string target;
  std::vector<TargetViolation> violations;
  std::int64_t vmem_peak_bytes = 0;   ///< the most Vmem live at once (padded)
  std::int64_t vmem_limit_bytes = 0;  ///< what it is checked against: the scoped limit (Target::vmem_limit)
  std::int64_t smem_peak_bytes = 0;
  bool ok() const noexcept { return violations.empty(); }
  /// One line per violation, then the peaks; "" when no target was given.
  REFX_DECL std::string to_string() const;
};

namespace passes {
/// Runs every check of `t` on `g` (traced for `mesh`, compiled at `kernel_loc`).
REFX_DECL TargetReport check_target(const Graph& g, const Mesh& mesh, const Target& t, SourceLoc kernel_loc);
}  // namespace passes

namespace detail {
/// validate(t), check_target, then in TargetMode::error throws the first
/// violation as a TraceError.
REFX_DECL TargetReport check_for_target(const Graph& g, const Mesh& mesh, const Target& t, TargetMode mode,
                                        SourceLoc kernel_loc);
/// "refx: <what> (at <loc>)[; <hint>]": the sentence of a violation.
template <class... Args>
std::string target_message(SourceLoc loc, const Hint& h, fmt::format_string<Args...> what, Args&&... args) {
  return located_message(loc, &h, what, std::forward<Args>(args)...);
}
}  // namespace detail

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/passes/detail/target_checks.hpp>
#endif
