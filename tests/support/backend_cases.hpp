#pragma once
// One test body per behaviour of copies, semaphores and collectives, run on
// every backend: the reference interpreter (refx::interpret for one device;
// for a mesh, the same evaluator (ExecContext) stepped device by device in
// one thread, below), the threaded runtime with N devices, and MPI (the
// runtime of an mpirun; tests/transport/mpi_program.cpp runs these bodies).
//
// A body is `::testing::AssertionResult case(Backend&)`: it runs a kernel
// through Backend::run on a mesh {"x", N} and compares every output it can
// see with a host reference computed here. The GoogleTest suite of
// tests/backends instantiates every body on every backend; the MPI program
// calls the same bodies and fails its rank when one fails.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

namespace refx::testing::backends {

enum class Kind { interpreter, runtime, mpi };

/// Per parameter, per device: the elements (row-major). A device this
/// process does not host (MPI) comes back empty.
template <class T>
using Shards = std::vector<std::vector<std::vector<T>>>;

// ---------------------------------------------------------------- the interpreter on a mesh

/// Several devices of the reference evaluator in one thread: every device is
/// an ExecContext of the same graph; they run in turn until all finish.
/// Signals act at once on the target's semaphore. A copy lands when it
/// starts (eager), or with `lazy` only when a semaphore it advances is waited
/// on (the latest moment the semantics allow: it reads its source then, so
/// a source overwritten before the wait shows). A round in which no device
/// finishes, signals, copies or passes a wait, and no copy is left to land,
/// is a deadlock.
class LockstepMesh {
 public:
  LockstepMesh(const Graph& g, int devices, bool lazy = false) : graph_(g), lazy_(lazy) {
    for (int d = 0; d < devices; ++d) envs_.push_back(std::make_unique<Env>(*this, d, devices));
    for (int d = 0; d < devices; ++d) contexts_.push_back(std::make_unique<ExecContext>(g, *envs_[static_cast<std::size_t>(d)]));
  }

  /// Runs the kernel with device d's parameters bound to args[d].
  void run(std::vector<std::vector<Buffer*>>& args) {
    for (std::size_t d = 0; d < contexts_.size(); ++d)
      for (std::size_t p = 0; p < args[d].size(); ++p) contexts_[d]->bind_param(p, *args[d][p]);
    std::vector<bool> done(contexts_.size(), false);
    for (std::size_t left = contexts_.size(); left > 0;) {
      const std::int64_t before = events_;
      for (std::size_t d = 0; d < contexts_.size(); ++d) {
        if (done[d]) continue;
        if (contexts_[d]->run() == ExecStatus::done) {
          for (std::size_t k = pending_.size(); k-- > 0;)  // a finished device's copies land (its end waits for them)
            if (pending_[k].source == static_cast<std::int32_t>(d)) land(k);
          done[d] = true;
          --left;
          ++events_;
        }
      }
      if (left > 0 && events_ == before && !pending_.empty()) {
        land(0);  // nothing else moves: the oldest copy lands
        continue;
      }
      if (left > 0 && events_ == before)
        throw RuntimeError("refx: deadlock: every device of the lockstep interpreter waits on a semaphore that nothing will signal");
    }
  }

