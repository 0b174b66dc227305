// refx over the MPI transport, run by ctest under mpirun (label mpi):
//
//   mpi_test collectives D   every collective on a mesh of ranks x D devices
//                            equals the host reference on each rank's devices
//                            (f32 throughout; bf16, f16 and fp8 all-reduces
//                            and all-gathers too, with their rounding per hop)
//   mpi_test backends D      the bodies of tests/support/backend_cases.hpp
//                            (copies, semaphores, collectives; the same as
//                            tests/backends runs in-process) on the mesh
//   mpi_test errors D        a deadlock across ranks, a failure on one rank
//                            and a semaphore left up on another rank are
//                            reported on every rank with the same message,
//                            and the runtime stays usable afterwards
//
// Every rank checks the devices it hosts; a check that fails prints and the
// rank exits non-zero (mpirun then fails the run). A watchdog ends a rank
// that is still running after 90 s, so nothing hangs.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/backend_cases.hpp"  // tests/ is on the include path

namespace {

using namespace refx;
namespace coll = refx::collectives;

int g_failures = 0;
int g_rank = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "[rank %d] FAILED: %s\n", g_rank, what.c_str());
  }
}

float input(int d, std::int64_t i) { return static_cast<float>((d + 1) * (i % 7) - 3 * (i % 2)); }  // exact sums

/// Compares every hosted device's shard with want(d, i).
template <class F>
void expect_shards(const std::string& what, const Array& a, F&& want) {
  const std::int64_t n = a.shape().num_elements();
  for (int d = 0; d < a.num_devices(); ++d) {
    if (!a.is_local(d)) continue;
    const std::vector<float> got = a.to_host<float>(d);
    for (std::int64_t i = 0; i < n; ++i)
      if (got[static_cast<std::size_t>(i)] != want(d, i)) {
        check(false, fmt::format("{}: device {} element {} is {}, wants {}", what, d, i,
                                 got[static_cast<std::size_t>(i)], want(d, i)));
        return;
      }
  }
}

