// The timeline (runtime/timeline.hpp, docs/runtime.md "Timeline"): Chrome
// Trace Event JSON with a lane per device (op slices inside a launch slice,
// named and with source lines), a lane per thread that copied (copies and
// chunks with byte counts), flow arrows from each copy's start to the wait
// that consumed it, and semaphore counters. Recording through the Runtime API
// and, in a child process, through REFX_TRACE_FILE; a copy that overlaps
// independent compute shows as overlapping slices.

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/json.hpp"
#include "support/runtime_testing.hpp"

namespace {

using namespace refx;
using namespace refx::testing;
namespace js = refx::testing::json;

// ---------------------------------------------------------------- reading a trace

// Timestamps in nanoseconds: the file has microseconds with nanosecond digits.
struct Event {
  std::string ph, name, cat;
  std::int64_t ts = 0, dur = 0;
  std::int64_t pid = 0, tid = 0;
  const js::Value* json = nullptr;
  std::int64_t end() const { return ts + dur; }
  const js::Value& args() const { return json->at("args"); }
  std::string arg(std::string_view key) const { return json->has("args") ? args().str(key) : std::string(); }
};

struct Trace {
  js::Value doc;
  std::vector<Event> events;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> lanes;  // (pid, tid) -> thread name

  std::vector<const Event*> all(std::string_view ph, std::string_view cat = {}) const {
    std::vector<const Event*> out;
    for (const Event& e : events)
      if (e.ph == ph && (cat.empty() || e.cat == cat)) out.push_back(&e);
    return out;
  }
  /// The op slice of lane (pid, tid) strictly around `ts`, or nullptr.
  const Event* op_at(std::int64_t pid, std::int64_t tid, std::int64_t ts) const {
    for (const Event& e : events)
      if (e.ph == "X" && e.cat == "op" && e.pid == pid && e.tid == tid && e.ts < ts && ts < e.end()) return &e;
    return nullptr;
  }
};

Trace load(const std::string& text) {
  Trace t;
  t.doc = js::parse(text);
  const js::Value& list = t.doc.at("traceEvents");
  EXPECT_EQ(list.kind, js::Value::Kind::array);
  for (const js::Value& v : list.array) {
    Event e;
    e.ph = v.str("ph");
    e.name = v.str("name");
    e.cat = v.str("cat");
    e.ts = std::llround(v.num("ts") * 1000);
    e.dur = std::llround(v.num("dur") * 1000);
    e.pid = static_cast<std::int64_t>(v.num("pid", -1));
    e.tid = static_cast<std::int64_t>(v.num("tid", -1));
    e.json = &v;
    if (e.ph == "M" && e.name == "thread_name") t.lanes[{e.pid, e.tid}] = e.arg("name");
    t.events.push_back(std::move(e));
  }
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---------------------------------------------------------------- kernels

constexpr std::int64_t kBlock = 256;
int g_start_line = 0;
int g_wait_line = 0;

/// Each device sends its block to its right neighbour after a barrier handshake.
Executable ring_permute(int devices, Runtime& rt) {
  return kernel([](HbmRef<const float, kBlock> x, HbmRef<float, kBlock> y) {
           x.name("x");
           y.name("y");
           auto me = axis_index("x");
           auto n = axis_size("x");
           auto barrier = get_barrier_semaphore();
           semaphore_signal(barrier, 1, (me + n - 1) % n);
           semaphore_signal(barrier, 1, (me + 1) % n);
           semaphore_wait(barrier, 2);
           run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
             send.name("send");
             recv.name("recv");
             auto c = make_async_remote_copy(x, y, send, recv, (me + 1) % n);
             g_start_line = __LINE__; c.start();
             g_wait_line = __LINE__; c.wait();
           });
         })
      .name("ring_permute")
      .collective_id(0)
      .compile(Mesh{{"x", devices}}, {}, rt);
}

Array tagged(int devices) { return Array::generate<float>(devices, Shape{kBlock}, tag); }

RuntimeOptions two_workers() {
  RuntimeOptions o;
  o.workers = 2;
  return o;
}

