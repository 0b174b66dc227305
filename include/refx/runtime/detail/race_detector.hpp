#pragma once
// A happens-before race detector for checked runs. Every device (every core
// of a device with several) and every
// copy is a "thread" with a vector clock. A semaphore signal (or a copy's
// completion) releases the signaller's clock into the semaphore; a wait that
// succeeds acquires it. Each compute access and each copy's read and write is
// logged with its thread's clock; two accesses to overlapping elements of one
// buffer, at least one a write, neither ordered before the other, are a race.

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include <refx/core/mesh.hpp>
#include <refx/ir/view_access.hpp>

namespace refx::detail {

class RaceDetector {
 public:
  /// One thread per lane of `mesh` (a device, or each core of one).
  explicit RaceDetector(const Mesh& mesh) : mesh_(mesh) {
    for (std::int32_t d = 0; d < mesh.lanes(); ++d) {
      clocks_.emplace_back(static_cast<std::size_t>(d) + 1, 0);
      clocks_.back()[static_cast<std::size_t>(d)] = 1;
    }
  }

  /// A compute access by `device` to a region of a buffer.
  void access(std::int32_t device, const ResolvedView& v, bool write, std::string_view what, SourceLoc loc) {
    std::lock_guard lock(mutex_);
    log(device, v, write, fmt::format("{} by {} at {}", what, mesh_.describe_lane(device), loc));
  }
  /// `device` signals (releases into) the semaphore counter `sem`.
  void release(std::int32_t thread, const void* sem) {
    std::lock_guard lock(mutex_);
    join(sem_clocks_[sem], clock(thread));
    tick(thread);
  }
  /// `device` has waited successfully on `sem`.
  void acquire(std::int32_t device, const void* sem) {
    std::lock_guard lock(mutex_);
    auto it = sem_clocks_.find(sem);
    if (it != sem_clocks_.end()) join(clocks_[static_cast<std::size_t>(device)], it->second);
  }
  /// A copy started by `device`: a new thread ordered after everything before.
  std::int32_t copy_begin(std::int32_t device) {
    std::lock_guard lock(mutex_);
    clocks_.push_back(clock(device));
    const auto t = static_cast<std::int32_t>(clocks_.size() - 1);
    clocks_.back().resize(clocks_.size(), 0);
    clocks_.back()[static_cast<std::size_t>(t)] = 1;
    tick(device);
    return t;
  }
  /// The copy thread `t` reads its source and writes its destination.
  void copy_access(std::int32_t t, const ResolvedView& src, const ResolvedView& dst, std::int32_t source,
                   std::int32_t target, SourceLoc loc) {
    std::lock_guard lock(mutex_);
    log(t, src, false, fmt::format("copy read (started by {} at {})", mesh_.describe_lane(source), loc));
    log(t, dst, true,
        fmt::format("copy write into {} (started by {} at {})", mesh_.describe_lane(target),
                    mesh_.describe_lane(source), loc));
  }

  std::vector<std::string> races() const {
    std::lock_guard lock(mutex_);
    return races_;
  }

 private:
  using Clock = std::vector<std::uint32_t>;
  struct Access {
    std::int32_t thread;
    std::shared_ptr<const Clock> clock;
    std::int64_t lo, hi;                 // element interval touched (inclusive)
    std::vector<std::int64_t> elements;  // exact set when small, sorted
    bool write;
    std::string what;
  };

  Clock& clock(std::int32_t t) { return clocks_[static_cast<std::size_t>(t)]; }
  void tick(std::int32_t t) {
    Clock& c = clock(t);
    if (c.size() <= static_cast<std::size_t>(t)) c.resize(static_cast<std::size_t>(t) + 1, 0);
    ++c[static_cast<std::size_t>(t)];
  }
  static void join(Clock& into, const Clock& from) {
    if (into.size() < from.size()) into.resize(from.size(), 0);
    for (std::size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
  }
  static std::uint32_t at(const Clock& c, std::int32_t t) {
    return static_cast<std::size_t>(t) < c.size() ? c[static_cast<std::size_t>(t)] : 0;
  }
  static bool before(const Access& a, const Access& b) { return at(*a.clock, a.thread) <= at(*b.clock, a.thread); }

  static bool overlap(const Access& a, const Access& b) {
    if (a.hi < b.lo || b.hi < a.lo) return false;
    if (a.elements.empty() || b.elements.empty()) return true;
    std::vector<std::int64_t> common;
    std::set_intersection(a.elements.begin(), a.elements.end(), b.elements.begin(), b.elements.end(),
                          std::back_inserter(common));
    return !common.empty();
  }

  void log(std::int32_t thread, const ResolvedView& v, bool write, std::string what) {
    if (v.elements() == 0) return;
    Access a{thread, std::make_shared<const Clock>(clock(thread)), 0, 0, {}, write, std::move(what)};
    std::int64_t lo = v.offset, hi = v.offset;
    for (std::size_t d = 0; d < v.shape.rank(); ++d) hi += (v.shape[d] - 1) * v.strides[d];
    a.lo = lo;
    a.hi = hi;
    if (v.elements() <= 4096) {
      for_each_row(v, [&](std::int64_t off, std::int64_t, std::int64_t n, std::int64_t stride) {
        for (std::int64_t i = 0; i < n; ++i) a.elements.push_back(off + i * stride);
      });
      std::sort(a.elements.begin(), a.elements.end());
    }
    auto& history = log_[v.buffer];
    for (const Access& b : history) {
      if (!(a.write || b.write) || b.thread == a.thread) continue;
      if (before(b, a) || before(a, b) || !overlap(a, b)) continue;
      if (races_.size() < 16) races_.push_back(fmt::format("{} and {}", b.what, a.what));
    }
    history.push_back(std::move(a));
  }

  const Mesh mesh_;
  mutable std::mutex mutex_;
  std::vector<Clock> clocks_;
  std::unordered_map<const void*, Clock> sem_clocks_;
  std::unordered_map<const Buffer*, std::vector<Access>> log_;
  std::vector<std::string> races_;
};

}  // namespace refx::detail