void all_collectives(int ranks, int per_rank) {
  const int n = ranks * per_rank;
  const Mesh mesh{{"x", n}};
  const std::string tag = fmt::format("{} ranks x {} devices", ranks, per_rank);
  // Sizes across the all-reduce's algorithms: one-shot, direct, ring.
  for (const std::int64_t len : {std::int64_t{1000}, std::int64_t{70000}, std::int64_t{(1 << 19) + 3 * n}}) {
    const auto sum = [&](int, std::int64_t i) {
      float s = 0;
      for (int e = 0; e < n; ++e) s += input(e, i);
      return s;
    };
    for (const auto dir : {coll::Direction::unidirectional, coll::Direction::bidirectional}) {
      const std::string what = fmt::format("all_reduce {} {} elements {}", tag, len,
                                           dir == coll::Direction::bidirectional ? "bidirectional" : "");
      auto x = Array::generate<float>(n, Shape{len}, input);
      auto out = coll::all_reduce_program<float>(mesh, len, {.direction = dir})(x)[0];
      expect_shards(what, out, sum);
      coll::all_reduce_program<float>(mesh, len, {.direction = dir, .in_place = true}).call_in_place({x});
      expect_shards(what + " in place", x, sum);
    }
    {
      auto max = coll::all_reduce_program<float>(mesh, len, {.op = ReduceOp::max})(
          Array::generate<float>(n, Shape{len}, input))[0];
      expect_shards(fmt::format("all_reduce max {} {}", tag, len), max, [&](int, std::int64_t i) {
        float m = input(0, i);
        for (int e = 1; e < n; ++e) m = std::max(m, input(e, i));
        return m;
      });
    }
    {
      const std::int64_t chunk = (len + n - 1) / n;
      auto rs = coll::reduce_scatter_program<float>(mesh, len)(Array::generate<float>(n, Shape{len}, input))[0];
      for (int d = 0; d < n; ++d) {
        if (!rs.is_local(d)) continue;
        const std::vector<float> got = rs.to_host<float>(d);
        for (std::int64_t i = 0; i < chunk && d * chunk + i < len; ++i)
          if (got[static_cast<std::size_t>(i)] != sum(d, d * chunk + i)) {
            check(false, fmt::format("reduce_scatter {} {}: device {} element {}", tag, len, d, i));
            break;
          }
      }
    }
  }
  for (const std::int64_t block : {std::int64_t{16}, std::int64_t{1 << 16}}) {
    auto g = coll::all_gather_program<float>(mesh, block)(Array::generate<float>(n, Shape{block}, input))[0];
    expect_shards(fmt::format("all_gather {} block {}", tag, block), g,
                  [&](int, std::int64_t i) { return input(static_cast<int>(i / block), i % block); });
    const auto a2a_in = [&](int d, std::int64_t i) { return static_cast<float>(d * 100000 + i); };
    auto t = coll::all_to_all_program<float>(mesh, block)(Array::generate<float>(n, Shape{n, block}, a2a_in))[0];
    // Device d's row j is device j's row d.
    expect_shards(fmt::format("all_to_all {} block {}", tag, block), t, [&](int d, std::int64_t i) {
      return a2a_in(static_cast<int>(i / block), d * block + i % block);
    });
  }
  {  // In place, and many calls back to back: the collectives at kernel entry
     // skip their entry barrier, so a fast rank's copies of call k+1 reach a
     // rank still in call k (kept until k+1 starts there).
    const std::int64_t block = (1 << 17) + 5;
    const auto gathered = [&](int, std::int64_t i) { return input(static_cast<int>(i / block), i % block); };
    auto g = Array::generate<float>(n, Shape{n, block}, [&](int d, std::int64_t i) {
      return i / block == d ? gathered(d, i) : -1.0f;
    });
    auto m = Array::generate<float>(n, Shape{block}, input);
    const auto gather = coll::all_gather_program<float>(mesh, block, {.in_place = true});
    const auto reduce = coll::all_reduce_program<float>(mesh, block, {.op = ReduceOp::max, .in_place = true});
    for (int k = 0; k < 30; ++k) {
      gather.call_in_place({g});
      reduce.call_in_place({m});
    }
    expect_shards(fmt::format("all_gather in place x30 {}", tag), g, gathered);
    expect_shards(fmt::format("all_reduce max in place x30 {}", tag), m, [&](int, std::int64_t i) {
      float v = input(0, i);
      for (int e = 1; e < n; ++e) v = std::max(v, input(e, i));
      return v;
    });
  }
  {  // Two host threads wait at once: one drives the transport (Remote::help),
     // the other polls; launches end wherever their last message is handled.
    const std::int64_t len = 70000;
    const auto prog = coll::all_reduce_program<float>(mesh, len);
    std::vector<Array> outs;
    for (int k = 0; k < 8; ++k) outs.push_back(prog(Array::generate<float>(n, Shape{len}, input))[0]);
    std::thread other([&] {
      for (int k = 7; k >= 0; k -= 2) outs[static_cast<std::size_t>(k)].block_until_ready();
    });
    for (int k = 0; k < 8; k += 2) outs[static_cast<std::size_t>(k)].block_until_ready();
    other.join();
    for (int k = 0; k < 8; ++k)
      expect_shards(fmt::format("all_reduce {} waited on by two host threads, call {}", tag, k),
                    outs[static_cast<std::size_t>(k)], [&](int, std::int64_t i) {
                      float s = 0;
                      for (int e = 0; e < n; ++e) s += input(e, i);
                      return s;
                    });
  }
  // A remote device's shard is not here: to_host says which rank has it.
  auto x = Array::generate<float>(n, Shape{4}, input);
  for (int d = 0; d < n; ++d) {
    if (x.is_local(d)) continue;
    try {
      (void)x.to_host<float>(d);
      check(false, "to_host of a remote device did not throw");
    } catch (const Error& e) {
      check(std::string(e.what()).find(fmt::format("lives on MPI rank {}", d / per_rank)) != std::string::npos,
            fmt::format("to_host({}) error names the rank: {}", d, e.what()));
    }
    break;
  }
}