/// Calls `attempt` until it sets `done`, fails fatally, or 10 s have passed;
/// how many times it ran. For tests that need two threads running at once:
/// whether the second gets a core at that moment is up to the OS, and on a
/// loaded machine (CI runs two tests at once on two cores) it often does not.
template <class F>
int attempt_until(const bool& done, F&& attempt) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int attempts = 0;
  while (!done && !::testing::Test::HasFatalFailure() && std::chrono::steady_clock::now() < deadline) {
    ++attempts;
    attempt();
  }
  return attempts;
}

// ---------------------------------------------------------------- structure

TEST(Timeline, LanesSlicesFlowsAndCounters) {
  Watchdog dog(kTestLimit, "timeline of a ring permute");
  constexpr int n = 4;
  Runtime rt(two_workers());
  const Executable exe = ring_permute(n, rt);
  rt.start_timeline();
  EXPECT_TRUE(rt.recording_timeline());
  auto out = exe(tagged(n));
  EXPECT_TRUE(all_shards_match<float>(out[0], [](int d, std::int64_t i) { return tag(mod(d - 1, n), i); }));
  const Timeline timeline = rt.stop_timeline();
  EXPECT_FALSE(rt.recording_timeline());
  ASSERT_EQ(timeline.launches(), 1u);
  const Trace t = load(timeline.json());

  // Lanes: one per device, one per thread that copied; the runtime is a process.
  const std::vector<const Event*> kernels = t.all("X", "kernel");
  ASSERT_EQ(kernels.size(), static_cast<std::size_t>(n));
  const std::int64_t pid = kernels[0]->pid;
  EXPECT_FALSE(t.all("M").empty());
  bool named_process = false;
  for (const Event* m : t.all("M"))
    if (m->name == "process_name" && m->pid == pid) named_process = m->arg("name").starts_with("refx runtime");
  EXPECT_TRUE(named_process);
  for (int d = 0; d < n; ++d) EXPECT_EQ(t.lanes.at({pid, d}), fmt::format("device {}", d));
  std::set<std::int64_t> copy_lanes;
  for (const auto& [lane, name] : t.lanes)
    if (name.starts_with("copy engine: ")) copy_lanes.insert(lane.second);
  EXPECT_FALSE(copy_lanes.empty());

  // Launch slices, one per device, enclose that device's op slices, which
  // follow each other without overlapping (viewers need strict nesting).
  for (const Event* k : kernels) {
    EXPECT_EQ(k->name, "ring_permute");
    EXPECT_EQ(k->args().num("launch"), 1);
    EXPECT_EQ(k->arg("mesh"), "{x=4}");
    std::vector<const Event*> ops;
    for (const Event* e : t.all("X", "op"))
      if (e->pid == pid && e->tid == k->tid) ops.push_back(e);
    ASSERT_FALSE(ops.empty());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      EXPECT_GT(ops[i]->ts, k->ts);
      EXPECT_LT(ops[i]->end(), k->end());
      EXPECT_GT(ops[i]->dur, 0);
      if (i > 0) {
        EXPECT_GE(ops[i]->ts, ops[i - 1]->end());
      }
      EXPECT_FALSE(ops[i]->arg("op").empty());
      EXPECT_TRUE(ops[i]->name.starts_with(ops[i]->arg("op")));
      EXPECT_TRUE(ops[i]->arg("source").starts_with("runtime/timeline_test.cpp:")) << ops[i]->arg("source");
    }
  }

  // The copy's start and wait: named by primitive and the user's names, with the line.
  const std::string start_line = here(__FILE__, g_start_line), wait_line = here(__FILE__, g_wait_line);
  int starts = 0, waits = 0;
  for (const Event* e : t.all("X", "op")) {
    if (e->arg("op") == "dma_start") {
      ++starts;
      EXPECT_EQ(e->arg("source"), start_line);
      EXPECT_EQ(e->name, "dma_start x y recv send");  // its views: source, destination, semaphores
    } else if (e->arg("op") == "dma_wait") {
      ++waits;
      EXPECT_EQ(e->arg("source"), wait_line);
    }
  }
  EXPECT_EQ(starts, n);
  EXPECT_EQ(waits, 2 * n);  // wait() on a remote copy: its send and its receive

  // Copies: on the copy lanes, with their byte counts and ends.
  const std::vector<const Event*> copies = t.all("X", "copy");
  ASSERT_EQ(copies.size(), static_cast<std::size_t>(n));
  for (const Event* c : copies) {
    EXPECT_TRUE(copy_lanes.contains(c->tid)) << c->tid;
    const auto from = static_cast<int>(c->args().num("from_device")), to = static_cast<int>(c->args().num("to_device"));
    EXPECT_EQ(to, mod(from + 1, n));
    EXPECT_EQ(c->name, fmt::format("copy {}->{}", from, to));
    EXPECT_EQ(c->args().num("bytes"), kBlock * 4);
    EXPECT_EQ(c->args().num("copy_bytes"), kBlock * 4);
    EXPECT_EQ(c->arg("source"), start_line);
  }

  // Flows: every start has one finish with the same id; a start lies in a
  // dma_start slice, its finish (bound to the enclosing slice) in a later
  // dma_wait slice. Each remote copy is consumed twice: receive and send.
  std::map<double, const Event*> flow_starts, flow_ends;
  for (const Event* s : t.all("s")) EXPECT_TRUE(flow_starts.emplace(s->json->num("id"), s).second);
  for (const Event* f : t.all("f")) {
    EXPECT_TRUE(flow_ends.emplace(f->json->num("id"), f).second);
    EXPECT_EQ(f->json->str("bp"), "e");
  }
  EXPECT_EQ(flow_starts.size(), static_cast<std::size_t>(2 * n));
  ASSERT_EQ(flow_ends.size(), flow_starts.size());
  for (const auto& [id, s] : flow_starts) {
    ASSERT_TRUE(flow_ends.contains(id)) << "flow " << id << " has no finish";
    const Event* f = flow_ends.at(id);
    EXPECT_EQ(s->cat, f->cat);
    EXPECT_EQ(s->name, f->name);
    EXPECT_LT(s->ts, f->ts);
    const Event* from = t.op_at(s->pid, s->tid, s->ts);
    const Event* to = t.op_at(f->pid, f->tid, f->ts);
    ASSERT_NE(from, nullptr);
    ASSERT_NE(to, nullptr);
    EXPECT_EQ(from->arg("op"), "dma_start");
    EXPECT_EQ(to->arg("op"), "dma_wait");
  }

  // Counters: the semaphores' values, each back to 0 when the kernel ends.
  std::map<std::string, std::vector<const Event*>> counters;
  for (const Event* c : t.all("C")) counters[c->name].push_back(c);
  for (int d = 0; d < n; ++d) {
    EXPECT_TRUE(counters.contains(fmt::format("device {} dma semaphore 'recv'", d)));
    EXPECT_TRUE(counters.contains(fmt::format("device {} dma semaphore 'send'", d)));
    EXPECT_TRUE(counters.contains(fmt::format("device {} barrier semaphore (collective id 0)", d)));
  }
  for (auto& [name, samples] : counters) {
    std::stable_sort(samples.begin(), samples.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
    for (const Event* c : samples) EXPECT_GE(c->args().num("value", -1), 0) << name;
    EXPECT_EQ(samples.back()->args().num("value", -1), 0) << name;
  }
  const js::Value& other = t.doc.at("otherData");
  EXPECT_EQ(other.num("launches"), 1);
  EXPECT_EQ(other.num("dropped_launches"), 0);
}

