#pragma once
// Which passes run when a kernel is compiled (pipeline.hpp runs them).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace refx {
class Rewriter;  // ir/rewrite.hpp
}  // namespace refx

namespace refx::passes {

/// What verify() does when one DMA semaphore serves two copies in flight.
enum class SharedSemaphorePolicy : std::uint8_t { error, warn, allow };

struct Options {
  bool verify = true;
  bool schedule = true;
  bool fuse = true;
  bool dce = true;
  /// Loads whose region nothing changes before the value's last use borrow
  /// the Ref's memory instead of copying it (read_in_place.hpp).
  bool read_in_place = true;
  /// Local copies that only stage a block for the ops beside them move
  /// nothing, and those ops read the source or write the destination
  /// (forward_copies.hpp): emit_pipeline's copy in, body and copy out of an
  /// elementwise block become one pass. A forwarded copy still counts in the
  /// runtime's copies and bytes (LaunchStats::forwarded), and predict() and
  /// refx::explore run the kernel's copies as written (Program::as_written).
  bool forward_copies = true;
  /// ... of at most this many bytes: a larger copy keeps moving, since the
  /// runtime runs it on another worker while the body computes
  /// (RuntimeOptions::inline_copy_bytes, the same default), which beats one
  /// pass of a memory-bound body on one core (bench_pipeline: 1 MiB blocks
  /// 0.72x the one-pass loop as written, 0.55x forwarded).
  std::size_t forward_copies_max_bytes = std::size_t{256} << 10;
  /// One DMA semaphore serving two copies in flight at once.
  // DMA semaphores count bytes, so one wait may absorb several copies (a
  // Pallas pattern refx's own collectives use): sharing is allowed unless a
  // stricter policy is asked for.
  SharedSemaphorePolicy shared_semaphore = SharedSemaphorePolicy::allow;
  /// Called with each verification warning; null prints it to stderr.
  void (*on_warning)(const std::string&) = nullptr;
  /// The user's own passes, in order, after verification and before DCE,
  /// scheduling and fusion: each may replace pure ops (ir/rewrite.hpp).
  std::vector<std::function<void(Rewriter&)>> user_passes{};
};

}  // namespace refx::passes
