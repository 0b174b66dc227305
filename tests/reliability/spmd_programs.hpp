#pragma once
// Random valid SPMD programs for the differential fuzzer and the fault
// injection tests (docs/reliability.md).
//
// A program is a kernel over a 1-D or 2-D mesh whose body is driven by a
// seeded generator while it is traced (as in tests/passes/differential_test.cpp,
// whose single-device generator this extends to a mesh; what the two share is
// tests/support/program_generator.hpp):
//
//  - compute: elementwise expressions over random regions (strided, at
//    static, loop-index or device-dependent offsets) of seven buffers (two
//    inputs, three outputs, two scratch), stored or accumulated;
//  - local copies (plain, sum, max) with their waits, REGULAR signal / wait
//    pairs, fori_loops (with and without a carry) and `when`s (on the loop
//    index, or on the device: a device-dependent body holds no communication);
//  - remote exchanges: every device sends a region to its peer under a random
//    pattern (a ring shift along an axis, a random permutation of the mesh,
//    the identity), addressed in every device-id form (logical, MESH, named),
//    plain or combining; the receiver tells its sender it is ready (a REGULAR
//    signal to the sender), the sender waits for that before starting, and
//    both sides wait (together or apart, later or at once). Each exchange
//    statement has its own semaphores, so a loop reuses them only for the
//    same pattern;
//  - full barriers on the kernel's barrier semaphore;
//  - in-place all-reduces (collectives::all_reduce: every algorithm and
//    direction, sum and max) of a region, along either mesh axis;
//  - ordered and unordered io_callbacks and debug_prints (logged, then
//    compared: ordered ones as sequences, unordered ones as multisets);
//  - fault points (an extension primitive; docs/extend.md) that throw when a
//    FaultPlan says so, and io_callbacks that do the same.
//
// Every buffer a copy is writing is left alone until its wait; every buffer a
// copy reads is not written until its wait. So the results do not depend on
// timing, and the threaded runtime (any worker count, lazy copies, shuffled
// task order, chunked copies, checked mode) must match the sequential
// reference (MeshInterpreter) bit for bit.

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>
#include <refx/ir/eval.hpp>
#include <refx/passes/pipeline.hpp>

#include "reliability/reliability_testing.hpp"
#include "support/program_generator.hpp"

namespace refx::testing::spmd {

template <class T>
using Buf = Ref<T, dyn_extents<2>, Vmem>;
template <class T>
using CBuf = Ref<const T, dyn_extents<2>, Vmem>;
template <class T>
using Val = Value<T, dyn_extents<2>>;

inline constexpr int kSlots = 8;        ///< remote exchange statements per program
inline constexpr int kMaxDevices = 16;
inline constexpr int kMaxSites = 96;    ///< fault points and callbacks per program
inline constexpr int kInputs = 2, kOutputs = 3;

// ---------------------------------------------------------------- faults

/// Which (device, site, hit) throws. Sites are fault points and io_callbacks;
/// `hit` counts the device's arrivals at the site (loops arrive repeatedly).
struct FaultPlan {
  std::atomic<bool> armed{false};
  std::atomic<bool> fired{false};
  int device = -1, site = -1, hit = 0;
  std::array<std::array<std::atomic<int>, kMaxSites>, kMaxDevices> counts{};