TEST(Timeline, OnlyWhileRecording) {
  Watchdog dog(kTestLimit, "timeline on and off");
  Runtime rt(two_workers());
  const Executable exe = ring_permute(2, rt);
  exe(tagged(2))[0].block_until_ready();
  EXPECT_FALSE(rt.recording_timeline());
  const Timeline none = rt.stop_timeline();  // nothing was on
  EXPECT_EQ(none.launches(), 0u);
  const Trace empty = load(none.json());
  EXPECT_TRUE(empty.all("X").empty());

  rt.start_timeline();
  exe(tagged(2));
  exe(tagged(2));
  EXPECT_EQ(rt.stop_timeline().launches(), 2u);
  exe(tagged(2))[0].block_until_ready();
  EXPECT_EQ(rt.stop_timeline().launches(), 0u);

  // Launch numbers count the runtime's launches; both appear in one document.
  rt.start_timeline();
  exe(tagged(2));
  exe(tagged(2));
  const Trace t = load(rt.stop_timeline().json());
  std::set<double> numbers;
  for (const Event* k : t.all("X", "kernel")) numbers.insert(k->args().num("launch"));
  EXPECT_EQ(numbers, (std::set<double>{5, 6}));

  RuntimeOptions o = two_workers();
  o.record_timeline = true;
  Runtime recording(o);
  EXPECT_TRUE(recording.recording_timeline());
  ring_permute(2, recording)(tagged(2));
  EXPECT_EQ(recording.stop_timeline().launches(), 1u);
}