/// bf16 / f16 / fp8 over MPI: all-reduce (sum and max) with every
/// algorithm, of small integers in [-spread, spread] (every partial sum
/// exact, so the result is exact: spread 1 for fp8, whose integers are exact
/// up to 8 in f8e5m2), the all-gather, and one case whose rounding shows the
/// accumulation in the element type (docs/collectives.md): 256 on device 0
/// and 1 elsewhere sums to 256 in bf16 and fp8 (each + 1 ties back to 256;
/// f16 has the bits for 256 + k); 256 on the last device sums to
/// H(n - 1 + 256).
template <class H>
void narrow_float_collectives(int ranks, int per_rank, const char* type, int spread) {
  const int n = ranks * per_rank;
  const Mesh mesh{{"x", n}};
  const std::string tag = fmt::format("{} {} ranks x {} devices", type, ranks, per_rank);
  const auto small = [spread](int d, std::int64_t i) {
    return static_cast<float>((d * 5 + i * 3) % (2 * spread + 1) - spread);
  };
  const auto expect = [&](const std::string& what, const Array& a, auto want) {
    for (int d = 0; d < a.num_devices(); ++d) {
      if (!a.is_local(d)) continue;
      const std::vector<H> got = a.to_host<H>(d);
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i].bits() != H(want(d, static_cast<std::int64_t>(i))).bits()) {
          check(false, fmt::format("{}: device {} element {} is {}, wants {}", what, d, i, got[i],
                                   want(d, static_cast<std::int64_t>(i))));
          return;
        }
    }
  };
  for (const std::int64_t len : {std::int64_t{1000}, std::int64_t{70000}}) {
    for (const auto alg : {coll::Algorithm::ring, coll::Algorithm::direct, coll::Algorithm::one_shot,
                            coll::Algorithm::ring_direct}) {
      for (const auto op : {ReduceOp::sum, ReduceOp::max}) {
        const std::string what = fmt::format("all_reduce {} {} {} elements, algorithm {}", tag,
                                             op == ReduceOp::sum ? "sum" : "max", len, coll::algorithm_name(alg));
        const auto x = Array::generate<H>(n, Shape{len}, small);
        const auto out = coll::all_reduce_program<H>(mesh, len, {.op = op, .algorithm = alg})(x)[0];
        expect(what, out, [&](int, std::int64_t i) {
          float r = small(0, i);
          for (int e = 1; e < n; ++e) r = op == ReduceOp::sum ? r + small(e, i) : std::max(r, small(e, i));
          return r;
        });
      }
    }
  }
  {
    const auto x = Array::generate<H>(n, Shape{2}, [&](int d, std::int64_t i) {
      return (i == 0 && d == 0) || (i == 1 && d == n - 1) ? 256.0f : 1.0f;
    });
    const auto out = coll::all_reduce_program<H>(mesh, 2, {.algorithm = coll::Algorithm::one_shot})(x)[0];
    expect(fmt::format("all_reduce {} rounding per hop", tag), out, [&](int, std::int64_t i) {
      // One-shot adds the slots in device order, rounding each partial sum to H.
      H acc(i == 0 ? 256.0f : 1.0f);
      for (int e = 1; e < n; ++e) acc = H(float(acc) + ((i == 1 && e == n - 1) ? 256.0f : 1.0f));
      return float(acc);
    });
  }
  for (const std::int64_t block : {std::int64_t{16}, std::int64_t{1 << 16}}) {
    const auto g = coll::all_gather_program<H>(mesh, block)(Array::generate<H>(n, Shape{block}, input))[0];
    expect(fmt::format("all_gather {} block {}", tag, block), g,
           [&](int, std::int64_t i) { return input(static_cast<int>(i / block), i % block); });
  }
}