  void arm(int d, int s, int h) {
    for (auto& row : counts)
      for (auto& c : row) c.store(0);
    device = d;
    site = s;
    hit = h;
    fired.store(false);
    armed.store(true);
  }
  void disarm() { armed.store(false); }
  void check(int d, int s) {
    if (!armed.load()) return;
    if (d < 0 || d >= kMaxDevices || s < 0 || s >= kMaxSites) return;
    const int k = counts[static_cast<std::size_t>(d)][static_cast<std::size_t>(s)].fetch_add(1);
    if (d == device && s == site && k == hit) {
      fired.store(true);
      throw std::runtime_error(fmt::format("injected fault: site {}, device {}, arrival {}", s, d, k));
    }
  }
};
inline FaultPlan& fault_plan() {
  static FaultPlan p;
  return p;
}

/// fault_point[site]: an op with an unordered host effect (so no pass removes
/// or merges it) that asks the FaultPlan whether to throw.
inline void fault_point_abstract(AbstractContext& c) {
  if (c.num_inputs() != 0 || c.num_views() != 0 || c.num_attrs() != 1) c.fail("takes one attribute (the site)");
  c.add_effect(effect_io);
}
inline ExecStatus fault_point_impl(ExecContext& ctx, const Op& op) {
  fault_plan().check(ctx.env().device_id(), static_cast<int>(ctx.attr(op, 0)));
  return ExecStatus::done;
}
inline const Primitive& fault_point_p = define_primitive(
    Primitive{.name = "reliability_fault_point", .abstract_eval = fault_point_abstract, .impl = fault_point_impl});

// ---------------------------------------------------------------- effect log

/// What a run's host effects did.
struct EffectLog {
  std::vector<std::string> ordered_calls, unordered_calls, ordered_prints, unordered_prints;
  friend bool operator==(const EffectLog&, const EffectLog&) = default;
  std::size_t size() const {
    return ordered_calls.size() + unordered_calls.size() + ordered_prints.size() + unordered_prints.size();
  }
};
/// The log the callbacks and print sinks of the current run append to.
struct LogSink {
  std::mutex mutex;
  EffectLog log;
  void call(bool ordered, std::string s) {
    std::lock_guard lock(mutex);
    (ordered ? log.ordered_calls : log.unordered_calls).push_back(std::move(s));
  }
  void print(std::string_view s) {
    std::lock_guard lock(mutex);
    const bool ordered = s.starts_with("O");
    (ordered ? log.ordered_prints : log.unordered_prints).emplace_back(s);
  }
  EffectLog take() {
    std::lock_guard lock(mutex);
    EffectLog l = std::move(log);
    log = {};
    std::sort(l.unordered_calls.begin(), l.unordered_calls.end());
    std::sort(l.unordered_prints.begin(), l.unordered_prints.end());
    return l;
  }
};
inline LogSink& log_sink() {
  static LogSink s;
  return s;
}

// ---------------------------------------------------------------- the shape of a program

/// The host-side description of one program (drawn from its seed).
struct Spec {
  std::uint32_t seed = 0;
  std::vector<Mesh::Axis> axes;
  std::int64_t rows = 1, cols = 1;
  std::int64_t collective_id = 0;
  bool faults = false;   ///< plant fault points
  bool specials = false; ///< inputs hold NaN / inf / extreme integers

  Mesh mesh() const { return Mesh(axes); }
  std::int32_t devices() const { return mesh().size(); }
  std::string describe() const {
    return fmt::format("seed {} mesh {} shape [{},{}]", seed, mesh().describe(), rows, cols);
  }
};

inline Spec draw_spec(std::uint32_t seed, bool faults) {
  std::mt19937 rng(seed * 2654435761u + 17u);
  const auto between = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Spec s;
  s.seed = seed;
  s.faults = faults;
  static const std::vector<std::vector<Mesh::Axis>> meshes{
      {{"x", 1}}, {{"x", 2}}, {{"x", 3}}, {{"x", 4}}, {{"x", 4}}, {{"x", 5}}, {{"x", 8}},
      {{"y", 2}, {"x", 2}}, {{"y", 2}, {"x", 3}}, {{"y", 3}, {"x", 2}}, {{"y", 2}, {"x", 4}}, {{"y", 1}, {"x", 3}}};
  s.axes = between(0, 49) == 0 ? std::vector<Mesh::Axis>{{"x", 16}} : meshes[static_cast<std::size_t>(between(0, static_cast<int>(meshes.size()) - 1))];
  s.rows = between(1, 8);
  const int c = between(0, 9);
  s.cols = c < 6 ? between(1, 40) : c < 9 ? between(41, 160) : between(161, 700);
  s.collective_id = between(0, 5);
  s.specials = between(0, 9) == 0;
  return s;
}


/// Element i of input k on device d.
template <class T>
T input_value(const Spec& s, int d, int k, std::int64_t i) {
  const std::uint64_t h = testing::mix(static_cast<std::uint64_t>(s.seed) * 0x9e3779b97f4a7c15ULL ^
                              static_cast<std::uint64_t>(d) * 0x632be59bd9b4e019ULL ^
                              static_cast<std::uint64_t>(k) * 0x8cb92ba72f3d8dd7ULL ^ static_cast<std::uint64_t>(i));
  if (s.specials && h % 37 == 0) {
    if constexpr (refx::is_floating_v<T>) {
      const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity(), T(-0.0), std::numeric_limits<T>::max()};
      return specials[(h >> 8) % 5];
    } else {
      const T specials[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(-1)};
      return specials[(h >> 8) % 3];
    }
  }
  const auto v = static_cast<std::int64_t>((h >> 11) % 401) - 200;
  if constexpr (refx::is_floating_v<T>) return static_cast<T>(v) * T(0.125);
  else return static_cast<T>(v);
}

// ---------------------------------------------------------------- the generator

template <class T>
class Generator : testing::ProgramGenerator<Generator<T>> {
  using Base = testing::ProgramGenerator<Generator<T>>;
  friend Base;
  using Base::between, Base::coin, Base::signal, Base::wait_signals, Base::block, Base::in_loop, Base::wait_oldest,
      Base::wait_all, Base::combine, Base::rng_, Base::loop_, Base::loop_hi_, Base::depth_, Base::frames_;