TEST(Timeline, WriteSavesTheDocumentAndNamesAnUnwritablePath) {
  Watchdog dog(kTestLimit, "timeline write");
  const std::string path = ::testing::TempDir() + "refx_timeline_test.json";
  // [snippet:timeline-api]
  Runtime rt(RuntimeOptions{.workers = 2});
  const Executable exe = ring_permute(2, rt);
  rt.start_timeline();                           // records the launches dispatched from now on
  exe(tagged(2));
  const Timeline timeline = rt.stop_timeline();  // waits for them and stops recording
  timeline.write(path);                          // Chrome Trace Event JSON (or: timeline.json())
  // [/snippet]
  EXPECT_EQ(read_file(path), timeline.json());
  EXPECT_EQ(load(read_file(path)).all("X", "kernel").size(), 2u);
  std::remove(path.c_str());

  const std::string message = error_of([&] { timeline.write("/nonexistent-refx-dir/t.json"); });
  EXPECT_EQ(message, "refx: cannot write the timeline to '/nonexistent-refx-dir/t.json': No such file or directory");
}

TEST(Timeline, FailedLaunchKeepsItsErrorAndClosesParkedWaits) {
  Watchdog dog(kTestLimit, "timeline of a deadlock");
  Runtime rt(two_workers());
  const Executable stuck = kernel([](HbmRef<const float, kBlock> x, HbmRef<float, kBlock> y) {
                             sync_copy(x, y);
                             run_scoped([](RegularSemaphore never) {
                               never.name("never");
                               semaphore_wait(never, 1);
                             });
                           })
                               .name("stuck")
                               .passes(unverified())
                               .compile(Mesh{{"x", 2}}, {}, rt);
  rt.start_timeline();
  auto out = stuck(tagged(2));
  EXPECT_NE(runtime_error_of([&] { out[0].block_until_ready(); }).find("deadlock"), std::string::npos);
  const Trace t = load(rt.stop_timeline().json());
  const std::vector<const Event*> kernels = t.all("X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  for (const Event* k : kernels) EXPECT_TRUE(k->arg("error").starts_with("refx: deadlock in kernel 'stuck'"));
  int parked = 0;
  for (const Event* e : t.all("X", "op")) {
    if (!e->args().has("parked")) continue;
    ++parked;
    EXPECT_EQ(e->arg("op"), "semaphore_wait");
    EXPECT_EQ(e->name, "semaphore_wait never");
    EXPECT_GT(e->dur, 0);
  }
  EXPECT_EQ(parked, 2);
}

// ---------------------------------------------------------------- overlap

constexpr std::int64_t kCopyElems = (std::int64_t{8} << 20) / 4;  // 8 MiB
constexpr std::int64_t kWorkElems = (std::int64_t{2} << 20) / 4;  // exp over 2 MiB
int g_compute_line = 0;

TEST(Timeline, CopyOverlapsIndependentCompute) {
  Watchdog dog(kTestLimit, "timeline overlap");
  RuntimeOptions o = two_workers();
  o.copy_chunk_bytes = std::size_t{256} << 10;  // 32 chunks: both workers take some
  Runtime rt(o);
  // Written start, wait, compute: the scheduler moves the independent compute
  // between the start and the wait (docs/graph.md), so it runs while the
  // other worker copies.
  const Executable exe =
      kernel([](HbmRef<const float, kCopyElems> x, VmemRef<const float, kWorkElems> a, HbmRef<float, kCopyElems> y,
                VmemRef<float, kWorkElems> b) {
        run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
          auto c = make_async_remote_copy(x, y, send, recv, 0);
          c.start();
          c.wait();
          g_compute_line = __LINE__; b.store(exp(a.load()) * 0.5f + 1.0f);
        });
      })
          .name("overlap")
          .compile(Mesh{{"x", 1}}, {}, rt);
  auto x = Array::generate<float>(1, Shape{kCopyElems}, [](int, std::int64_t i) { return float(i % 100); });
  auto a = Array::generate<float>(1, Shape{kWorkElems}, [](int, std::int64_t i) { return float(i % 10) * 0.1f; });
  auto y = Array::empty(1, DType::f32, Shape{kCopyElems}), b = Array::empty(1, DType::f32, Shape{kWorkElems});
  exe.call_in_place({x, a, y, b});  // warm: page faults of fresh outputs are not the point
  y.block_until_ready();

  // Every attempt checks the schedule and the chunks.
  const std::string compute_line = here(__FILE__, g_compute_line);
  bool overlapped = false;
  const int attempts = attempt_until(overlapped, [&] {
    rt.start_timeline();
    exe.call_in_place({x, a, y, b});
    const Trace t = load(rt.stop_timeline().json());
    const Event *compute = nullptr, *wait = nullptr;
    for (const Event* e : t.all("X", "op")) {
      if (e->arg("source") == compute_line) compute = e;
      if (e->arg("op") == "dma_wait" && wait == nullptr) wait = e;
    }
    ASSERT_NE(compute, nullptr) << "no slice at " << compute_line;
    ASSERT_NE(wait, nullptr);
    ASSERT_LT(compute->ts, wait->ts) << "the compute was not scheduled before the wait";
    const std::vector<const Event*> chunks = t.all("X", "copy");
    ASSERT_EQ(chunks.size(), 32u);
    double bytes = 0;
    for (const Event* c : chunks) {
      bytes += c->args().num("bytes");
      if (c->ts < compute->end() && compute->ts < c->end()) overlapped = true;
    }
    ASSERT_EQ(bytes, static_cast<double>(kCopyElems * 4));
  });
  EXPECT_TRUE(overlapped) << "no copy chunk ran while the compute did, in " << attempts << " attempts over 10 s";
}