std::string error_of(const Array& a) {
  try {
    a.block_until_ready();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void errors(int ranks, int per_rank) {
  const int n = ranks * per_rank;
  const Mesh mesh{{"x", n}};
  passes::Options unverified;
  unverified.verify = false;
  using V = HbmRef<float, 8>;
  using CV = HbmRef<const float, 8>;
  const auto ones = [&] { return Array::generate<float>(n, Shape{8}, [](int, std::int64_t) { return 1; }); };

  // Every device signals its right neighbour once and waits for two: all park.
  auto stuck = kernel([](CV x, V y) {
                 sync_copy(x, y);
                 run_scoped([&](RegularSemaphore s) {
                   s.name("handshake");
                   semaphore_signal(s, 1, (axis_index("x") + 1) % axis_size("x"));
                   semaphore_wait(s, 2);
                 });
               })
                   .name("stuck")
                   .passes(unverified)
                   .compile(mesh);
  const std::string dead = error_of(stuck(ones())[0]);
  check(has(dead, fmt::format("refx: deadlock in kernel 'stuck' on mesh {} over {} MPI ranks", mesh.describe(), ranks)),
        "deadlock reported: " + dead);
  for (int d = 0; d < n; ++d)
    check(has(dead, fmt::format("device {}: semaphore_wait on regular semaphore 'handshake' has 1, wants 2", d)),
          fmt::format("deadlock report lists device {}: {}", d, dead));

  // The last device fails while every other device waits for it.
  auto failing = kernel([n](CV x, V y) {
                   sync_copy(x, y);
                   run_scoped([&](RegularSemaphore s) {
                     when(axis_index("x") == n - 1, [&] {
                       io_callback([](std::int32_t d) { throw std::runtime_error(fmt::format("boom on {}", d)); },
                                   axis_index("x"));
                       for (int d = 0; d < n - 1; ++d) semaphore_signal(s, 1, d);
                     });
                     when(axis_index("x") != n - 1, [&] { semaphore_wait(s, 1); });
                   });
                 })
                     .name("failing")
                     .passes(unverified)
                     .compile(mesh);
  const std::string failed = error_of(failing(ones())[0]);
  try {
    effects_barrier();  // the failed io_callback's token
  } catch (const std::exception&) {
  }
  check(has(failed, fmt::format("device {}", n - 1)) && has(failed, fmt::format("[MPI rank {}]", ranks - 1)),
        "failure on the last rank reported everywhere: " + failed);

  // Device 0 signals the last device, which never waits.
  auto leaky = kernel([n](CV x, V y) {
                 sync_copy(x, y);
                 run_scoped([&](RegularSemaphore s) {
                   s.name("leftover");
                   when(axis_index("x") == 0, [&] { semaphore_signal(s, 5, n - 1); });
                 });
               })
                   .name("leaky")
                   .passes(unverified)
                   .compile(mesh);
  const std::string leak = error_of(leaky(ones())[0]);
  check(has(leak, "kernel 'leaky' ended with semaphores not back to 0") &&
            has(leak, fmt::format("device {}: regular semaphore 'leftover' ends at 5", n - 1)),
        "unbalanced semaphore on another rank reported: " + leak);

  // Still usable, barrier semaphores included.
  auto ok = coll::all_reduce_program<float>(mesh, 4096)(Array::generate<float>(n, Shape{4096}, input))[0];
  expect_shards("all_reduce after the errors", ok, [&](int, std::int64_t i) {
    float s = 0;
    for (int e = 0; e < n; ++e) s += input(e, i);
    return s;
  });
}

/// Every body of support/backend_cases.hpp on the MPI mesh; each rank checks
/// the devices it hosts.
void backend_cases(int ranks, int per_rank) {
  const refx::testing::backends::Backend b{refx::testing::backends::Kind::mpi, ranks * per_rank, nullptr};
  for (const auto& [name, body] : refx::testing::backends::all_cases()) {
    const ::testing::AssertionResult r = body(b);
    check(static_cast<bool>(r), fmt::format("{} on {}: {}", name, b.name(), r.message()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "collectives";
  const int per_rank = argc > 2 ? std::atoi(argv[2]) : 1;
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(90));
    std::fprintf(stderr, "mpi_test: still running after 90 s: giving up\n");
    std::_Exit(3);
  }).detach();
  Runtime& rt = Runtime::global();
  g_rank = rt.rank();
  if (rt.ranks() < 2) {
    std::fprintf(stderr, "mpi_test: run me under mpirun with 2 or more ranks\n");
    return 2;
  }
  if (mode == "collectives") {
    all_collectives(rt.ranks(), per_rank);
    narrow_float_collectives<bf16>(rt.ranks(), per_rank, "bf16", 4);
    narrow_float_collectives<f16>(rt.ranks(), per_rank, "f16", 4);
    narrow_float_collectives<f8e4m3fn>(rt.ranks(), per_rank, "f8e4m3fn", 1);
    narrow_float_collectives<f8e5m2>(rt.ranks(), per_rank, "f8e5m2", 1);
  }
  else if (mode == "errors") errors(rt.ranks(), per_rank);
  else if (mode == "backends") backend_cases(rt.ranks(), per_rank);
  else return 2;
  if (g_failures == 0) std::printf("[rank %d] %s: %d ranks x %d devices: ok\n", g_rank, mode.c_str(), rt.ranks(), per_rank);
  return g_failures == 0 ? 0 : 1;
}