 public:
  struct Sems {
    DmaSemaphores<2> ldma;
    RegularSemaphores<2> lreg;
    RegularSemaphores<kSlots> ready;
    DmaSemaphores<kSlots> send, recv;
  };

  Generator(const Spec& spec, std::vector<CBuf<T>> inputs, std::vector<Buf<T>> writable, Sems sems)
      : Base(spec.seed, sems.lreg), spec_(spec), mesh_(spec.mesh()), sems_(sems) {
    for (const auto& r : inputs) read_.push_back(r);
    for (const auto& r : writable) {
      read_.push_back(r);
      write_.push_back(r);
    }
    n_ = mesh_.size();
    if (mesh_.num_axes() == 1) {
      me_ = axis_index("x");
    } else {
      iy_ = axis_index("y");
      ix_ = axis_index("x");
      me_ = *iy_ * mesh_.axis_size("x") + *ix_;
    }
  }

  /// The kernel body; returns the number of fault sites planted.
  int program() {
    body();
    return sites_;
  }
  int collectives() const noexcept { return collectives_; }

 private:
  void body() {
    // Every writable buffer starts from a known value (outputs are
    // uninitialised, scratch is garbage unless poisoned).
    const TypedShape<dyn_extents<2>> shape{Shape{spec_.rows, spec_.cols}};
    for (std::size_t k = 0; k < write_.size(); ++k)
      write_[k].store(full<T>(shape, static_cast<T>(static_cast<int>(k) * 3 - 4)) + cast<T>(me_));
    const int n = between(6, 30);
    for (int k = 0; k < n; ++k) statement(0);
    drain(0);
  }

  struct Local {
    AsyncCopy copy;
    CBuf<T> src;
    Buf<T> dst;
    int src_ref, dst_ref, sem, frame;
  };
  struct Remote {
    AsyncRemoteCopy copy;
    int src_ref, dst_ref, slot, frame;
    bool send_pending = true, recv_pending = true;
  };

  // ---- which buffers may be touched
  bool being_written(int r) const {  // a copy lands in it
    for (const Local& f : locals_)
      if (f.dst_ref == r) return true;
    for (const Remote& f : remotes_)
      if (f.recv_pending && f.dst_ref == r) return true;
    return false;
  }
  bool being_read(int r) const {  // a copy reads from it
    for (const Local& f : locals_)
      if (f.src_ref == r) return true;
    for (const Remote& f : remotes_)
      if (f.send_pending && f.src_ref == r) return true;
    return false;
  }
  int num_refs() const { return static_cast<int>(read_.size()); }
  /// A buffer that may be read (index into read_), or -1.
  int readable() {
    for (int tries = 0; tries < 20; ++tries) {
      const int r = between(0, num_refs() - 1);
      if (!being_written(r)) return r;
    }
    return -1;
  }
  /// A buffer that may be written (index into read_; >= kInputs), or -1.
  int writable() {
    for (int tries = 0; tries < 20; ++tries) {
      const int r = between(kInputs, num_refs() - 1);
      if (!being_written(r) && !being_read(r)) return r;
    }
    return -1;
  }
  Buf<T> wref(int r) const { return write_[static_cast<std::size_t>(r - kInputs)]; }

  // ---- regions
  /// ds(start, size, stride) inside `extent`: at a static start, at the loop
  /// index plus an offset, or at a device-dependent start.
  Slice slice(std::int64_t size, std::int64_t extent, bool traced) {
    const std::int64_t stride = size > 1 && coin(25) ? between(2, 3) : 1;
    const std::int64_t span = (size - 1) * stride + 1;
    if (span > extent) return slice(size, extent, traced);
    const auto room = static_cast<int>(extent - span);
    if (traced && loop_ && coin(35) && room >= loop_hi_ - 1) {
      const int off = between(0, room - (loop_hi_ - 1));
      return ds(*loop_ + off, size, stride);
    }
    if (traced && coin(20) && room > 0) {
      const int off = between(0, room);
      const int m = between(1, room - off + 1);
      return ds(me_ % m + off, size, stride);
    }
    return ds(between(0, room), size, stride);
  }
  std::int64_t rows() { return between(1, static_cast<int>(spec_.rows)); }
  std::int64_t cols() {
    if (coin(30)) return spec_.cols;
    return between(1, static_cast<int>(spec_.cols));
  }
  CBuf<T> read_region(int r, std::int64_t h, std::int64_t w) {
    // Contiguous regions now and then (whole rows), so large copies chunk.
    if (w == spec_.cols) return read_[static_cast<std::size_t>(r)].at(slice(h, spec_.rows, true), ds(0, w));
    return read_[static_cast<std::size_t>(r)].at(slice(h, spec_.rows, true), slice(w, spec_.cols, true));
  }
  Buf<T> write_region(int r, std::int64_t h, std::int64_t w) {
    if (w == spec_.cols) return wref(r).at(slice(h, spec_.rows, true), ds(0, w));
    return wref(r).at(slice(h, spec_.rows, true), slice(w, spec_.cols, true));
  }