// Kernel::single_worker: the devices of such a program run one after another
// even where the runtime would give them a runner per worker. Four devices on
// two workers, each computing over 2 MiB (past single_worker_bytes): the
// compute slices of one launch never overlap; without the mark, two do.
int g_device_compute_line = 0;

Executable four_devices_computing(bool single_worker, Runtime& rt) {
  return kernel([](VmemRef<const float, kWorkElems> a, VmemRef<float, kWorkElems> b) {
           g_device_compute_line = __LINE__; b.store(exp(a.load()) * 0.5f + 1.0f);
         })
      .name("compute")
      .single_worker(single_worker)
      .compile(Mesh{{"x", 4}}, {}, rt);
}

/// Whether two devices' computes (from the first to the last op slice of the
/// compute's line, in a device's lane) overlap in time.
bool computes_overlap(const Trace& t) {
  const std::string line = here(__FILE__, g_device_compute_line);
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> spans;  // lane -> [begin, end)
  for (const Event* e : t.all("X", "op")) {
    if (e->arg("source") != line) continue;
    auto [at, fresh] = spans.try_emplace(e->tid, e->ts, e->end());
    if (!fresh) at->second = {std::min(at->second.first, e->ts), std::max(at->second.second, e->end())};
  }
  EXPECT_EQ(spans.size(), 4u) << "device lanes with ops at " << line;
  for (auto i = spans.begin(); i != spans.end(); ++i)
    for (auto j = std::next(i); j != spans.end(); ++j)
      if (i->second.first < j->second.second && j->second.first < i->second.second) return true;
  return false;
}

TEST(Timeline, SingleWorkerProgramRunsOneDeviceAtATime) {
  Watchdog dog(kTestLimit, "single worker");
  Runtime rt(two_workers());
  auto a = Array::generate<float>(4, Shape{kWorkElems}, [](int d, std::int64_t i) { return float((i + d) % 10) * 0.1f; });
  auto b = Array::empty(4, DType::f32, Shape{kWorkElems});
  const Executable one = four_devices_computing(true, rt), shared = four_devices_computing(false, rt);
  EXPECT_TRUE(one.program().single_worker);
  EXPECT_FALSE(shared.program().single_worker);
  for (int call = 0; call < 3; ++call) {
    rt.start_timeline();
    one.call_in_place({a, b});
    EXPECT_FALSE(computes_overlap(load(rt.stop_timeline().json()))) << "call " << call;
  }
  EXPECT_FLOAT_EQ(b.to_host<float>(3)[1], std::exp(0.4f) * 0.5f + 1.0f);
  bool overlapped = false;
  const int attempts = attempt_until(overlapped, [&] {
    rt.start_timeline();
    shared.call_in_place({a, b});
    overlapped = computes_overlap(load(rt.stop_timeline().json()));
  });
  EXPECT_TRUE(overlapped) << "no two devices computed at once without single_worker, in " << attempts
                          << " attempts over 10 s";
}