 private:
  struct Env final : ExecEnv {
    Env(LockstepMesh& m, int d, int n) : mesh(m), device(d), devices(n) {}
    std::int32_t device_id() const override { return device; }
    std::int32_t num_devices() const override { return devices; }
    std::int32_t axis_index(std::string_view axis) const override { return check(axis), device; }
    std::int32_t axis_size(std::string_view axis) const override { return check(axis), devices; }
    void check(std::string_view axis) const {
      if (axis != "x") throw RuntimeError(fmt::format("refx: the lockstep interpreter has one mesh axis \"x\", not \"{}\"", axis));
    }
    void semaphore_signal(ExecContext&, const Op&, ValueId sem, std::int64_t index, std::int64_t inc, std::int32_t target) override {
      mesh.counter(target, sem, index) += inc;
      ++mesh.events_;
    }
    bool semaphore_wait(ExecContext& ctx, const Op& op, ValueId sem, std::int64_t index, std::int64_t value) override {
      for (std::size_t k = mesh.pending_.size(); k-- > 0;) {  // lazy: the copies this wait is for land now
        const Pending& p = mesh.pending_[k];
        if ((p.request.target == device && p.request.recv_sem == sem && p.request.recv_index == index) ||
            (p.source == device && p.request.send_sem == sem && p.request.send_index == index))
          mesh.land(k);
      }
      if (!ExecEnv::semaphore_wait(ctx, op, sem, index, value)) return false;
      ++mesh.events_;
      return true;
    }
    void copy_start(ExecContext&, const Op&, const CopyRequest& r) override {
      mesh.pending_.push_back({device, r});
      if (!mesh.lazy_) mesh.land(mesh.pending_.size() - 1);
      ++mesh.events_;
    }
    LockstepMesh& mesh;
    int device, devices;
  };

  struct Pending {
    std::int32_t source;
    CopyRequest request;
  };

  /// Copy k lands: the data moves, then both semaphores rise by its bytes.
  void land(std::size_t k) {
    const Pending p = pending_[k];
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(k));
    const CopyRequest& r = p.request;
    ResolvedView dst = r.dst;
    dst.buffer = contexts_[static_cast<std::size_t>(r.target)]->storage(r.dst_ref);
    copy_view(r.src, dst, r.reduce);
    const auto bytes = static_cast<std::int64_t>(r.src.bytes());
    counter(r.target, r.recv_sem, r.recv_index) += bytes;
    if (r.send_sem != no_id) counter(p.source, r.send_sem, r.send_index) += bytes;
    ++events_;
  }

  /// Element `index` of semaphore `sem` on `device` (barrier semaphores by
  /// their collective id: a peer may signal before it has reached them).
  std::int64_t& counter(std::int32_t device, ValueId sem, std::int64_t index) {
    const ValueInfo& info = graph_.value(sem);
    Buffer* storage = nullptr;
    if (info.producer != no_id && graph_.op(info.producer).prim == &prim::barrier_semaphore)
      storage = &envs_[static_cast<std::size_t>(device)]->barrier_semaphore(prim::barrier_semaphore_attrs(graph_, graph_.op(info.producer)).collective_id);
    else
      storage = contexts_[static_cast<std::size_t>(device)]->storage(sem);
    return storage->data<std::int64_t>()[index];
  }

  const Graph& graph_;
  bool lazy_;
  std::vector<Pending> pending_;
  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<std::unique_ptr<ExecContext>> contexts_;
  std::int64_t events_ = 0;
};

/// One device with a mesh of one: refx::interpret, with the axis "x" known.
struct SingleDeviceEnv final : ExecEnv {
  std::int32_t axis_index(std::string_view axis) const override { return check(axis), 0; }
  std::int32_t axis_size(std::string_view axis) const override { return check(axis), 1; }
  static void check(std::string_view axis) {
    if (axis != "x") throw RuntimeError(fmt::format("refx: the test mesh has one axis \"x\", not \"{}\"", axis));
  }
};

// ---------------------------------------------------------------- backends

/// Where a body runs: a kind and a device count (on MPI: ranks x devices per rank).
struct Backend {
  Kind kind = Kind::runtime;
  int devices = 1;
  Runtime* rt = nullptr;  // runtime and MPI; null: Runtime::global()
  bool lazy_copies = false;  // interpreter: copies land when waited (LockstepMesh), also for N = 1

  std::string name() const {
    const char* k = kind == Kind::interpreter ? (lazy_copies ? "InterpreterLazyCopies" : "Interpreter")
                    : kind == Kind::runtime   ? "Runtime"
                                              : "Mpi";
    return std::string(k) + "_N" + std::to_string(devices);
  }