  // ---- values
  Val<T> leaf(std::int64_t h, std::int64_t w) {
    const TypedShape<dyn_extents<2>> shape{Shape{h, w}};
    const int k = between(0, 9);
    if (k < 5) {
      const int r = readable();
      if (r >= 0) return read_region(r, h, w).load();
    }
    if (k == 5) return iota<T>(shape, static_cast<std::size_t>(between(0, 1))) - cast<T>(me_);
    if (k == 6 && loop_) return full<T>(shape, static_cast<T>(between(-3, 3))) + cast<T>(*loop_);
    if (k == 7) return full<T>(shape, static_cast<T>(between(-4, 4))) * cast<T>(me_ + 1);
    if constexpr (refx::is_floating_v<T>) return full<T>(shape, static_cast<T>(between(-8, 8)) * T(0.5));
    else return full<T>(shape, static_cast<T>(between(-8, 8)));
  }
  Val<T> expr(std::int64_t h, std::int64_t w, int budget) {
    if (budget <= 0 || coin(25)) return leaf(h, w);
    const Val<T> a = expr(h, w, budget - 1);
    return combine(
        a, [&] { return expr(h, w, budget - 1); },
        [](const Val<T>& x) {
          if constexpr (refx::is_floating_v<T>) return x * T(0.75) + T(1);
          else return x * T(3) + T(1);
        });
  }

  // ---- statements
  void compute() {
    const int r = writable();
    if (r < 0) return;
    const std::int64_t h = rows(), w = cols();
    const Val<T> v = expr(h, w, between(0, 4));
    const Buf<T> target = write_region(r, h, w);
    if (coin(25)) target += v;
    else target.store(v);
  }

  /// carry = carry * k + expr over a loop (reads only), then stored.
  void carry_loop() {
    const int r = writable();
    if (r < 0) return;
    const std::int64_t h = rows(), w = cols();
    const Val<T> init = expr(h, w, 1);
    const int lo = between(0, 2), hi = lo + between(0, 3);
    auto saved = loop_;
    const int saved_hi = loop_hi_;
    const Val<T> out = fori_loop(
        lo, hi,
        [&](Scalar<std::int32_t> i, Val<T> c) {
          loop_ = i;
          loop_hi_ = hi;
          if constexpr (refx::is_floating_v<T>) return c * T(0.5) + expr(h, w, 2);
          else return c * T(-3) + expr(h, w, 2);
        },
        init);
    loop_ = saved;
    loop_hi_ = saved_hi;
    write_region(r, h, w).store(out);
  }

  void start_local(int frame) {
    if (locals_.size() >= 2) return;
    const int sem = locals_.empty() ? between(0, 1) : 1 - locals_.front().sem;
    const int s = readable(), d = writable();
    if (s < 0 || d < 0 || s == d) return;
    const std::int64_t h = rows(), w = cols();
    const CBuf<T> src = read_region(s, h, w);
    const Buf<T> dst = write_region(d, h, w);
    auto c = make_async_copy(src, dst, sems_.ldma.at(sem));
    const int k = between(0, 9);
    if (k == 0) c.start(accumulate);
    else if (k == 1) c.start(accumulate_max);
    else c.start();
    locals_.push_back({c, src, dst, s, d, sem, frame});
  }
  void wait_local(std::size_t k) {
    const Local f = locals_[k];
    if (coin(30)) make_async_copy(f.src, f.dst, sems_.ldma.at(f.sem)).wait();  // an equal, fresh descriptor
    else f.copy.wait();
    locals_.erase(locals_.begin() + static_cast<std::ptrdiff_t>(k));
  }

