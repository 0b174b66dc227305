#pragma once
// Helpers for the reliability tests (tests/reliability/*_test.cpp, label
// `reliability`; docs/reliability.md):
//
//   MeshInterpreter   the reference interpreter (refx/ir/interpret.hpp) for a
//                     whole mesh: every device's ExecContext driven one after
//                     the other on the calling thread, copies landing at once
//                     (or only when waited for), semaphores as plain counters,
//                     ordered host effects performed in (sequence, device)
//                     order. No threads, no runtime code: the threaded
//                     runtime is checked against it.
//   Heartbeat         a watchdog for long loops: aborts the binary with the
//                     current label when no progress was reported in time.
//   env_count         counts and seeds from the environment (longer runs).
//   report            the "refx-reliability: N <what>" lines that
//                     scripts/test.sh adds up at the end of a run.
//   allocated_bytes   heap bytes in use (the sanitizer allocator's count in
//                     sanitizer builds, glibc's otherwise).

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/eval.hpp>

#include "support/runtime_testing.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REFX_RELIABILITY_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define REFX_RELIABILITY_SANITIZER_ALLOCATOR 1
#endif
#endif
#ifdef REFX_RELIABILITY_SANITIZER_ALLOCATOR
// From <sanitizer/allocator_interface.h> (which GCC does not install).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes(void);
#endif

namespace refx::testing {

// ---------------------------------------------------------------- counts

/// A count from the environment variable `name` (decimal), else `fallback`.
inline std::int64_t env_count(const char* name, std::int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (end == v || n < 0) {
    ADD_FAILURE() << name << "=" << v << " is not a count";
    return fallback;
  }
  return n;
}

/// Prints "refx-reliability: <n> <what>" (scripts/test.sh sums these lines
/// from every reliability test's output and prints the totals at the end).
inline void report(std::int64_t n, const std::string& what) {
  std::printf("refx-reliability: %lld %s\n", static_cast<long long>(n), what.c_str());
  std::fflush(stdout);
}

// ---------------------------------------------------------------- watchdog

/// Aborts the process (exit code 3, with a message naming the current label)
/// when beat() has not been called for `limit`. For loops over many programs:
/// each program gets the limit, and a hang names the program that hung.
class Heartbeat {
 public:
  explicit Heartbeat(std::chrono::milliseconds limit, std::string label = "start")
      : limit_(limit), label_(std::move(label)), last_(std::chrono::steady_clock::now()), thread_([this] { watch(); }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  void beat(std::string label) {
    std::lock_guard lock(mutex_);
    label_ = std::move(label);
    last_ = std::chrono::steady_clock::now();
  }

 private:
  void watch() {
    std::unique_lock lock(mutex_);
    while (!done_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (!done_ && std::chrono::steady_clock::now() - last_ > limit_) {
        std::fprintf(stderr, "\nrefx reliability watchdog: '%s' made no progress for %lld ms (a hang); aborting\n",
                     label_.c_str(), static_cast<long long>(limit_.count()));
        std::fflush(stderr);
        std::_Exit(3);
      }
    }
  }

  std::chrono::milliseconds limit_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string label_;
  std::chrono::steady_clock::time_point last_;
  bool done_ = false;
  std::thread thread_;  // last: starts once the state above exists
};

// ---------------------------------------------------------------- memory

/// Heap bytes currently allocated by the process.
inline std::int64_t allocated_bytes() {
#ifdef REFX_RELIABILITY_SANITIZER_ALLOCATOR
  return static_cast<std::int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = mallinfo2();
  return static_cast<std::int64_t>(m.uordblks + m.hblkhd);
#endif
}

// ---------------------------------------------------------------- the reference

/// Runs a graph on every device of a mesh, sequentially: the devices take
/// turns (in device order, or a seeded random order per round), each running
/// until it finishes or blocks on a wait; copies land when started (or, with
/// `lazy`, when a device waits on one of their semaphores, or when nothing
/// else can happen). A round in which nothing changed is a deadlock
/// (RuntimeError). Ordered host effects are buffered and performed at the end
/// in (sequence, device) order per kind, as the runtime orders them;
/// unordered ones are performed when reached. Exceptions from ops propagate
/// (as RuntimeError "refx: device <d>: ...").
struct MeshInterpreterOptions {
  std::uint64_t schedule_seed = 0;  ///< 0: devices in order each round
  bool lazy = false;                ///< copies land when waited for
  PrintSink print;                  ///< where debug_print goes (default: stdout)
};

class MeshInterpreter {
 public:
  using Options = MeshInterpreterOptions;

