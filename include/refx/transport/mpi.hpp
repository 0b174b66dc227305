#pragma once
// The MPI transport (docs/transport.md): each rank hosts a contiguous block of
// every mesh's devices. One thread per rank at a time does all communication:
// its progress thread, or a host thread waiting for a result (help):
//
//   copy    header message, then the dense payload (from the source itself
//           when it is dense); the receiver takes the payload straight into
//           the destination when no combining is needed, else into a scratch
//           buffer and combines it in -- then raises the semaphore. Data
//           before semaphore, on the receiver, by construction.
//   signal  one message; the receiver adds it under the launch's lock.
//   end     every rank reports to rank 0 whenever its part of a launch is
//           idle (with its message counts); when all are idle and the counts
//           balance, rank 0 probes every rank once more and ends the launch
//           only if nothing moved in between (exact quiescence: the outcome
//           is ok, a failure, a deadlock or unbalanced semaphores, the same
//           on every rank).
//
// Two-sided messages and a thread instead of MPI-3 RMA: a put followed by an
// accumulate on a passive-target window is ordered only after a flush, which
// the sender would have to wait for before the accumulate anyway, and the
// receiver still has to learn that a semaphore rose to wake a parked device.
// Here the receiver applies data and increment itself, in that order.
//
// It knows a launch only as a transport::Receiver and includes nothing of
// runtime/. Including this header makes MPI the transport of
// Runtime::global() (transport::default_remote(), set by
// mpi_registered below); the CMake target refx::mpi links src/mpi_transport.cpp,
// which includes it, compiled once, into every program that links it.

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <refx/ir/buffer.hpp>
#include <refx/transport/transport.hpp>