  /// Where device `me` sends and from where it receives, under a pattern.
  struct Route {
    DeviceId to;
    DeviceId from;
  };
  Scalar<std::int32_t> lookup(const std::vector<int>& table) {
    Scalar<std::int32_t> r = table[0];
    for (std::size_t k = 1; k < table.size(); ++k)
      if (table[k] != table[0]) r = select(me_ == static_cast<std::int32_t>(k), Scalar<std::int32_t>(table[k]), r);
    return r;
  }
  Route route() {
    const int kind = between(0, 9);
    if (kind < 4 || n_ == 1) {  // a ring shift along one axis
      const bool along_y = mesh_.num_axes() == 2 && coin(40);
      const std::string axis = along_y ? "y" : "x";
      const int size = mesh_.axis_size(axis);
      const int s = size == 1 ? 0 : between(coin(10) ? 0 : 1, size - 1);
      const Scalar<std::int32_t> i = mesh_.num_axes() == 1 ? me_ : along_y ? *iy_ : *ix_;
      const Scalar<std::int32_t> fwd = (i + s) % size, back = (i + (size - s)) % size;
      if (mesh_.num_axes() == 1) {
        if (coin(50)) return {DeviceId(fwd), DeviceId(back)};
        return {DeviceId::named({{"x", fwd}}), DeviceId::mesh({back})};
      }
      const int form = between(0, 2);
      const auto id = [&](const Scalar<std::int32_t>& c) {
        const Scalar<std::int32_t> y = along_y ? c : *iy_, x = along_y ? *ix_ : c;
        if (form == 0) return DeviceId(y * mesh_.axis_size("x") + x);
        if (form == 1) return DeviceId::mesh({y, x});
        return along_y ? DeviceId::named({{"y", c}}) : DeviceId::named({{"x", c}});
      };
      return {id(fwd), id(back)};
    }
    // A random permutation of the logical ids (sometimes the identity).
    std::vector<int> to(static_cast<std::size_t>(n_)), from(static_cast<std::size_t>(n_));
    for (int d = 0; d < n_; ++d) to[static_cast<std::size_t>(d)] = d;
    if (kind != 9) std::shuffle(to.begin(), to.end(), rng_);
    for (int d = 0; d < n_; ++d) from[static_cast<std::size_t>(to[static_cast<std::size_t>(d)])] = d;
    return {DeviceId(lookup(to)), DeviceId(lookup(from))};
  }

  void start_remote(int frame) {
    if (!uniform_ || slot_ >= kSlots || remotes_.size() >= 3) return;
    const int s = readable(), d = writable();
    if (s < 0 || d < 0 || s == d) return;
    const int slot = slot_++;
    const std::int64_t h = rows(), w = cols();
    const CBuf<T> src = read_region(s, h, w);
    const Buf<T> dst = write_region(d, h, w);
    const Route r = route();
    // The receiver (this device, for the copy arriving here) is ready: tell
    // the sender; then wait until my own receiver is ready.
    semaphore_signal(sems_.ready.at(slot), 1, r.from);
    semaphore_wait(sems_.ready.at(slot), 1);
    auto c = make_async_remote_copy(src, dst, sems_.send.at(slot), sems_.recv.at(slot), r.to);
    const int k = between(0, 9);
    if (k == 0) c.start(accumulate);
    else if (k == 1) c.start(accumulate_max);
    else c.start();
    Remote f{c, s, d, slot, frame};
    if (coin(30)) {  // at once
      if (coin(50)) {
        c.wait();
      } else {
        c.wait_recv();
        c.wait_send();
      }
      return;
    }
    remotes_.push_back(f);
  }
  void wait_remote(std::size_t k, bool all) {
    Remote& f = remotes_[k];
    const bool send_first = coin(50);
    if (f.send_pending && (all || send_first || !f.recv_pending)) {
      f.copy.wait_send();
      f.send_pending = false;
    }
    if (f.recv_pending && (all || !send_first || !f.send_pending)) {
      f.copy.wait_recv();
      f.recv_pending = false;
    }
    if (!f.send_pending && !f.recv_pending) remotes_.erase(remotes_.begin() + static_cast<std::ptrdiff_t>(k));
  }

  /// An in-place all-reduce (collectives::all_reduce, any algorithm and
  /// direction) of a region at the same place on every device.
  void collective() {
    if (!uniform_) return;
    const int r = writable();
    if (r < 0) return;
    const std::int64_t h = rows(), w = cols();
    const Buf<T> x = wref(r).at(ds(between(0, static_cast<int>(spec_.rows - h)), h),
                                ds(between(0, static_cast<int>(spec_.cols - w)), w));
    const std::string axis = mesh_.num_axes() == 2 && coin(50) ? "y" : "x";
    const ReduceOp op = coin(50) ? ReduceOp::sum : ReduceOp::max;
    const auto dir = coin(50) ? collectives::Direction::unidirectional : collectives::Direction::bidirectional;
    const auto alg = static_cast<collectives::Algorithm>(between(0, 3));
    collectives::all_reduce(x, axis, op, dir, alg);
    ++collectives_;
  }

  void barrier() {
    if (!uniform_) return;
    auto b = get_barrier_semaphore();
    for (int d = 0; d < n_; ++d) semaphore_signal(b, 1, d);
    semaphore_wait(b, n_);
  }