  /// Runs `body` on the mesh {"x", devices} with every parameter (shape
  /// shapes[p]) bound in place to args[p][d] on device d; returns the
  /// parameters afterwards. `collective_id` is the kernel's (for
  /// get_barrier_semaphore()).
  template <class T, class F>
  Shards<T> run(F&& body, const std::vector<Shape>& shapes, Shards<T> args, std::int64_t collective_id = -1) const {
    const Mesh mesh{{"x", devices}};
    if (kind == Kind::interpreter) {
      const Graph g = trace(body, TraceOptions{shapes, &mesh, collective_id});
      std::vector<std::vector<Buffer>> buffers(static_cast<std::size_t>(devices));
      std::vector<std::vector<Buffer*>> ptrs(static_cast<std::size_t>(devices));
      for (int d = 0; d < devices; ++d) {
        auto& bs = buffers[static_cast<std::size_t>(d)];
        bs.reserve(args.size());
        for (std::size_t p = 0; p < args.size(); ++p) {
          bs.emplace_back(dtype_v<T>, shapes[p]);
          std::copy(args[p][static_cast<std::size_t>(d)].begin(), args[p][static_cast<std::size_t>(d)].end(), bs.back().template data<T>());
        }
        for (Buffer& b : bs) ptrs[static_cast<std::size_t>(d)].push_back(&b);
      }
      if (devices == 1 && !lazy_copies) {
        SingleDeviceEnv env;
        interpret(g, ptrs[0], env);
      } else {
        LockstepMesh(g, devices, lazy_copies).run(ptrs);
      }
      for (std::size_t p = 0; p < args.size(); ++p)
        for (int d = 0; d < devices; ++d) {
          const Buffer& b = buffers[static_cast<std::size_t>(d)][p];
          args[p][static_cast<std::size_t>(d)].assign(b.template data<T>(), b.template data<T>() + b.size());
        }
      return args;
    }
    Runtime& r = rt ? *rt : Runtime::global();
    auto k = kernel(body).name("backend_case");
    if (collective_id >= 0) k.collective_id(collective_id);
    auto exe = k.compile(mesh, shapes, r);
    std::vector<Array> arrays;
    for (std::size_t p = 0; p < args.size(); ++p) arrays.push_back(Array::from_shards<T>(args[p], shapes[p], r));
    exe.call_in_place(arrays);
    for (std::size_t p = 0; p < args.size(); ++p)
      for (int d = 0; d < devices; ++d)
        args[p][static_cast<std::size_t>(d)] = arrays[p].is_local(d) ? arrays[p].to_host<T>(d) : std::vector<T>{};
    return args;
  }
};

// ---------------------------------------------------------------- host side

inline int wrap(int i, int n) { return ((i % n) + n) % n; }

/// Device d's element i of input `salt`: distinct per device, element and
/// input, small integers (every sum of up to 8 devices is exact in f32).
template <class T>
T value_of(int d, std::int64_t i, int salt = 0) {
  return static_cast<T>(((d + 1) * 37 + i * 11 + salt * 5) % 97 - 48);
}

/// Per device `elements` of value_of(d, i, salt).
template <class T>
std::vector<std::vector<T>> per_device(int n, std::int64_t elements, int salt = 0) {
  std::vector<std::vector<T>> out(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < elements; ++i) out[static_cast<std::size_t>(d)].push_back(value_of<T>(d, i, salt));
  return out;
}

/// Per device `elements` copies of `v`.
template <class T>
std::vector<std::vector<T>> filled_per_device(int n, std::int64_t elements, T v) {
  return std::vector<std::vector<T>>(static_cast<std::size_t>(n), std::vector<T>(static_cast<std::size_t>(elements), v));
}

