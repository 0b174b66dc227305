#pragma once
// The threaded multi-device runtime: a worker pool, the launch queue (one
// program runs on its mesh at a time, in dispatch order), and the state that
// outlives a launch (barrier semaphores, counters).

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <refx/runtime/launch.hpp>
#include <refx/runtime/worker_pool.hpp>

namespace refx {

struct RuntimeOptions {
  /// Worker threads; 0 = the hardware's.
  unsigned workers = 0;
  /// Copies up to this size run inline on the starting device's worker.
  std::size_t inline_copy_bytes = std::size_t{256} << 10;
  /// Larger copies are split into chunks of about this size.
  std::size_t copy_chunk_bytes = std::size_t{1} << 20;
  /// Non-zero: run queued tasks in a random order seeded by this (testing).
  std::uint64_t shuffle_seed = 0;
  /// Checked mode: a happens-before race detector reports unordered
  /// conflicting accesses (vector clocks through semaphores and copies).
  bool detect_races = false;
  /// Checked mode: a copy runs only when someone waits on its semaphore (or
  /// at the end of the kernel), exposing code that reads before it waits.
  bool lazy_copies = false;
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions o = {})
      : options_(o), pool_(o.workers != 0 ? o.workers : std::max(1u, std::thread::hardware_concurrency())) {
    if (o.shuffle_seed != 0) pool_.set_shuffle(o.shuffle_seed);
  }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() { drain(); }

  /// The process-wide runtime used by default.
  static Runtime& global() {
    static Runtime rt;
    return rt;
  }

  const RuntimeOptions& options() const noexcept { return options_; }
  WorkerPool& pool() noexcept { return pool_; }

  /// Queues a launch; it starts when every earlier launch has finished.
  std::shared_ptr<Launch> enqueue(std::shared_ptr<const Program> p, std::vector<std::vector<Buffer*>> args,
                                  std::vector<std::shared_ptr<const void>> keep_alive) {
    auto l = std::make_shared<Launch>(*this, std::move(p), std::move(args), std::move(keep_alive));
    bool start_now = false;
    {
      std::lock_guard lock(mutex_);
      ++launches_;
      last_ = l->event();
      if (busy_) {
        queue_.push_back(l);
      } else {
        busy_ = true;
        start_now = true;
      }
    }
    // Setting a launch up is the workers' job: dispatch only queues.
    if (start_now) pool_.push([l] { l->start(); });
    return l;
  }

  /// Waits until every queued launch has finished (errors stay with their Arrays).
  void drain() {
    std::shared_ptr<Event> last;
    {
      std::lock_guard lock(mutex_);
      last = last_;
    }
    if (last) {
      try {
        last->wait(&pool_);
      } catch (...) {  // reported through the launch's own outputs
      }
    }
  }

  /// The persistent barrier semaphore of (device, collective id).
  Buffer& barrier(std::int32_t device, std::int64_t collective_id) {
    std::lock_guard lock(mutex_);
    auto [it, fresh] = barriers_.try_emplace({device, collective_id}, DType::i64, Shape{});
    if (fresh) it->second.fill_zero();
    return it->second;
  }

  LaunchStats totals() const {
    std::lock_guard lock(mutex_);
    return totals_;
  }
  std::int64_t launches() const {
    std::lock_guard lock(mutex_);
    return launches_;
  }

 private:
  friend class Launch;
  void record(const LaunchStats& s) {
    std::lock_guard lock(mutex_);
    totals_.bytes_copied += s.bytes_copied;
    totals_.copies += s.copies;
    totals_.parks += s.parks;
    totals_.wakeups += s.wakeups;
  }
  void launch_finished() {
    std::shared_ptr<Launch> next;
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty()) {
        busy_ = false;
      } else {
        next = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (next) pool_.push([next] { next->start(); });
  }

  RuntimeOptions options_;
  mutable std::mutex mutex_;
  std::deque<std::shared_ptr<Launch>> queue_;
  std::shared_ptr<Event> last_;
  bool busy_ = false;
  std::int64_t launches_ = 0;
  LaunchStats totals_;
  std::map<std::pair<std::int32_t, std::int64_t>, Buffer> barriers_;
  WorkerPool pool_;  // last: its threads stop before the state they use goes
};

}  // namespace refx

#include <refx/runtime/launch_impl.hpp>