  void effect() {
    const int site = sites_++;
    const bool ordered = coin(60);
    if (coin(30)) {  // a debug_print (ordered ones start with "O", unordered with "U")
      if (ordered) {
        if (loop_) debug_print(refx::ordered, "O site {} device {} i {}", site, me_, *loop_);
        else debug_print(refx::ordered, "O site {} device {}", site, me_);
      } else {
        debug_print("U site {} device {}", site, me_);
      }
      return;
    }
    const int r = readable();
    if (r < 0) return;
    const std::int64_t h = rows(), w = cols();
    const Val<T> v = read_region(r, h, w).load();
    const Scalar<std::int32_t> i = loop_ ? *loop_ : Scalar<std::int32_t>(-1);
    const auto fn = [site, ordered](std::int32_t device, std::int32_t iter, std::span<const T> data) {
      fault_plan().check(device, site);
      std::uint64_t hash = 1469598103934665603ULL;
      for (T x : data) {
        std::uint64_t bits = 0;
        if constexpr (refx::is_floating_v<T>) {
          if (std::isnan(x)) x = std::numeric_limits<T>::quiet_NaN();  // one NaN (payloads may differ)
        }
        std::memcpy(&bits, &x, sizeof x);
        hash = (hash ^ bits) * 1099511628211ULL;
      }
      log_sink().call(ordered, fmt::format("site {} device {} i {} n {} hash {:x}", site, device, iter, data.size(), hash));
    };
    if (ordered) io_callback(refx::ordered, fn, me_, i, v);
    else io_callback(fn, me_, i, v);
  }

  void fault_point() {
    if (!spec_.faults) return;
    extend::bind_effect(fault_point_p, extend::Attrs{sites_++});
  }

  void nested(int kind) {
    const int lo = between(0, 2), hi = lo + between(1, 3);
    const int frame = ++frames_;
    const bool was_uniform = uniform_;
    const auto body = [&] { block(frame); };
    if (kind == 1) {  // when on the loop index: the same on every device
      when(*loop_ % 2 == 0, body);
      return;
    }
    if (kind == 2) {  // when on the device: no communication inside
      uniform_ = false;
      const int k = between(0, std::max(0, n_ - 1));
      if (coin(50)) when(me_ == k, body);
      else when(me_ % 2 == 1, body);
      uniform_ = was_uniform;
      return;
    }
    in_loop(lo, hi, body);
  }

  void statement(int frame) {
    if (spec_.faults && coin(12)) fault_point();
    const int kind = between(0, 99);
    if (kind < 28) compute();
    else if (kind < 36) start_local(frame);
    else if (kind < 42) wait_oldest(locals_, frame, [&](std::size_t k) { wait_local(k); });
    else if (kind < 54) start_remote(frame);
    else if (kind < 60) wait_oldest(remotes_, frame, [&](std::size_t k) { wait_remote(k, false); });
    else if (kind < 65) signal();
    else if (kind < 69) wait_signals(false);
    else if (kind < 72) barrier();
    else if (kind < 75) collective();
    else if (kind < 78) effect();
    else if (kind < 81) carry_loop();
    else if (kind < 91 && depth_ < 2) nested(0);
    else if (kind < 95 && depth_ < 2) nested(2);
    else if (loop_ && depth_ < 2) nested(1);
    else compute();
  }

  /// Everything a block started is waited before it ends.
  void drain(int frame) {
    wait_all(locals_, frame, [&](std::size_t k) { wait_local(k); });
    wait_all(remotes_, frame, [&](std::size_t k) { wait_remote(k, true); });
    wait_signals(true);
  }

  const Spec& spec_;
  Mesh mesh_;
  Sems sems_;
  std::vector<CBuf<T>> read_;   // inputs, then the writable buffers
  std::vector<Buf<T>> write_;   // read_[kInputs + k] == write_[k]
  int n_ = 1;
  Scalar<std::int32_t> me_;
  std::optional<Scalar<std::int32_t>> ix_, iy_;
  std::vector<Local> locals_;
  std::vector<Remote> remotes_;
  int slot_ = 0, sites_ = 0, collectives_ = 0;
  bool uniform_ = true;
};

// ---------------------------------------------------------------- building and running

/// One traced program: the graph as traced (for the reference) and compiled
/// (for the runtime), and how many fault sites it has.
struct Built {
  Spec spec;
  Graph traced;
  std::shared_ptr<const Program> program;
  std::vector<Executable::Param> params;
  int sites = 0;
  int all_reduces = 0;  ///< collectives::all_reduce statements traced
};

