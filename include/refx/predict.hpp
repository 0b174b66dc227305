#pragma once
// Predicted time on a TPU generation (docs/targets.md, "Predicted time"):
// runs one call of an Executable in a deterministic discrete-event model of
// the target instead of the threaded runtime, and returns when each device
// would finish, how long it waited and how much of that was communication,
// and a predicted timeline in the runtime's Chrome-trace format.
//
//   refx::Prediction p = refx::predict(exe, refx::targets::v5e(), x, y);  // one Array per parameter, in place
//   std::fputs(p.to_string().c_str(), stdout);
//   p.write_timeline("predicted.json");                                  // modelled microseconds
//
// The call's results are computed as a call_in_place would compute them (the
// model runs the same graph with the same evaluator). The prediction depends
// only on the program, its arguments and the target: the same on every run,
// whatever the worker count or host load.

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/source_location.hpp>
#include <refx/ir/graph.hpp>
#include <refx/kernel.hpp>
#include <refx/target/target.hpp>

namespace refx {

namespace detail {
class PredictModel;
}  // namespace detail

/// One device's modelled call, in seconds from the call's start.
struct DevicePrediction {
  double seconds = 0;          ///< when the device's last op ended
  double busy_seconds = 0;     ///< in ops the target gives a duration (dot, vector ops)
  double waiting_seconds = 0;  ///< blocked in semaphore_wait or a copy's wait
  /// Blocked in a copy's wait (dma_wait): its data had not arrived, or not
  /// left, yet. Communication that overlapped compute is not in here.
  double exposed_communication_seconds = 0;
  std::int64_t copies = 0;      ///< copies started (local and remote)
  std::int64_t bytes_sent = 0;  ///< bytes of the remote ones
  double fixed_seconds = 0;     ///< the collective's fixed cost at the call's start (Target::ici)
};

/// Ops the target has no figure for: modelled as taking no time, and listed.
struct UnknownCost {
  std::string op;      ///< the primitive
  std::string source;  ///< the user's file:line
  std::string reason;  ///< which figure is missing
  std::int64_t count = 0;
};

/// One op as the model ran it (seconds from the call's start).
struct PredictedOp {
  OpId op = no_id;
  double begin = 0, end = 0;
  bool waited = false;  ///< the op is a wait that blocked
  /// What ended a wait that blocked: a copy landing (index into
  /// Prediction::copies), or a signal from device `woken_by_device`; -1 if neither.
  std::int32_t woken_by_copy = -1;
  std::int32_t woken_by_device = -1;
};

/// One copy as the model routed it.
struct PredictedCopy {
  OpId op = no_id;
  std::int32_t from = 0, to = 0;
  std::int64_t bytes = 0, hops = 0;
  double issued = 0;           ///< when the device started it
  double start = 0;            ///< when its links were free
  double arrival = 0;          ///< when its last byte landed (its semaphores rose)
  double serialisation = 0;    ///< its bytes at the link's (or HBM's) working rate
  std::int64_t ring_hops = 0;  ///< the hops it would cross were every torus axis a ring
};

/// The model's answer for one call.
class Prediction {
 public:
  std::string kernel, target, mesh;
  /// The chips the mesh lies on, per torus axis ("4x4x4"; TorusLayout).
  std::string slice;
  std::vector<DevicePrediction> devices;
  std::vector<UnknownCost> unknown;
  /// Per device, its ops in program order; and every copy in issue order.
  std::vector<std::vector<PredictedOp>> ops;
  std::vector<PredictedCopy> copies;
  /// The target's figures the model used.
  struct Figures {
    double link_peak = 0, link_working = 0;  ///< one direction of one link, bytes per second
    double hop_latency = 0, hbm = 0;         ///< seconds per hop; HBM bytes per second
    double dma_issue = 0, collective_fixed = 0;
    std::int32_t wraparound_multiple = 0;
  } figures;

  /// The call's predicted time: the slowest device's.
  double seconds() const;
  /// A table: per device total, busy, waiting and exposed communication in
  /// microseconds, then the ops with no figure.
  std::string to_string() const;
  /// Chrome Trace Event JSON in modelled microseconds (docs/runtime.md's
  /// format: a lane per device with the call and its ops, a lane per
  /// device's outgoing copies).
  std::string timeline_json() const;
  /// Writes timeline_json() to `path`; throws refx::Error naming the path.
  void write_timeline(const std::string& path) const;
  /// Where device `device`'s time goes (by default the slowest's), step by
  /// step: each wait that blocked is a step, and the copy or signal that
  /// ended it is taken apart into link serialisation (at the working rate,
  /// and what the peak would give), hops, contention for its links (queued
  /// behind other transfers) and a wraparound the slice lacks, next to the
  /// compute that ran beside it (how much of the copy it hid). Then the
  /// totals over every step.
  std::string explain(std::int32_t device = -1) const;
  /// Op `op` of the program (PredictedOp::op, PredictedCopy::op): its
  /// timeline name, and its source line as file:line.
  std::string op_name(OpId op) const;
  std::string op_source(OpId op) const;

