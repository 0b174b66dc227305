#pragma once
// The transport seam: where the bytes of a remote copy and the increments of
// a semaphore signal go (docs/transport.md).
//
// In-process (the default, RuntimeOptions::transport == nullptr) every device
// lives in this process: a copy is a memcpy (or a combining loop) into the
// target's storage followed by an add on its semaphore, under the launch's
// lock -- inline in runtime/detail/launch_devices.hpp and launch_copies.hpp,
// no call through this seam, so the in-process runtime pays one predictable
// null test per copy or signal.
//
// A Remote transport (transport/mpi.hpp) spreads the devices of a mesh over
// processes ("ranks"); each rank owns a contiguous block of devices. A copy or
// a signal whose target lives on another rank is handed to it; it delivers the
// data and, only after the data has landed, the semaphore increment. It also
// decides, across ranks, when a launch has finished (exact quiescence) and
// with which error. What arrives for a launch it delivers to the launch's
// Receiver (below), the one thing it knows of the runtime, which implements
// it: nothing here includes runtime/.
//
// Runtime::global() takes its transport from default_remote(): null unless
// a transport registered itself there. <refx/transport/mpi.hpp> registers
// MPI's; the CMake target refx::mpi compiles it into every program that links
// it, so linking refx::mpi (not a macro) is what makes a program spread its
// meshes over the ranks mpirun started. RuntimeOptions::transport chooses one
// for any other Runtime.

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <refx/core/error.hpp>
#include <refx/core/shape.hpp>
#include <refx/ir/buffer.hpp>
#include <refx/ir/view_access.hpp>

namespace refx::transport {

/// Which rank hosts which device: ranks own contiguous, equal blocks.
struct Placement {
  int rank = 0;
  int ranks = 1;
  int local_ranks = 1;  // ranks on this machine (they share its cores)

  /// The rank hosting `device` of a mesh of `devices` (which must split evenly).
  int owner(std::int32_t device, std::int32_t devices) const noexcept {
    return ranks == 1 ? 0 : static_cast<int>(device / (devices / ranks));
  }
  bool hosts(std::int32_t device, std::int32_t devices) const noexcept {
    return ranks == 1 || owner(device, devices) == rank;
  }
  /// Empty, or why a mesh of `devices` cannot be placed.
  std::string check(std::int32_t devices) const {
    if (ranks == 1 || (devices >= ranks && devices % ranks == 0)) return {};
    return "refx: a mesh of " + std::to_string(devices) +
           " devices cannot be split into equal contiguous blocks over " + std::to_string(ranks) +
           " MPI ranks; run with a number of ranks that divides the mesh size";
  }
};

/// A semaphore increment for a device on another rank.
struct RemoteSignal {
  std::int64_t launch = 0;
  std::int32_t source = 0, target = 0;
  std::int32_t sem = 0;
  std::int64_t index = 0, inc = 0;
};

/// A copy into a device on another rank: where the bytes go (the destination
/// view, resolved by the sender as in-process) and which semaphore rises once
/// they have landed. The payload (`bytes`, dense) travels separately.
struct RemoteCopy {
  std::int64_t launch = 0;
  std::int32_t source = 0, target = 0;
  std::int32_t dst_ref = 0;
  std::int32_t recv_sem = 0;
  std::int64_t recv_index = 0;
  std::uint8_t reduce = 0;  // CopyReduce
  std::uint8_t dtype = 0;   // DType
  std::uint8_t rank = 0;    // of the destination view
  std::int64_t offset = 0;
  std::int64_t shape[max_rank] = {};
  std::int64_t strides[max_rank] = {};
  std::int64_t bytes = 0;
  std::int64_t recv_inc = 0;  // what recv_sem rises by when it lands: bytes, or 1 for a REGULAR semaphore
};

/// Whether a copy's destination view is one dense run of elements.
inline bool dense(const RemoteCopy& c) noexcept {
  return is_dense_run(std::span<const std::int64_t>(c.shape, c.rank), c.strides);
}

/// What a rank tells the coordinator about a launch: sent to it whenever the
/// launch becomes locally idle, and in answer to a probe.
struct Report {
  std::int64_t launch = 0;
  std::int64_t seq = 0;    // per rank and launch: which report is the latest
  std::int64_t probe = 0;  // 0: spontaneous; k: answers probe round k
  bool idle = false;       // no device runnable, no copy in flight, launch started
  bool finished = false;   // idle, and every device here finished without error: this rank sends nothing more
  std::int64_t sent = 0, received = 0;  // transport messages of this launch
  std::int64_t bytes_copied = 0, copies = 0, forwarded = 0;
  std::string error;       // this rank's own root cause, if any
  std::string parked;      // one line per device parked here
  std::string unbalanced;  // exit-invariant problems here (every device done)
};

/// How the coordinator ended a launch.
enum class Outcome : std::uint8_t { ok, failed, deadlock, unbalanced };

/// What every rank of a launch moved, summed by the coordinator.
struct Totals {
  std::int64_t bytes_copied = 0;
  std::int64_t copies = 0;
  std::int64_t forwarded = 0;
};

/// A launch as a transport sees it: where what arrives from other ranks goes.
/// The runtime's Launch implements it; every call comes on the transport's
/// thread.
class Receiver {
 public:
  /// A signal from a device on another rank.
  virtual void remote_signal(const RemoteSignal& s) = 0;
  /// Where a remote copy's bytes may be received directly (dense
  /// destination, no combining), else null: they go through remote_landed.
  virtual std::byte* remote_destination(const RemoteCopy& c) = 0;
  /// A remote copy's bytes have arrived (in `data`, or already in place when
  /// null): combine them in, then raise the receiver's semaphore.
  virtual void remote_landed(const RemoteCopy& c, Buffer* data) = 0;
  /// Combines bytes [first, first + part's first `bytes`) of a combining
  /// copy into its dense destination (the semaphore rises in remote_landed).
  virtual void remote_combine(const RemoteCopy& c, std::int64_t first, Buffer& part, std::int64_t bytes) = 0;
  /// Another rank failed: release the devices here.
  virtual void remote_failed(const std::string& message) = 0;
  /// This rank's state, for the coordinator's probe.
  virtual Report probe_report(std::int64_t probe) = 0;
  /// The coordinator ended the launch: complete it here with that outcome.
  virtual void remote_finished(Outcome outcome, const std::string& text, const Totals& totals) = 0;