template <class T>
Built build(const Spec& spec) {
  Built b;
  b.spec = spec;
  const Mesh mesh = spec.mesh();
  const Shape shape{spec.rows, spec.cols};
  int sites = 0, all_reduces = 0;
  const auto kernel_fn = [&spec, &sites, &all_reduces, shape](CBuf<T> a, CBuf<T> b2, Buf<T> o0, Buf<T> o1, Buf<T> o2) {
    const std::vector<Shape> scratch{shape, shape, Shape{2}, Shape{2}, Shape{kSlots}, Shape{kSlots}, Shape{kSlots}};
    run_scoped(scratch, [&](Buf<T> s0, Buf<T> s1, DmaSemaphores<2> ldma, RegularSemaphores<2> lreg,
                            RegularSemaphores<kSlots> ready, DmaSemaphores<kSlots> send, DmaSemaphores<kSlots> recv) {
      Generator<T> gen(spec, {a, b2}, {o0, o1, o2, s0, s1}, {ldma, lreg, ready, send, recv});
      sites = gen.program();
      all_reduces = gen.collectives();
    });
  };
  b.traced = trace(kernel_fn, TraceOptions{{shape, shape, shape, shape, shape}, &mesh, spec.collective_id});
  b.sites = sites;
  b.all_reduces = all_reduces;
  Graph compiled = b.traced;
  passes::run_pipeline(compiled);
  for (std::size_t i = 0; i < compiled.params().size(); ++i)
    b.params.push_back({compiled.type(compiled.params()[i]), i < static_cast<std::size_t>(kInputs)});
  b.program = std::make_shared<const Program>(std::move(compiled), mesh, fmt::format("fuzz_{}", spec.seed));
  return b;
}

/// Per-device outputs of one run, and what its effects logged.
struct Outcome {
  std::vector<std::vector<Buffer>> outputs;  // [output][device]
  EffectLog log;
};

template <class T>
std::vector<std::vector<T>> host_inputs(const Spec& s, int k) {
  std::vector<std::vector<T>> out;
  for (int d = 0; d < s.devices(); ++d) {
    std::vector<T> v(static_cast<std::size_t>(s.rows * s.cols));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = input_value<T>(s, d, k, static_cast<std::int64_t>(i));
    out.push_back(std::move(v));
  }
  return out;
}

/// The reference: MeshInterpreter on the traced (unoptimised) graph.
template <class T>
Outcome reference(const Built& b, std::uint64_t schedule_seed = 0, bool lazy = false) {
  const Spec& s = b.spec;
  const int n = s.devices();
  const Shape shape{s.rows, s.cols};
  std::vector<std::vector<Buffer>> bufs(static_cast<std::size_t>(n));
  for (int k = 0; k < kInputs; ++k) {
    const auto host = host_inputs<T>(s, k);
    for (int d = 0; d < n; ++d) bufs[static_cast<std::size_t>(d)].push_back(Buffer::from<T>(shape, host[static_cast<std::size_t>(d)]));
  }
  for (int d = 0; d < n; ++d)
    for (int k = 0; k < kOutputs; ++k) bufs[static_cast<std::size_t>(d)].emplace_back(dtype_v<T>, shape);
  std::vector<std::vector<Buffer*>> args(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d)
    for (Buffer& x : bufs[static_cast<std::size_t>(d)]) args[static_cast<std::size_t>(d)].push_back(&x);
  const Mesh mesh = s.mesh();
  log_sink().take();
  MeshInterpreter::Options o;
  o.schedule_seed = schedule_seed;
  o.lazy = lazy;
  o.print = [](std::string_view t) { log_sink().print(t); };
  MeshInterpreter::run(b.traced, mesh, args, o);
  Outcome out;
  out.log = log_sink().take();
  out.outputs.resize(kOutputs);
  for (int k = 0; k < kOutputs; ++k)
    for (int d = 0; d < n; ++d)
      out.outputs[static_cast<std::size_t>(k)].push_back(std::move(bufs[static_cast<std::size_t>(d)][static_cast<std::size_t>(kInputs + k)]));
  return out;
}

/// Dispatches the compiled program on `rt`; returns its outputs (not waited).
template <class T>
std::vector<Array> dispatch(const Built& b, Runtime& rt) {
  const Spec& s = b.spec;
  const Shape shape{s.rows, s.cols};
  const Executable exe(b.program, b.params, rt);
  std::vector<Array> ins;
  for (int k = 0; k < kInputs; ++k) ins.push_back(Array::from_shards<T>(host_inputs<T>(s, k), shape, rt));
  return exe(ins);
}