/// Compares every device the backend shows (non-empty) with want(d, i).
template <class T, class W>
::testing::AssertionResult expect_all(const std::string& what, const std::vector<std::vector<T>>& got, std::int64_t elements,
                                      W&& want) {
  bool seen = false;
  for (std::size_t d = 0; d < got.size(); ++d) {
    if (got[d].empty()) continue;  // hosted by another MPI rank
    seen = true;
    if (static_cast<std::int64_t>(got[d].size()) != elements)
      return ::testing::AssertionFailure() << what << ": device " << d << " has " << got[d].size() << " elements, expected " << elements;
    for (std::int64_t i = 0; i < elements; ++i) {
      const T w = static_cast<T>(want(static_cast<int>(d), i));
      if (!(got[d][static_cast<std::size_t>(i)] == w))
        return ::testing::AssertionFailure() << what << ": device " << d << " element " << i << " is "
                                             << +got[d][static_cast<std::size_t>(i)] << ", expected " << +w;
    }
  }
  if (!seen) return ::testing::AssertionFailure() << what << ": no device's result was visible";
  return ::testing::AssertionSuccess();
}

#define REFX_BACKEND_CHECK(expr)         \
  do {                                   \
    ::testing::AssertionResult r_ = (expr); \
    if (!r_) return r_;                  \
  } while (0)

// ---------------------------------------------------------------- the bodies

/// Local async copies: the two halves of x land swapped in y (two copies in
/// flight on two semaphores), then a third copy moves y's first row of
/// elements to z with a stride (every other element), each waited.
inline ::testing::AssertionResult local_async_copy(const Backend& b) {
  constexpr std::int64_t K = 64, H = K / 2;
  const int n = b.devices;
  auto out = b.run<float>(
      [](VmemRef<float, K> x, VmemRef<float, K> y, VmemRef<float, H> z) {
        run_scoped([&](DmaSemaphore s0, DmaSemaphore s1) {
          auto lo = make_async_copy(x.at(ds(0, H)), y.at(ds(H, H)), s0);
          auto hi = make_async_copy(x.at(ds(H, H)), y.at(ds(0, H)), s1);
          lo.start();
          hi.start();
          hi.wait();
          lo.wait();
          auto strided = make_async_copy(y.at(ds(0, H, 2)), z, s0);
          strided.start();
          strided.wait();
        });
      },
      {Shape{K}, Shape{K}, Shape{H}},
      {per_device<float>(n, K), filled_per_device<float>(n, K, -1.0f), filled_per_device<float>(n, H, -1.0f)});
  const auto x = [](int d, std::int64_t i) { return value_of<float>(d, i); };
  REFX_BACKEND_CHECK(expect_all("x (source, unchanged)", out[0], K, x));
  REFX_BACKEND_CHECK(expect_all("y (halves swapped)", out[1], K, [&](int d, std::int64_t i) { return x(d, (i + H) % K); }));
  return expect_all("z (every other element of y)", out[2], H, [&](int d, std::int64_t i) { return x(d, (2 * i + H) % K); });
}

/// A remote copy with send and receive semaphores: every device sends x to
/// the device `shift` to its right, after a handshake on the kernel's
/// barrier semaphore with the two devices it talks to; waits on both sides.
inline ::testing::AssertionResult remote_copy(const Backend& b, int shift) {
  constexpr std::int64_t K = 256;
  const int n = b.devices, s = wrap(shift, b.devices);
  auto out = b.run<float>(
      [s](HbmRef<float, K> x, HbmRef<float, K> y) {
        auto me = axis_index("x");
        auto size = axis_size("x");
        auto target = (me + s) % size;
        auto source = (me + size - s) % size;
        auto barrier = get_barrier_semaphore();
        semaphore_signal(barrier, 1, source);  // ready to receive from you
        semaphore_signal(barrier, 1, target);  // about to send to you
        semaphore_wait(barrier, 2);
        run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
          auto c = make_async_remote_copy(x, y, send, recv, target);
          c.start();
          c.wait_send();
          c.wait_recv();
        });
      },
      {Shape{K}, Shape{K}}, {per_device<float>(n, K), filled_per_device<float>(n, K, -1.0f)}, /*collective_id=*/0);
  REFX_BACKEND_CHECK(expect_all("x (source, unchanged)", out[0], K, [](int d, std::int64_t i) { return value_of<float>(d, i); }));
  return expect_all("y (from device me - " + std::to_string(s) + ")", out[1], K,
                    [&](int d, std::int64_t i) { return value_of<float>(wrap(d - s, n), i); });
}