 protected:
  ~Receiver() = default;
};

/// A transport to devices in other processes. One per Runtime.
class Remote {
 public:
  virtual ~Remote() = default;
  virtual Placement placement() const = 0;
  /// Launch `number` has started here: deliver what arrived for it early.
  virtual void started(std::int64_t number, std::shared_ptr<Receiver> l) = 0;
  virtual void signal(int rank, const RemoteSignal& s) = 0;
  /// Sends the header and `data` (dense, `c.bytes`) to `rank`; `sent` runs
  /// (on the transport's thread) once `data` may be reused. `keep` owns packed data.
  virtual void copy(int rank, const RemoteCopy& c, const std::byte* data, std::shared_ptr<void> keep,
                    std::function<void()> sent) = 0;
  /// A failure originated here: release every other rank's devices now.
  virtual void failed(std::int64_t number, const std::string& message) = 0;
  virtual void report(Report r) = 0;
  /// The launch completed here (after the coordinator's decision).
  virtual void finished(std::int64_t number) = 0;
  /// A host thread waiting for a result offers to do the transport's work
  /// meanwhile (it has nothing else to do, and a thread of its own would take
  /// a core's time from it); returns whether there was something to do.
  /// stop_helping() when it is done waiting.
  virtual bool help() { return false; }
  virtual void stop_helping() {}
};

/// Makes the transport Runtime::global() uses (null: in-process).
using RemoteFactory = std::shared_ptr<Remote> (*)();
/// The factory Runtime::global() calls when it is first used; a transport
/// sets it by being linked in (transport/mpi.hpp). Null: in-process.
inline std::atomic<RemoteFactory>& default_remote() {
  static std::atomic<RemoteFactory> factory{nullptr};
  return factory;
}

namespace wire {
// Flat little messages: PODs and length-prefixed strings.
struct Writer {
  std::vector<std::byte> out;
  template <class T>
  Writer& put(const T& v) {
    return raw(&v, sizeof(T));
  }
  Writer& str(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    return raw(s.data(), s.size());
  }
  Writer& raw(const void* p, std::size_t n) {
    if (n == 0) return *this;
    const std::size_t at = out.size();
    out.resize(at + n);
    std::memcpy(out.data() + at, p, n);
    return *this;
  }
};
struct Reader {
  const std::byte* p;
  const std::byte* end;
  template <class T>
  T get() {
    if (p + sizeof(T) > end) throw Error("refx: transport: truncated message");
    T v;
    std::memcpy(&v, p, sizeof(T));
    p += sizeof(T);
    return v;
  }
  std::string str() {
    const auto n = get<std::uint64_t>();
    if (p + n > end) throw Error("refx: transport: truncated message");
    std::string s(reinterpret_cast<const char*>(p), n);
    p += n;
    return s;
  }
};

inline void put_report(Writer& w, const Report& r) {
  w.put(r.launch)
      .put(r.seq)
      .put(r.probe)
      .put(r.idle)
      .put(r.finished)
      .put(r.sent)
      .put(r.received)
      .put(r.bytes_copied)
      .put(r.copies)
      .put(r.forwarded);
  w.str(r.error).str(r.parked).str(r.unbalanced);
}
inline Report get_report(Reader& rd) {
  Report r;
  r.launch = rd.get<std::int64_t>();
  r.seq = rd.get<std::int64_t>();
  r.probe = rd.get<std::int64_t>();
  r.idle = rd.get<bool>();
  r.finished = rd.get<bool>();
  r.sent = rd.get<std::int64_t>();
  r.received = rd.get<std::int64_t>();
  r.bytes_copied = rd.get<std::int64_t>();
  r.copies = rd.get<std::int64_t>();
  r.forwarded = rd.get<std::int64_t>();
  r.error = rd.str();
  r.parked = rd.str();
  r.unbalanced = rd.str();
  return r;
}
}  // namespace wire

}  // namespace refx::transport