 private:
  friend class detail::PredictModel;
  // Names and lines are formatted when asked for, not on every call.
  std::shared_ptr<const Program> program_;
};

/// Where a program's mesh lies on the target's torus (docs/targets.md, "The
/// mesh on the torus"). Copies are routed between the chips it assigns, one
/// torus axis after another. The default (both members empty) puts mesh
/// axis i on torus axis i, over as many chips as the mesh axis has devices.
///
///   refx::TorusLayout{.axes = {{1}, {0}}}                     // {x=4, y=16} on v5e: x along torus axis 1
///   refx::TorusLayout{.slice = {4, 4}, .axes = {{0, 1}}}      // {x=16} folded over a 4x4 slice, row by row
///   refx::TorusLayout{.slice = {4, 4, 4}, .axes = {{0, 1}, {2}}}  // {x=16, y=4} on a v5p 4x4x4 cube
struct TorusLayout {
  /// Chips of the slice along each torus axis (one entry per torus axis,
  /// each at most the target's; an axis is a ring when the target's
  /// wraparound_multiple divides it). Empty: each mesh axis' size on the
  /// torus axis it runs along, 1 elsewhere.
  std::vector<std::int32_t> slice{};
  /// Per mesh axis, the torus axes it runs along, major first: its
  /// coordinate is split row-major over their extents in the slice. Every
  /// torus axis is named at most once; one the mesh leaves out must have 1
  /// chip in the slice. Empty: mesh axis i on torus axis i.
  std::vector<std::vector<std::int32_t>> axes{};
  /// Fold a mesh axis that runs along several torus axes in serpentine
  /// order instead of row by row: each minor digit runs backwards where the
  /// digits above it make an odd number, so that consecutive coordinates
  /// sit on neighbouring chips (a ring folded over a 2x2 face is 4 single
  /// hops, not one diagonal).
  bool serpentine = false;
};

/// Runs one call of `exe` (one Array per parameter, outputs written in place
/// as call_in_place writes them) in the model of target `t`, its mesh laid
/// out on the torus as `layout` says. Throws refx::Error for an invalid
/// target or a layout that cannot be (a mesh larger than the torus), or a
/// kernel compiled for several cores per device (naming `loc`, the call's
/// line), and RuntimeError for what the call itself would throw, or a
/// deadlock in modelled time.
REFX_DECL Prediction predict(const Executable& exe, const Target& t, const TorusLayout& layout,
                             const std::vector<Array>& args,
                             refx::source_location loc = refx::source_location::current());

/// predict with the default layout: mesh axis i on torus axis i.
inline Prediction predict(const Executable& exe, const Target& t, const std::vector<Array>& args,
                          refx::source_location loc = refx::source_location::current()) {
  return predict(exe, t, TorusLayout{}, args, loc);
}

namespace detail {
/// predict() without moving the copies' bytes: the same modelled times for a
/// kernel whose control flow does not read what its copies carry (the
/// collectives calibrate() predicts), its outputs not written.
REFX_DECL Prediction predict_times(const Executable& exe, const Target& t, const TorusLayout& layout,
                                   const std::vector<Array>& args,
                                   refx::source_location loc = refx::source_location::current());

/// The Executable given to predict(exe, t, arrays...) and the line of that
/// call: a parameter pack leaves no room for a defaulted location after it,
/// so the conversion to this type takes it.
struct PredictedExecutable {
  const Executable& exe;
  refx::source_location loc;
  PredictedExecutable(const Executable& e,  // NOLINT: implicit on purpose
                      refx::source_location l = refx::source_location::current())
      : exe(e), loc(l) {}
};
}  // namespace detail

template <class... A>
  requires(std::is_same_v<A, Array> && ...)
Prediction predict(detail::PredictedExecutable exe, const Target& t, const A&... args) {
  return predict(exe.exe, t, TorusLayout{}, std::vector<Array>{args...}, exe.loc);
}

template <class... A>
  requires(std::is_same_v<A, Array> && ...)
Prediction predict(detail::PredictedExecutable exe, const Target& t, const TorusLayout& layout, const A&... args) {
  return predict(exe.exe, t, layout, std::vector<Array>{args...}, exe.loc);
}

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/predict/detail/torus_layout.hpp>
#include <refx/predict/detail/model.hpp>
#include <refx/predict/detail/prediction_output.hpp>
#include <refx/predict/detail/explain.hpp>
#endif