/// The same shift by 1 with a REGULAR receive semaphore (TPU v6e and
/// later): it rises by 1 when the copy lands, waited with semaphore_wait.
inline ::testing::AssertionResult remote_copy_regular_completion(const Backend& b) {
  constexpr std::int64_t K = 256;
  const int n = b.devices;
  auto out = b.run<float>(
      [](HbmRef<float, K> x, HbmRef<float, K> y) {
        auto me = axis_index("x");
        auto size = axis_size("x");
        auto target = (me + 1) % size;
        run_scoped([&](RegularSemaphore ready, DmaSemaphore send, RegularSemaphore recv) {
          semaphore_signal(ready, 1, (me + size - 1) % size);  // my y is free
          semaphore_wait(ready, 1);
          auto c = make_async_remote_copy(x, y, send, recv, target);
          c.start();
          c.wait_send();
          semaphore_wait(recv);
        });
      },
      {Shape{K}, Shape{K}}, {per_device<float>(n, K), filled_per_device<float>(n, K, -1.0f)});
  return expect_all("y (from device me - 1)", out[1], K,
                    [&](int d, std::int64_t i) { return value_of<float>(wrap(d - 1, n), i); });
}

/// REGULAR semaphores: every device signals every device (itself included)
/// by its index + 1, then waits for the sum of all increments in one wait;
/// the count read afterwards is 0. Then two signals to itself, a wait of 1
/// and a read (1), and the last wait. y = x + first read * 100 + second read.
inline ::testing::AssertionResult regular_semaphore(const Backend& b) {
  constexpr std::int64_t K = 16;
  const int n = b.devices;
  auto out = b.run<std::int32_t>(
      [n](VmemRef<std::int32_t, K> x, VmemRef<std::int32_t, K> y) {
        run_scoped([&](RegularSemaphore s) {
          auto me = axis_index("x");
          for (int e = 0; e < n; ++e) semaphore_signal(s, me + 1, e);
          semaphore_wait(s, n * (n + 1) / 2);
          auto first = semaphore_read(s);
          semaphore_signal(s, 1, me);
          semaphore_signal(s, 1, me);
          semaphore_wait(s, 1);
          auto second = semaphore_read(s);
          semaphore_wait(s, 1);
          y.store(x.load() + (first * 100 + second));
        });
      },
      {Shape{K}, Shape{K}}, {per_device<std::int32_t>(n, K), filled_per_device<std::int32_t>(n, K, 0)});
  return expect_all("y = x + reads", out[1], K, [](int d, std::int64_t i) { return value_of<std::int32_t>(d, i) + 1; });
}

/// BARRIER semaphore: three rounds in which every device signals every
/// other device's barrier semaphore and waits for N - 1; its count is then
/// 0 (read into y), and the kernel ends with it balanced.
inline ::testing::AssertionResult barrier_semaphore(const Backend& b) {
  constexpr std::int64_t K = 8;
  const int n = b.devices;
  auto out = b.run<std::int32_t>(
      [n](VmemRef<std::int32_t, K> x, VmemRef<std::int32_t, K> y) {
        auto me = axis_index("x");
        auto barrier = get_barrier_semaphore();
        if (n > 1)
          fori_loop(0, 3, [&](Scalar<std::int32_t>) {
            for (int k = 1; k < n; ++k) semaphore_signal(barrier, 1, (me + k) % n);
            semaphore_wait(barrier, n - 1);
          });
        y.store(x.load() + semaphore_read(barrier) + me);
      },
      {Shape{K}, Shape{K}}, {per_device<std::int32_t>(n, K), filled_per_device<std::int32_t>(n, K, 0)}, /*collective_id=*/0);
  return expect_all("y = x + read + me", out[1], K, [](int d, std::int64_t i) { return value_of<std::int32_t>(d, i) + d; });
}