  /// `args[d][i]`: device d's buffer for kernel parameter i (written in place).
  static void run(const Graph& g, const Mesh& mesh, const std::vector<std::vector<Buffer*>>& args, Options o = {}) {
    MeshInterpreter m(g, mesh, std::move(o));
    m.go(args);
  }

 private:
  struct Pending {
    CopyRequest request;
    std::int32_t source = 0;
    std::int64_t* recv = nullptr;
    std::int64_t* send = nullptr;
  };
  struct Ordered {
    std::int64_t seq;
    std::int32_t device;
    const Op* op;
    std::unique_ptr<HostEffect> effect;
  };

  class Device final : public ExecEnv {
   public:
    Device(MeshInterpreter& m, std::int32_t id) : m_(m), id_(id), ctx(m.graph_, *this) {}
    std::int32_t device_id() const override { return id_; }
    std::int32_t num_devices() const override { return m_.mesh_.size(); }
    std::int32_t axis_index(std::string_view axis) const override { return m_.mesh_.coord(id_, m_.mesh_.axis(axis)); }
    std::int32_t axis_size(std::string_view axis) const override { return m_.mesh_.axis_size(axis); }
    void semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc,
                          std::int32_t device) override {
      m_.counter(device, sem, index) += inc;
      m_.changed_ = true;
    }
    bool semaphore_wait(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t value) override {
      std::int64_t& c = m_.counter(id_, sem, index);
      if (c < value) m_.land_pending(&c);
      if (c < value) return false;
      c -= value;
      m_.changed_ = true;
      return true;
    }
    std::int64_t semaphore_read(ExecContext&, ValueId sem, std::int64_t index) override {
      return m_.counter(id_, sem, index);
    }
    void copy_start(ExecContext&, const Op&, const CopyRequest& r) override {
      Pending p{r, id_, &m_.counter(r.target, r.recv_sem, r.recv_index),
                r.send_sem == no_id ? nullptr : &m_.counter(id_, r.send_sem, r.send_index)};
      p.request.dst.buffer = m_.devices_[static_cast<std::size_t>(r.target)]->ctx.storage(r.dst_ref);
      m_.changed_ = true;
      if (m_.options_.lazy) m_.pending_.push_back(std::move(p));
      else m_.land(p);
    }
    Buffer& barrier_semaphore(std::int64_t collective_id) override { return m_.barrier(id_, collective_id); }
    void host_effect(ExecContext&, const Op& op, std::unique_ptr<HostEffect> e) override {
      m_.changed_ = true;
      if (!e->ordered) {
        if (auto error = perform_host_effect(*e, op, m_.print_, id_)) std::rethrow_exception(error);
        return;
      }
      auto& seq = m_.seq_[{e->token, id_}];
      m_.ordered_.push_back(Ordered{seq++, id_, &op, std::move(e)});
    }

   private:
    MeshInterpreter& m_;
    std::int32_t id_;

   public:
    ExecContext ctx;
    bool done = false;
  };

  MeshInterpreter(const Graph& g, const Mesh& mesh, Options o)
      : graph_(g), mesh_(mesh), options_(std::move(o)), rng_(options_.schedule_seed) {
    print_ = options_.print ? options_.print : PrintSink(detail::print_to_stdout);
  }

