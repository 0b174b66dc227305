#pragma once
// RuntimeOptions: how a Runtime schedules, copies and checks (workers, copy
// sizes, checked modes, the timeline, the transport to other processes).

#include <cstddef>
#include <cstdint>
#include <memory>

#include <refx/transport/transport.hpp>

namespace refx {

struct RuntimeOptions {
  /// Worker threads; 0 = the hardware's.
  unsigned workers = 0;
  /// Copies up to this size run inline on the starting device's worker.
  std::size_t inline_copy_bytes = std::size_t{256} << 10;
  /// Larger copies are split into chunks of about this size.
  std::size_t copy_chunk_bytes = std::size_t{512} << 10;
  /// A program without loops or host effects whose copies and values are all
  /// at most this size runs its devices one after another on one worker at a
  /// time, whatever the device count: a device woken by a peer waits for the
  /// running one to block instead of being handed to another thread (a
  /// thread wake-up costs more than such a program's work). Other programs
  /// spread their devices over every worker.
  std::size_t single_worker_bytes = std::size_t{64} << 10;
  /// A static communication program (copies, semaphores and index
  /// arithmetic only; docs/runtime.md, "Bound launches") whose largest copy
  /// is at most this size runs bound when it has no more devices than there
  /// are workers and nothing else is queued. Each device's copies, signals
  /// and waits, recorded at the program's first call, are replayed: device
  /// 0's by the calling thread during dispatch, each other device's by a
  /// worker of its own. 0: never.
  std::size_t bound_launch_bytes = std::size_t{1} << 20;
  /// A program that only computes on one device (no loop, semaphore, copy
  /// or host effect; docs/runtime.md, "Inline launches") whose largest value
  /// or Ref is at most inline_launch_bytes and whose dots total at most
  /// inline_launch_macs multiply-adds runs on the calling thread during
  /// dispatch when nothing else is queued: its work takes less than handing
  /// it to a worker would. 0 bytes: never.
  std::size_t inline_launch_bytes = std::size_t{1} << 20;
  std::int64_t inline_launch_macs = std::int64_t{1} << 21;
  /// Non-zero: run queued tasks in a random order seeded by this (testing).
  std::uint64_t shuffle_seed = 0;
  /// Checked mode: a happens-before race detector reports unordered
  /// conflicting accesses (vector clocks through semaphores and copies).
  bool detect_races = false;
  /// Checked mode: a copy runs only when someone waits on its semaphore (or
  /// at the end of the kernel), exposing code that reads before it waits.
  bool lazy_copies = false;
  /// Record a timeline from construction on, as start_timeline() does.
  bool record_timeline = false;
  /// Where copies and signals to devices of other processes go; null: every
  /// device is in this process (docs/transport.md). Runtime::global() sets
  /// up MPI by itself when refx is built with MPI and started by mpirun.
  std::shared_ptr<transport::Remote> transport = nullptr;
};

}  // namespace refx