namespace refx::transport {

class Mpi final : public Remote {
 public:
  Mpi() {
    int initialized = 0, provided = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      owns_mpi_ = true;
    } else {
      MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE)
      throw Error(
          "refx: the MPI transport needs MPI_THREAD_MULTIPLE (initialize MPI with MPI_Init_thread, or let "
          "refx initialize it)");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &p_.rank);
    MPI_Comm_size(comm_, &p_.ranks);
    MPI_Comm local;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_size(local, &p_.local_ranks);
    MPI_Comm_free(&local);
    thread_ = std::thread([this] { progress(); });
  }
  ~Mpi() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
    MPI_Comm_free(&comm_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_mpi_ && !finalized) MPI_Finalize();
  }
  Mpi(const Mpi&) = delete;
  Mpi& operator=(const Mpi&) = delete;

  Placement placement() const override { return p_; }
  MPI_Comm comm() const noexcept { return comm_; }

  void started(std::int64_t number, std::shared_ptr<Receiver> l) override {
    std::deque<Early> early;
    {
      std::lock_guard lock(mutex_);
      launches_[number] = l;
      if (auto it = early_.find(number); it != early_.end()) {
        early = std::move(it->second);
        early_.erase(it);
      }
    }
    cv_.notify_all();  // a launch is on: poll without sleeping
    for (Early& e : early) {
      if (e.kind == Kind::signal) l->remote_signal(e.signal);
      else if (e.kind == Kind::copy) l->remote_landed(e.copy, e.data.get());
      else l->remote_failed(e.text);
    }
  }
  void signal(int rank, const RemoteSignal& s) override {
    wire::Writer w;
    w.put(Kind::signal).put(s);
    send(Out{rank, std::move(w.out)});
  }
  void copy(int rank, const RemoteCopy& c, const std::byte* data, std::shared_ptr<void> keep,
            std::function<void()> sent) override {
    wire::Writer w;
    w.put(Kind::copy).put(c);
    send(Out{rank, std::move(w.out), data, c.bytes, segment(c), std::move(keep), std::move(sent)});
  }
  void failed(std::int64_t number, const std::string& message) override {
    for (int r = 0; r < p_.ranks; ++r) {
      if (r == p_.rank) continue;
      wire::Writer w;
      w.put(Kind::fail).put(number).str(message);
      send(Out{r, std::move(w.out)});
    }
  }
  void report(Report r) override {
    // A rank whose devices all finished tells every rank (each settles the
    // launch itself when all have: see settle); anything else goes to rank 0.
    const bool to_all = r.finished && r.probe == 0;
    wire::Writer w;
    w.put(Kind::report);
    wire::put_report(w, r);
    for (int q = to_all ? p_.ranks - 1 : 0; q > 0; --q) send(Out{q, w.out});
    send(Out{0, std::move(w.out)});
  }
  void finished(std::int64_t number) override {
    std::lock_guard lock(mutex_);
    launches_.erase(number);
  }
  // A waiting host thread does the progress thread's work, which then
  // sleeps: one thread fewer takes turns on the rank's cores, and a launch
  // that ends on this rank ends on the thread waiting for it.
  bool help() override {
    const std::thread::id me = std::this_thread::get_id();
    if (driver_.load(std::memory_order_acquire) != me) {  // claim it, once per wait
      std::lock_guard lock(mutex_);
      std::thread::id none;
      if (stopping_ || !driver_.compare_exchange_strong(none, me)) return false;  // another host thread drives
    }
    helped_at_.store(std::chrono::steady_clock::now(), std::memory_order_relaxed);
    std::unique_lock pass(drive_, std::try_to_lock);
    return pass && poll_once();  // else the progress thread is taking a pass
  }
  void stop_helping() override {
    std::thread::id me = std::this_thread::get_id();
    {
      std::lock_guard lock(mutex_);  // the progress thread checks driver_ under it before it waits
      if (!driver_.compare_exchange_strong(me, std::thread::id{})) return;
    }
    cv_.notify_all();
  }

 private:
  enum class Kind : std::uint8_t { signal, copy, fail, report, probe, done, bye };
  static constexpr int tag_ctrl = 0x7e01, tag_data = 0x7e02;
  static constexpr std::int64_t max_message = std::int64_t{1} << 30;  // MPI counts are ints
  static constexpr std::int64_t combine_segment = std::int64_t{256} << 10;
  // How long a driving host thread may stay away before the progress thread
  // takes a pass itself.
  static constexpr std::chrono::microseconds stand_aside{2000};

  // Bytes per data message of a copy. A combining copy into a dense
  // destination travels in cache-sized segments that the receiver combines
  // one by one from a reused buffer: the payload is neither staged whole nor
  // read back from memory for a second pass.
  static std::int64_t segment(const RemoteCopy& c) {
    return c.reduce != static_cast<std::uint8_t>(CopyReduce::none) && dense(c) ? combine_segment : max_message;
  }

  struct Out {
    int rank = 0;
    std::vector<std::byte> ctrl;
    const std::byte* data = nullptr;
    std::int64_t bytes = 0;
    std::int64_t segment = max_message;  // bytes per data message
    std::shared_ptr<void> keep = nullptr;
    std::function<void()> sent = nullptr;
  };
  struct Posted {
    Out out;
    std::vector<MPI_Request> requests;
  };
  // Arrived before its launch started here.
  struct Early {
    Kind kind = Kind::signal;
    RemoteSignal signal;
    RemoteCopy copy;
    std::shared_ptr<Buffer> data;
    std::string text;
  };
  // The coordinator's view of one launch (rank 0 only).
  struct Round {
    std::vector<std::optional<Report>> latest, answers;
    std::vector<Report> snapshot;
    std::int64_t probe = 0;
    bool probing = false;
  };

  void send(Out o) {
    {
      std::lock_guard lock(mutex_);
      out_.push_back(std::move(o));
    }
    // A driving host thread finds it on its next pass.
    if (driver_.load(std::memory_order_acquire) == std::thread::id{}) cv_.notify_all();
  }

  void post(Out o) {
    Posted p{std::move(o), {}};
    p.requests.emplace_back();
    MPI_Isend(p.out.ctrl.data(), static_cast<int>(p.out.ctrl.size()), MPI_BYTE, p.out.rank, tag_ctrl, comm_,
              &p.requests.back());
    for (std::int64_t at = 0; at < p.out.bytes; at += p.out.segment) {
      p.requests.emplace_back();
      MPI_Isend(p.out.data + at, static_cast<int>(std::min(p.out.segment, p.out.bytes - at)), MPI_BYTE, p.out.rank,
                tag_data, comm_, &p.requests.back());
    }
    posted_.push_back(std::move(p));
  }

  void receive_data(int source, std::byte* into, std::int64_t bytes, std::int64_t segment) {
    for (std::int64_t at = 0; at < bytes; at += segment)
      MPI_Recv(into + at, static_cast<int>(std::min(segment, bytes - at)), MPI_BYTE, source, tag_data, comm_,
               MPI_STATUS_IGNORE);
  }

  std::shared_ptr<Receiver> find(std::int64_t number) {
    std::lock_guard lock(mutex_);
    auto it = launches_.find(number);
    return it == launches_.end() ? nullptr : it->second;
  }
  // The launch, or null after keeping `e` for when it starts.
  std::shared_ptr<Receiver> find_or_keep(std::int64_t number, Early&& e) {
    std::lock_guard lock(mutex_);
    if (auto it = launches_.find(number); it != launches_.end()) return it->second;
    early_[number].push_back(std::move(e));
    return nullptr;
  }

  void handle(int source, const std::vector<std::byte>& msg) {
    wire::Reader rd{msg.data(), msg.data() + msg.size()};
    switch (rd.get<Kind>()) {
      case Kind::signal: {
        const auto s = rd.get<RemoteSignal>();
        if (auto l = find_or_keep(s.launch, Early{Kind::signal, s, {}, {}, {}})) l->remote_signal(s);
        break;
      }
      case Kind::copy: {
        const auto c = rd.get<RemoteCopy>();
        const auto dtype = static_cast<DType>(c.dtype);
        const std::int64_t step = segment(c);
        // A started launch stays registered until this copy is counted.
        if (auto l = find(c.launch)) {
          if (std::byte* dst = l->remote_destination(c)) {
            receive_data(source, dst, c.bytes, step);
            l->remote_landed(c, nullptr);
            break;
          }
          if (step < max_message) {  // combine segment by segment
            if (part_.dtype() != dtype || static_cast<std::int64_t>(part_.bytes()) < step)
              part_ = Buffer(dtype, Shape{step / static_cast<std::int64_t>(size_of(dtype))});
            for (std::int64_t at = 0; at < c.bytes; at += step) {
              const std::int64_t n = std::min(step, c.bytes - at);
              MPI_Recv(part_.data(), static_cast<int>(n), MPI_BYTE, source, tag_data, comm_, MPI_STATUS_IGNORE);
              l->remote_combine(c, at, part_, n);
            }
            l->remote_landed(c, nullptr);
            break;
          }
        }
        auto data = std::make_shared<Buffer>(dtype, Shape{c.bytes / static_cast<std::int64_t>(size_of(dtype))});
        receive_data(source, data->data(), c.bytes, step);
        if (auto l = find_or_keep(c.launch, Early{Kind::copy, {}, c, data, {}})) l->remote_landed(c, data.get());
        break;
      }
      case Kind::fail: {
        const auto number = rd.get<std::int64_t>();
        std::string text = rd.str();
        if (auto l = find_or_keep(number, Early{Kind::fail, {}, {}, {}, text})) l->remote_failed(text);
        break;
      }
      case Kind::report: {
        Report r = wire::get_report(rd);
        if (p_.rank == 0) coordinate(source, r);
        if (r.finished && r.probe == 0) settle(source, std::move(r));
        break;
      }
      case Kind::probe: {
        const auto number = rd.get<std::int64_t>();
        const auto probe = rd.get<std::int64_t>();
        Report r;
        if (auto l = find(number)) {
          r = l->probe_report(probe);
        } else {
          r.launch = number;
          r.probe = probe;  // not started here: not idle
        }
        report(std::move(r));
        break;
      }
      case Kind::done: {
        const auto number = rd.get<std::int64_t>();
        const auto outcome = rd.get<Outcome>();
        std::string text = rd.str();
        Totals totals;
        totals.bytes_copied = rd.get<std::int64_t>();
        totals.copies = rd.get<std::int64_t>();
        totals.forwarded = rd.get<std::int64_t>();
        ended(number);
        if (auto l = find(number)) l->remote_finished(outcome, text, totals);
        break;
      }
      case Kind::bye: ++byes_; break;
    }
  }

  // Rank 0: ends a launch when every rank is idle and no message is in
  // flight. Reports are taken at different times, so balanced counts alone
  // can hide a rank that was woken after reporting; a second wave (the probe)
  // that finds every rank idle with the same counts proves that at the
  // moment the probe was sent, nothing was running and nothing was in flight.
  // A launch whose ranks all finish needs neither: see settle.
  void coordinate(int source, const Report& r) {
    // A probe answer or a finished report of a launch already decided.
    if (r.launch <= ended_ || (r.probe != 0 && !rounds_.contains(r.launch))) return;
    Round& rd = rounds_[r.launch];
    const auto n = static_cast<std::size_t>(p_.ranks);
    const auto at = static_cast<std::size_t>(source);
    if (rd.latest.empty()) rd.latest.resize(n), rd.answers.resize(n);
    if (!rd.latest[at] || rd.latest[at]->seq < r.seq) rd.latest[at] = r;
    if (std::all_of(rd.latest.begin(), rd.latest.end(), [](const auto& l) { return l && l->finished; })) {
      if (balanced(rd.latest)) rounds_.erase(r.launch);  // every rank settles it
      return;
    }
    if (rd.probing) {
      if (r.probe != rd.probe) return;  // a spontaneous report or a stale answer: wait for the answers
      rd.answers[at] = r;
      for (const auto& a : rd.answers)
        if (!a) return;
      rd.probing = false;
      bool quiet = true;
      for (std::size_t i = 0; i < n; ++i) {
        const Report& a = *rd.answers[i];
        quiet = quiet && a.idle && a.sent == rd.snapshot[i].sent && a.received == rd.snapshot[i].received;
      }
      if (quiet) {
        decide(r.launch, rd.answers);
        rounds_.erase(r.launch);
        return;
      }
    }
    if (!std::all_of(rd.latest.begin(), rd.latest.end(), [](const auto& l) { return l && l->idle; }) ||
        !balanced(rd.latest))
      return;
    rd.snapshot.clear();
    for (const auto& l : rd.latest) rd.snapshot.push_back(*l);
    rd.probing = true;
    ++rd.probe;
    for (auto& a : rd.answers) a.reset();
    for (int q = 0; q < p_.ranks; ++q) {
      wire::Writer w;
      w.put(Kind::probe).put(r.launch).put(rd.probe);
      post(Out{q, std::move(w.out)});
    }
  }

  // Every rank: ends a launch when every rank has said that all its devices
  // finished and the counts balance. One wave is exact here: finished
  // devices send nothing, so the sent counts are final, and received counts
  // that add up to them mean every message had landed before its receiver
  // reported. Every rank sees the same final reports, so every rank reaches
  // the same verdict, one message latency after the last rank finished
  // (rank 0's decision would take two).
  void settle(int source, Report r) {
    if (r.launch <= ended_) return;  // ended by rank 0's decision already (it may overtake this report)
    auto& latest = finals_[r.launch];
    const auto at = static_cast<std::size_t>(source);
    latest.resize(static_cast<std::size_t>(p_.ranks));
    if (latest[at] && latest[at]->seq > r.seq) return;
    latest[at] = std::move(r);
    if (!balanced(latest)) return;
    const std::int64_t number = latest[at]->launch;
    const Verdict v = verdict(latest);
    ended(number);
    if (auto l = find(number)) l->remote_finished(v.outcome, v.text, v.totals);
  }

  // Launch `number` has ended here; launches of one runtime end in order.
  void ended(std::int64_t number) {
    ended_ = std::max(ended_, number);
    finals_.erase(finals_.begin(), finals_.upper_bound(number));
  }

  // Every rank has reported, and the messages sent add up to those received.
  static bool balanced(const std::vector<std::optional<Report>>& reports) {
    std::int64_t sent = 0, received = 0;
    for (const auto& r : reports) {
      if (!r) return false;
      sent += r->sent;
      received += r->received;
    }
    return sent == received;
  }

  struct Verdict {
    Outcome outcome = Outcome::ok;
    std::string text;
    Totals totals;
  };
  static Verdict verdict(const std::vector<std::optional<Report>>& reports) {
    Verdict v;
    for (const auto& r : reports) {
      v.totals.bytes_copied += r->bytes_copied;
      v.totals.copies += r->copies;
      v.totals.forwarded += r->forwarded;
      if (v.outcome == Outcome::ok && !r->error.empty()) {
        v.outcome = Outcome::failed;  // the lowest rank's own root cause
        v.text = r->error;
      }
    }
    const auto gather = [&](std::string Report::*field, Outcome o) {
      if (v.outcome != Outcome::ok) return;
      for (const auto& r : reports)
        if (!((*r).*field).empty()) v.text += (v.text.empty() ? "" : "\n") + (*r).*field;
      if (!v.text.empty()) v.outcome = o;
    };
    gather(&Report::parked, Outcome::deadlock);
    gather(&Report::unbalanced, Outcome::unbalanced);
    return v;
  }

  // Rank 0, after a probe: tells every rank how the launch ended.
  void decide(std::int64_t number, const std::vector<std::optional<Report>>& reports) {
    const Verdict v = verdict(reports);
    for (int q = 0; q < p_.ranks; ++q) {
      wire::Writer w;
      w.put(Kind::done)
          .put(number)
          .put(v.outcome)
          .str(v.text)
          .put(v.totals.bytes_copied)
          .put(v.totals.copies)
          .put(v.totals.forwarded);
      post(Out{q, std::move(w.out)});
    }
  }

  // One pass: posts what was queued, handles what arrived, completes sends.
  // Returns whether anything happened. Under drive_.
  bool poll_once() {
    std::deque<Out> batch;
    {
      std::lock_guard lock(mutex_);
      batch.swap(out_);
    }
    for (Out& o : batch) post(std::move(o));
    bool did = !batch.empty();
    for (;;) {
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, tag_ctrl, comm_, &flag, &st);
      if (!flag) break;
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      msg_.resize(static_cast<std::size_t>(count));
      MPI_Recv(msg_.data(), count, MPI_BYTE, st.MPI_SOURCE, tag_ctrl, comm_, MPI_STATUS_IGNORE);
      handle(st.MPI_SOURCE, msg_);
      did = true;
    }
    for (auto it = posted_.begin(); it != posted_.end();) {
      int done = 0;
      MPI_Testall(static_cast<int>(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE);
      if (!done) {
        ++it;
        continue;
      }
      if (it->out.sent) it->out.sent();
      it = posted_.erase(it);
      did = true;
    }
    return did;
  }

  void progress() {
    bool bye_sent = false;
    auto last = std::chrono::steady_clock::now();  // something happened
    for (;;) {
      {
        // A host thread drives (help): stand aside until it stops, unless it
        // has not come back for a while (it is running a long pool task).
        std::unique_lock lock(mutex_);
        while (driver_.load(std::memory_order_acquire) != std::thread::id{} && !stopping_) {
          cv_.wait_for(lock, stand_aside);
          if (std::chrono::steady_clock::now() - helped_at_.load(std::memory_order_relaxed) > stand_aside) break;
        }
      }
      bool did = false, stopping = false, outstanding = false, all_byes = false;
      {
        std::lock_guard pass(drive_);
        {
          std::lock_guard lock(mutex_);
          stopping = stopping_;
        }
        if (stopping && !bye_sent) {
          // Last message to every rank: after a rank's bye nothing more comes from it.
          for (int q = 0; q < p_.ranks; ++q) {
            wire::Writer w;
            w.put(Kind::bye);
            send(Out{q, std::move(w.out)});
          }
          bye_sent = true;
        }
        did = poll_once();
        // Read here: once this pass ends, a host thread may drive.
        outstanding = !posted_.empty() || !rounds_.empty() || !finals_.empty();
        all_byes = byes_ == p_.ranks && posted_.empty();
      }
      std::unique_lock lock(mutex_);
      if (bye_sent && all_byes && out_.empty()) return;  // no host drives once stopping_
      const auto now = std::chrono::steady_clock::now();
      if (did) {
        last = now;
        continue;
      }
      // Poll (yielding) while a launch is on or messages are outstanding, up
      // to 1 ms since something happened (by time: on a loaded machine one
      // yield can give away a whole time slice); then sleep in 50 us slices,
      // or until there is something to send (1 ms when nothing is on).
      const bool busy = !launches_.empty() || outstanding || stopping_;
      if (busy && now - last < std::chrono::milliseconds(1)) {
        lock.unlock();
        std::this_thread::yield();
      } else {
        cv_.wait_for(lock, busy ? std::chrono::microseconds(50) : std::chrono::milliseconds(1),
                     [&] { return !out_.empty() || stopping_ != stopping || (!busy && !launches_.empty()); });
      }
    }
  }

  Placement p_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owns_mpi_ = false;
  std::mutex mutex_;  // guards out_, launches_, early_, stopping_
  std::condition_variable cv_;
  std::mutex drive_;                     // held for a pass of poll_once, by whichever thread drives
  std::atomic<std::thread::id> driver_;  // a host thread driving progress (help), or none; changed under mutex_
  std::atomic<std::chrono::steady_clock::time_point> helped_at_{};  // its last call
  std::deque<Out> out_;
  std::map<std::int64_t, std::shared_ptr<Receiver>> launches_;
  std::map<std::int64_t, std::deque<Early>> early_;
  bool stopping_ = false;
  // The driving thread's (under drive_), down to byes_.
  std::vector<std::byte> msg_;
  std::list<Posted> posted_;
  Buffer part_;                                                        // a segment of a combining copy
  std::map<std::int64_t, Round> rounds_;                               // rank 0
  std::map<std::int64_t, std::vector<std::optional<Report>>> finals_;  // finished reports per launch
  std::int64_t ended_ = 0;                                             // every launch up to this one has ended here
  int byes_ = 0;
  std::thread thread_;
};

/// The MPI transport when this process was started by mpirun (or MPI is
/// already initialized) with more than one rank; else null (in-process).
/// REFX_TRANSPORT=inprocess keeps a process in-process under mpirun.
inline std::shared_ptr<Remote> mpi_from_environment() {
  if (const char* t = std::getenv("REFX_TRANSPORT"); t && std::string_view(t) == "inprocess") return nullptr;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    const char* size = nullptr;
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
      if ((size = std::getenv(v)) != nullptr) break;
    if (size == nullptr || std::atoi(size) <= 1) return nullptr;
  } else {
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n <= 1) return nullptr;
  }
  return std::make_shared<Mpi>();
}

/// Registers MPI as Runtime::global()'s transport in every program that
/// includes this header (once: an inline variable).
inline const bool mpi_registered = [] {
  default_remote().store(&mpi_from_environment);
  return true;
}();

}  // namespace refx::transport