  std::int64_t& counter(std::int32_t device, ValueId sem, std::int64_t index) {
    const ValueInfo& info = graph_.value(sem);
    const bool is_barrier = info.producer != no_id && graph_.op(info.producer).prim == &prim::barrier_semaphore;
    Buffer* b = is_barrier ? &barrier(device, prim::barrier_semaphore_attrs(graph_, graph_.op(info.producer)).collective_id)
                           : devices_[static_cast<std::size_t>(device)]->ctx.storage(sem);
    return b->data<std::int64_t>()[index];
  }
  Buffer& barrier(std::int32_t device, std::int64_t id) {
    auto [it, fresh] = barriers_.try_emplace({device, id}, DType::i64, Shape{});
    if (fresh) it->second.fill_zero();
    return it->second;
  }
  void land(const Pending& p) {
    copy_view(p.request.src, p.request.dst, p.request.reduce);
    const auto bytes = static_cast<std::int64_t>(p.request.src.bytes());
    *p.recv += bytes;
    if (p.send) *p.send += bytes;
  }
  /// Lazy copies: lands the pending ones that advance `c` (oldest first).
  void land_pending(const std::int64_t* c) {
    for (std::size_t i = 0; i < pending_.size();) {
      if (pending_[i].recv == c || pending_[i].send == c) {
        const Pending p = pending_[i];
        pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
        land(p);
        changed_ = true;
      } else {
        ++i;
      }
    }
  }

  void go(const std::vector<std::vector<Buffer*>>& args) {
    const std::int32_t n = mesh_.size();
    if (static_cast<std::int32_t>(args.size()) != n)
      throw Error(fmt::format("refx: MeshInterpreter: {} argument lists for {} devices", args.size(), n));
    for (std::int32_t d = 0; d < n; ++d) devices_.push_back(std::make_unique<Device>(*this, d));
    for (std::int32_t d = 0; d < n; ++d) {
      const auto& a = args[static_cast<std::size_t>(d)];
      if (a.size() != graph_.params().size())
        throw Error(fmt::format("refx: MeshInterpreter: the kernel takes {} arguments, {} given", graph_.params().size(),
                                a.size()));
      for (std::size_t i = 0; i < a.size(); ++i) devices_[static_cast<std::size_t>(d)]->ctx.bind_param(i, *a[i]);
    }
    std::vector<std::int32_t> order(static_cast<std::size_t>(n));
    for (std::int32_t d = 0; d < n; ++d) order[static_cast<std::size_t>(d)] = d;
    int finished = 0;
    while (finished < n) {
      if (options_.schedule_seed != 0) std::shuffle(order.begin(), order.end(), rng_);
      changed_ = false;
      for (std::int32_t d : order) {
        Device& dev = *devices_[static_cast<std::size_t>(d)];
        if (dev.done) continue;
        ExecStatus s;
        try {
          s = dev.ctx.run();
        } catch (const std::exception& e) {
          std::throw_with_nested(RuntimeError(fmt::format("refx: device {}: {}", d, e.what())));
        }
        if (s == ExecStatus::done) {
          dev.done = true;
          ++finished;
          changed_ = true;
        }
      }
      if (!changed_ && finished < n) {
        if (!pending_.empty()) {  // nothing else can happen: the oldest lazy copy lands
          const Pending p = pending_.front();
          pending_.erase(pending_.begin());
          land(p);
          continue;
        }
        std::vector<std::string> parked;
        for (const auto& dev : devices_)
          if (!dev->done) {
            const Op* op = dev->ctx.current_op();
            parked.push_back(fmt::format("device {} at {} ({})", dev->device_id(), op ? op->prim->name : "?",
                                         op ? op->loc : SourceLoc{}));
          }
        throw RuntimeError(fmt::format("refx: MeshInterpreter: deadlock: {}", fmt::join(parked, "; ")));
      }
    }
    while (!pending_.empty()) {  // copies nobody waited for still land
      land(pending_.front());
      pending_.erase(pending_.begin());
    }
    std::stable_sort(ordered_.begin(), ordered_.end(), [](const Ordered& a, const Ordered& b) {
      if (a.effect->token != b.effect->token) return a.effect->token < b.effect->token;
      return a.seq != b.seq ? a.seq < b.seq : a.device < b.device;
    });
    for (Ordered& o : ordered_) {
      if (auto error = perform_host_effect(*o.effect, *o.op, print_, o.device)) std::rethrow_exception(error);
    }
  }

  const Graph& graph_;
  const Mesh& mesh_;
  Options options_;
  PrintSink print_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Pending> pending_;
  std::map<std::pair<std::int32_t, std::int64_t>, Buffer> barriers_;
  std::map<std::pair<std::uint8_t, std::int32_t>, std::int64_t> seq_;
  std::vector<Ordered> ordered_;
  bool changed_ = false;
};

}  // namespace refx::testing