/// ppermute_start / ppermute_done by `shift`: y on device d is x of d - shift.
inline ::testing::AssertionResult ppermute(const Backend& b, int shift) {
  constexpr std::int64_t K = 40;
  const int n = b.devices;
  auto out = b.run<float>([shift](VmemRef<float, K> x, VmemRef<float, K> y) { ppermute_done(ppermute_start(x, y, "x", shift)); },
                          {Shape{K}, Shape{K}}, {per_device<float>(n, K), filled_per_device<float>(n, K, -1.0f)});
  return expect_all("ppermute by " + std::to_string(shift), out[1], K,
                    [&](int d, std::int64_t i) { return value_of<float>(wrap(d - shift, n), i); });
}

/// all_gather: row j of out is device j's x, on every device.
inline ::testing::AssertionResult all_gather(const Backend& b, collectives::Algorithm a) {
  constexpr std::int64_t K = 24;
  const int n = b.devices;
  auto out = b.run<float>(
      [a](Ref<float, extents<K>, Vmem> x, Ref<float, extents<dyn, K>, Vmem> g) { collectives::all_gather(x, g, "x", a); },
      {Shape{K}, Shape{n, K}}, {per_device<float>(n, K), filled_per_device<float>(n, n * K, -1.0f)});
  return expect_all("all_gather", out[1], n * K, [](int, std::int64_t i) { return value_of<float>(static_cast<int>(i / K), i % K); });
}

/// all_reduce (sum and max; in place and out of place): the elementwise
/// reduction over devices (exact: small integers).
inline ::testing::AssertionResult all_reduce(const Backend& b, collectives::Algorithm a, collectives::Direction dir) {
  constexpr std::int64_t K = 37;  // not divisible by the device counts
  const int n = b.devices;
  const auto sum = [n](int, std::int64_t i) {
    float s = 0;
    for (int e = 0; e < n; ++e) s += value_of<float>(e, i);
    return s;
  };
  const auto max = [n](int, std::int64_t i) {
    float m = value_of<float>(0, i, 1);
    for (int e = 1; e < n; ++e) m = std::max(m, value_of<float>(e, i, 1));
    return m;
  };
  auto out = b.run<float>(
      [a, dir](VmemRef<float, K> x, VmemRef<float, K> y, VmemRef<float, K> z) {
        collectives::all_reduce(x, y, "x", ReduceOp::sum, dir, a);
        collectives::all_reduce(z, "x", ReduceOp::max, dir, a);
      },
      {Shape{K}, Shape{K}, Shape{K}},
      {per_device<float>(n, K), filled_per_device<float>(n, K, -1.0f), per_device<float>(n, K, 1)});
  REFX_BACKEND_CHECK(expect_all("x (kept)", out[0], K, [](int d, std::int64_t i) { return value_of<float>(d, i); }));
  REFX_BACKEND_CHECK(expect_all("all_reduce sum out of place", out[1], K, sum));
  return expect_all("all_reduce max in place", out[2], K, max);
}