// ---------------------------------------------------------------- REFX_TRACE_FILE

// Run as a child of the tests below (REFX_TIMELINE_TEST_CHILD set), the binary
// does only this, from main() before GoogleTest starts, and exits:
// REFX_TRACE_FILE is then written by the static destructors. Two kernels, on
// two runtimes. (Not from a static initializer: with refx::compiled the
// built-in primitives are initialised in librefx's own translation unit,
// whose turn may come after this one's.)
void child_process() {
  const Executable a = ring_permute(2, Runtime::global());
  a(tagged(2));
  a(tagged(2))[0].block_until_ready();
  Runtime other(two_workers());
  const Executable b = kernel([](HbmRef<const float, kBlock> x, HbmRef<float, kBlock> y) { sync_copy(x, y); })
                           .name("local_copy")
                           .compile(Mesh{{"x", 3}}, {}, other);
  b(tagged(3))[0].block_until_ready();
}


/// Runs this binary as the child with REFX_TRACE_FILE=`trace_file`, within a
/// time limit; returns its exit status and what it wrote to stderr.
std::pair<int, std::string> run_child(const std::string& trace_file) {
  char self[4096] = {};
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  EXPECT_GT(len, 0);
  // One file per test: ctest runs the tests of this binary in parallel.
  const std::string err = fmt::format("{}refx_timeline_child_{}.err", ::testing::TempDir(),
                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  const std::string command = fmt::format("REFX_TIMELINE_TEST_CHILD=1 REFX_TRACE_FILE='{}' timeout 60 '{}' 2>'{}' >/dev/null",
                                          trace_file, self, err);
  const int status = std::system(command.c_str());
  std::string text = read_file(err);
  std::remove(err.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

TEST(Timeline, EnvironmentVariableWritesOneFileForTheWholeProcess) {
  Watchdog dog(kTestLimit, "REFX_TRACE_FILE child");
  const std::string path = ::testing::TempDir() + "refx_timeline_env.json";
  std::remove(path.c_str());
  const auto [status, err] = run_child(path);
  ASSERT_EQ(status, 0) << err;
  EXPECT_EQ(err, "");
  const Trace t = load(read_file(path));
  std::remove(path.c_str());
  EXPECT_EQ(t.doc.at("otherData").num("launches"), 3);
  std::map<std::string, std::set<std::int64_t>> pids_of;  // kernel -> runtimes
  std::map<std::string, int> slices;
  for (const Event* k : t.all("X", "kernel")) {
    pids_of[k->name].insert(k->pid);
    ++slices[k->name];
  }
  EXPECT_EQ(slices["ring_permute"], 2 * 2);
  EXPECT_EQ(slices["local_copy"], 3);
  ASSERT_EQ(pids_of["ring_permute"].size(), 1u);
  ASSERT_EQ(pids_of["local_copy"].size(), 1u);
  EXPECT_NE(*pids_of["ring_permute"].begin(), *pids_of["local_copy"].begin());  // a process per runtime
  int processes = 0;
  for (const Event* m : t.all("M")) processes += m->name == "process_name";
  EXPECT_EQ(processes, 2);
}

TEST(Timeline, UnwritableEnvironmentPathIsReportedAndTheProgramRuns) {
  Watchdog dog(kTestLimit, "REFX_TRACE_FILE unwritable");
  const auto [status, err] = run_child("/nonexistent-refx-dir/t.json");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(err,
            "refx: REFX_TRACE_FILE: cannot write '/nonexistent-refx-dir/t.json': No such file or directory; no "
            "timeline is recorded\n");
}

}  // namespace

// This test's own main (it replaces gtest_main's): the child mode first.
int main(int argc, char** argv) {
  if (std::getenv("REFX_TIMELINE_TEST_CHILD") != nullptr) {
    child_process();
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