/// Waits for `outs` (rethrows the launch's error) and collects the outcome.
inline Outcome collect(const std::vector<Array>& outs, Runtime& rt) {
  for (const Array& a : outs) a.block_until_ready();
  rt.drain();  // every host effect of the launch has run
  Outcome o;
  for (const Array& a : outs) {
    std::vector<Buffer> shards;
    for (int d = 0; d < a.num_devices(); ++d) shards.push_back(a.shard(d).clone());
    o.outputs.push_back(std::move(shards));
  }
  o.log = log_sink().take();
  return o;
}

/// Element-by-element comparison; NaNs compare equal to NaNs (payloads may
/// differ between a fused and an unfused evaluation).
template <class T>
::testing::AssertionResult same_outputs(const Outcome& got, const Outcome& want) {
  if (got.outputs.size() != want.outputs.size()) return ::testing::AssertionFailure() << "different output counts";
  for (std::size_t k = 0; k < want.outputs.size(); ++k)
    for (std::size_t d = 0; d < want.outputs[k].size(); ++d) {
      const Buffer &g = got.outputs[k][d], &w = want.outputs[k][d];
      if (g.size() != w.size()) return ::testing::AssertionFailure() << "output " << k << " device " << d << ": sizes differ";
      const T* gp = g.data<T>();
      const T* wp = w.data<T>();
      for (std::int64_t i = 0; i < w.size(); ++i) {
        bool ok = std::memcmp(&gp[i], &wp[i], sizeof(T)) == 0;
        if constexpr (refx::is_floating_v<T>) ok = ok || (std::isnan(gp[i]) && std::isnan(wp[i]));
        if (!ok)
          return ::testing::AssertionFailure() << "output " << k << " device " << d << " element " << i << " (row "
                                               << i / g.shape()[1] << ", col " << i % g.shape()[1] << "): got "
                                               << +gp[i] << ", expected " << +wp[i];
      }
    }
  if (!(got.log == want.log)) {
    const auto show = [](const std::vector<std::string>& v) { return fmt::format("[{}]", fmt::join(v, " | ")); };
    return ::testing::AssertionFailure() << "host effects differ:\n  ordered calls got " << show(got.log.ordered_calls)
                                         << "\n  want " << show(want.log.ordered_calls) << "\n  unordered calls got "
                                         << show(got.log.unordered_calls) << "\n  want "
                                         << show(want.log.unordered_calls) << "\n  ordered prints got "
                                         << show(got.log.ordered_prints) << "\n  want " << show(want.log.ordered_prints)
                                         << "\n  unordered prints got " << show(got.log.unordered_prints) << "\n  want "
                                         << show(want.log.unordered_prints);
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- runtimes

/// The runtime configurations programs run on: worker counts, eager and lazy
/// copies, copies chunked into many pool tasks, checked mode. Each run also
/// gets a fresh shuffle seed (WorkerPool::set_shuffle).
struct RuntimeConfig {
  const char* name;
  RuntimeOptions options;
};
inline const std::vector<RuntimeConfig>& runtime_configs() {
  static const std::vector<RuntimeConfig> configs = [] {
    std::vector<RuntimeConfig> c;
    const auto opts = [](unsigned workers, bool lazy, std::size_t inline_bytes, std::size_t chunk, bool races) {
      RuntimeOptions o;
      o.workers = workers;
      o.lazy_copies = lazy;
      o.inline_copy_bytes = inline_bytes;
      o.copy_chunk_bytes = chunk;
      o.detect_races = races;
      o.shuffle_seed = 1;
      return o;
    };
    c.push_back({"1 worker", opts(1, false, 256 << 10, 1 << 20, false)});
    c.push_back({"2 workers", opts(2, false, 256 << 10, 1 << 20, false)});
    c.push_back({"3 workers, chunked copies", opts(3, false, 16, 48, false)});
    c.push_back({"2 workers, lazy copies", opts(2, true, 256 << 10, 1 << 20, false)});
    c.push_back({"4 workers, chunked copies", opts(4, false, 0, 24, false)});
    c.push_back({"2 workers, race detector", opts(2, false, 256 << 10, 1 << 20, true)});
    c.push_back({"1 worker, lazy copies", opts(1, true, 256 << 10, 1 << 20, false)});
    return c;
  }();
  return configs;
}
/// One Runtime per configuration, created on first use and kept (their
/// worker threads park when idle).
inline Runtime& runtime(std::size_t config) {
  static std::vector<std::unique_ptr<Runtime>> rts = [] {
    std::vector<std::unique_ptr<Runtime>> v;
    for (const RuntimeConfig& c : runtime_configs()) {
      v.push_back(std::make_unique<Runtime>(c.options));
      v.back()->set_print_sink([](std::string_view t) { log_sink().print(t); });
    }
    return v;
  }();
  return *rts[config];
}

}  // namespace refx::testing::spmd