/// reduce_scatter: device d's out holds chunk d of the rows of the sum (the
/// rows cut into N chunks, the first rows % N one row longer; out has
/// ceil(rows / N) rows and a shorter chunk leaves its last row untouched).
inline ::testing::AssertionResult reduce_scatter(const Backend& b, collectives::Algorithm a) {
  constexpr std::int64_t R = 17, C = 3;
  const int n = b.devices;
  const std::int64_t chunk = (R + n - 1) / n;
  auto out = b.run<float>(
      [a](Ref<float, extents<R, C>, Vmem> x, Ref<float, extents<dyn, C>, Vmem> o) {
        collectives::reduce_scatter(x, o, "x", ReduceOp::sum, collectives::Direction::unidirectional, a);
      },
      {Shape{R, C}, Shape{chunk, C}}, {per_device<float>(n, R * C), filled_per_device<float>(n, chunk * C, -1.0f)});
  return expect_all("reduce_scatter", out[1], chunk * C, [&](int d, std::int64_t i) {
    // Chunk d: R / N rows, one more for the first R % N chunks.
    const std::int64_t q = R / n, r = R % n;
    const std::int64_t start = d * q + std::min<std::int64_t>(d, r), len = q + (d < r ? 1 : 0);
    if (i / C >= len) return -1.0f;  // a shorter chunk leaves the last row untouched
    const std::int64_t row = start + i / C;
    float s = 0;
    for (int e = 0; e < n; ++e) s += value_of<float>(e, row * C + i % C);
    return s;
  });
}

/// all_to_all: row j of device d's out is row d of device j's x.
inline ::testing::AssertionResult all_to_all(const Backend& b) {
  constexpr std::int64_t K = 10;
  const int n = b.devices;
  auto out = b.run<float>(
      [](Ref<float, extents<dyn, K>, Vmem> x, Ref<float, extents<dyn, K>, Vmem> o) { collectives::all_to_all(x, o, "x"); },
      {Shape{n, K}, Shape{n, K}}, {per_device<float>(n, n * K), filled_per_device<float>(n, n * K, -1.0f)});
  return expect_all("all_to_all", out[1], n * K,
                    [](int d, std::int64_t i) { return value_of<float>(static_cast<int>(i / K), d * K + i % K); });
}

/// Every body with its name, for the MPI program (the GoogleTest suite names them itself).
inline std::vector<std::pair<std::string, std::function<::testing::AssertionResult(const Backend&)>>> all_cases() {
  using collectives::Algorithm;
  using collectives::Direction;
  return {
      {"local_async_copy", local_async_copy},
      {"remote_copy_shift1", [](const Backend& b) { return remote_copy(b, 1); }},
      {"remote_copy_shift_minus1", [](const Backend& b) { return remote_copy(b, -1); }},
      {"remote_copy_regular_completion", remote_copy_regular_completion},
      {"regular_semaphore", regular_semaphore},
      {"barrier_semaphore", barrier_semaphore},
      {"ppermute_shift1", [](const Backend& b) { return ppermute(b, 1); }},
      {"ppermute_shift3", [](const Backend& b) { return ppermute(b, 3); }},
      {"all_gather_ring", [](const Backend& b) { return all_gather(b, Algorithm::ring); }},
      {"all_gather_direct", [](const Backend& b) { return all_gather(b, Algorithm::direct); }},
      {"all_reduce_ring_uni", [](const Backend& b) { return all_reduce(b, Algorithm::ring, Direction::unidirectional); }},
      {"all_reduce_ring_bi", [](const Backend& b) { return all_reduce(b, Algorithm::ring, Direction::bidirectional); }},
      {"all_reduce_direct", [](const Backend& b) { return all_reduce(b, Algorithm::direct, Direction::unidirectional); }},
      {"all_reduce_one_shot", [](const Backend& b) { return all_reduce(b, Algorithm::one_shot, Direction::unidirectional); }},
      {"all_reduce_ring_direct_bi", [](const Backend& b) { return all_reduce(b, Algorithm::ring_direct, Direction::bidirectional); }},
      {"reduce_scatter_ring", [](const Backend& b) { return reduce_scatter(b, Algorithm::ring); }},
      {"reduce_scatter_direct", [](const Backend& b) { return reduce_scatter(b, Algorithm::direct); }},
      {"all_to_all", all_to_all},
  };
}

}  // namespace refx::testing::backends
