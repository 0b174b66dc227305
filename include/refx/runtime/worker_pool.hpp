#pragma once
// A fixed pool of worker threads running short tasks (device programs until
// they block, copy chunks). Idle workers spin briefly, then sleep on a
// condition variable: nothing spins while devices wait. A thread waiting for
// a result can help by running queued tasks (run_one).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace refx {

/// Polls `done` for up to `window` of wall time (spinning a little, then
/// yielding) and returns whether it came true. Bounded by time, not by count:
/// on a loaded machine one yield can give away a whole time slice.
template <class Done>
bool poll_briefly(Done done, std::chrono::microseconds window) {
  for (int i = 0; i < 200; ++i)
    if (done()) return true;
  const auto until = std::chrono::steady_clock::now() + window;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::yield();
  }
  return true;
}

/// Spins (without yielding the core) until `done` is true or `window` has
/// passed: for a thread that has a core of its own and expects it soon.
template <class Done>
void spin_on(Done done, std::chrono::microseconds window) {
  const auto until = std::chrono::steady_clock::now() + window;
  for (int i = 1; !done(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return;
  }
}

class WorkerPool {
 public:
  using Task = std::function<void()>;

  /// `poll_window`: how long an idle worker, or a waiting host thread,
  /// polls before it sleeps.
  explicit WorkerPool(unsigned workers, std::chrono::microseconds poll_window = std::chrono::milliseconds(1))
      : poll_window_(poll_window) {
    if (workers == 0) workers = 1;
    mail_ = std::make_unique<Mailbox[]>(workers);
    for (unsigned i = 0; i < workers; ++i)
      threads_.emplace_back([this, i] {
        current() = Current{this, static_cast<int>(i)};
        work();
      });
  }
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stop_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned size() const noexcept { return static_cast<unsigned>(threads_.size()); }
  /// The calling thread's index among this pool's workers, or -1.
  int worker_index() const noexcept { return current().pool == this ? current().index : -1; }

  /// Work that a waiting host thread (not a worker) does while it has no
  /// task to run: `help` returns whether it did something, `done` ends it.
  void set_host_helper(std::function<bool()> help, std::function<void()> done) {
    help_ = std::move(help);
    help_done_ = std::move(done);
  }
  std::chrono::microseconds poll_window() const noexcept { return poll_window_; }

  /// The host helper, or null on a worker (set_host_helper).
  const std::function<bool()>* host_helper() const noexcept { return help_ && worker_index() < 0 ? &help_ : nullptr; }
  void host_helper_done() const {
    if (help_done_) help_done_();
  }

  /// Randomises which queued task runs next (checked mode: varied interleavings).
  void set_shuffle(std::uint64_t seed) {
    std::lock_guard lock(mutex_);
    shuffle_ = seed != 0;
    rng_.seed(seed);
  }

  void push(Task t) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(t));
      pending_.store(tasks_.size(), std::memory_order_release);
    }
    // Wake a sleeper only when the spinners cannot take every queued task.
    if (pending_.load(std::memory_order_acquire) > static_cast<std::size_t>(spinning_.load(std::memory_order_acquire)))
      cv_.notify_one();
  }

  /// Runs `t` on worker `w`, which takes it before any queued task; the
  /// host's run_one() never takes it. For work that needs a thread of its
  /// own (a bound launch's devices wait for one another). At most one such
  /// task per worker at a time.
  void push_to(unsigned w, Task t) {
    Mailbox& m = mail_[w];
    m.task = std::move(t);
    m.full.store(true, std::memory_order_seq_cst);
    // A polling worker sees it by itself. One that stopped polling checks
    // `full` under the lock before it sleeps (after clearing `polling`: one
    // of the two sees the other's store): take the lock once, so that it
    // has either checked already or is asleep, and wake it (notify_one
    // might wake another).
    if (!m.polling.load(std::memory_order_seq_cst)) {
      { std::lock_guard lock(mutex_); }
      cv_.notify_all();
    }
  }

  /// Whether a task is queued (a hint: another thread may take it first).
  bool has_work() const noexcept { return pending_.load(std::memory_order_acquire) != 0; }

  /// Runs one queued task on the calling thread; false if there was none.
  bool run_one() {
    Task t;
    {
      std::lock_guard lock(mutex_);
      if (tasks_.empty()) return false;
      t = pop_locked();
    }
    t();
    return true;
  }

 private:
  struct Current {
    const WorkerPool* pool = nullptr;
    int index = -1;
  };
  static Current& current() noexcept {
    thread_local Current c;
    return c;
  }

  Task pop_locked() {
    std::size_t i = 0;
    if (shuffle_ && tasks_.size() > 1) i = std::uniform_int_distribution<std::size_t>(0, tasks_.size() - 1)(rng_);
    Task t = std::move(tasks_[i]);
    tasks_.erase(tasks_.begin() + static_cast<std::ptrdiff_t>(i));
    pending_.store(tasks_.size(), std::memory_order_release);
    return t;
  }

  void work() {
    Mailbox& mine = mail_[static_cast<std::size_t>(current().index)];
    bool mailed = false;  // the last task came through the mailbox
    for (;;) {
      // From here until it clears `polling` and checks the mailbox under the
      // lock, the worker sees its mail by itself: push_to need not wake it.
      // (Not waking it matters: push_to's notify_all also wakes the idle
      // workers, which then poll for their whole window, a third thread on
      // two cores, call after call.)
      mine.polling.store(true, std::memory_order_seq_cst);
      // Its sender usually sends again within microseconds (a bound launch
      // per call): watch the mailbox without yielding for a while first.
      if (mailed) spin_on([&] { return mine.full.load(std::memory_order_acquire) || has_work(); }, mail_spin);
      if (mine.full.load(std::memory_order_acquire)) {  // no lock: only this worker takes it
        run_mail(mine);
        mailed = true;
        continue;
      }
      mailed = false;
      // Spin a little first: a device woken by a peer usually comes back soon.
      spinning_.fetch_add(1, std::memory_order_acq_rel);
      const bool woke = poll_briefly(
          [&] {
            return mine.full.load(std::memory_order_acquire) || has_work() || stop_.load(std::memory_order_acquire);
          },
          poll_window_);
      mine.polling.store(false, std::memory_order_seq_cst);
      spinning_.fetch_sub(1, std::memory_order_acq_rel);
      Task t;
      {
        std::unique_lock lock(mutex_);
        const auto idle = [&] { return tasks_.empty() && !mine.full.load(std::memory_order_seq_cst); };
        // Work appeared but another thread took it first: spin again rather
        // than sleep, or the next push would have to wake this thread.
        if (woke && !stop_ && idle()) continue;
        if (!stop_ && idle()) cv_.wait(lock);
        if (stop_ && idle()) return;
        // Woken, but the task was taken first (by the host thread helping,
        // which on this VM beats a futex wake-up): poll again too. Sleeping
        // again here left both workers asleep through a stream of launches
        // while the host thread ran every device and copy alone
        // (docs/notes/performance-history.md, 1800c76; on a loaded machine the
        // polling workers still lose the core to other processes).
        if (idle() || mine.full.load(std::memory_order_acquire)) continue;  // the mail is taken at the top
        t = pop_locked();
      }
      t();
    }
  }

  // What idle threads poll (pending_, stop_) has a cache line of its own:
  // apart from what a push or a pop writes under the lock (tasks_) and from
  // what the pollers write (spinning_). Sharing one made every push and pop
  // fetch the line back from a polling core, and where the lines' boundaries
  // fell depended on the layout of whatever held the pool: 0.2-0.3 us per
  // 2-device launch (docs/notes/performance-history.md, "The 4 KiB gap").
  static constexpr std::size_t cache_line = 64;

  static constexpr std::chrono::microseconds mail_spin{20};

  // A task for one worker (push_to), and whether that worker is polling.
  struct alignas(cache_line) Mailbox {
    std::atomic<bool> full{false};  // a task is in it (set by push_to, cleared by the worker)
    std::atomic<bool> polling{false};
    Task task;
  };

  void run_mail(Mailbox& m) {
    Task t = std::move(m.task);
    m.full.store(false, std::memory_order_release);
    t();
  }

  const std::chrono::microseconds poll_window_;
  std::function<bool()> help_;  // set before any task runs
  std::function<void()> help_done_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  alignas(cache_line) std::atomic<std::size_t> pending_{0};
  std::atomic<bool> stop_{false};  // set under mutex_; atomic for the spinners, which do not lock
  alignas(cache_line) std::atomic<int> spinning_{0};
  alignas(cache_line) bool shuffle_ = false;
  std::mt19937_64 rng_;
  std::unique_ptr<Mailbox[]> mail_;
  std::vector<std::thread> threads_;
};

}  // namespace refx
