// Every refx entry that records the user's line, misused from a user file:
// each error must name this file and the line of the misuse, and no refx
// header. Built and run by each supported compiler (ctests
// compilers.<compiler>.locations, header-only, tests/compile_fail/; the
// build's own compiler's run is compiled.locations, tests/compiled/): g++,
// clang++ 15 (whose std::source_location::current() in a default argument
// names the declaration, so refx takes its __builtin_LINE stand-in there) and
// clang++ 14 (no std::source_location with libstdc++). Prints one line per
// case and exits non-zero when any case names the wrong place.

#define REFX_IMPLEMENTATION
#include <cstdint>
#include <cstdio>
#include <string>

#include <refx/refx.hpp>

using namespace refx;

namespace {

int failures = 0;
int cases = 0;

/// Runs `f`, which must throw a refx::Error naming locations.cpp:`line`.
template <class F>
void expect_at(const char* what, int line, F f) {
  ++cases;
  std::string msg;
  try {
    f();
  } catch (const Error& e) {
    msg = e.what();
  }
  const std::string here = "locations.cpp:" + std::to_string(line);
  bool names_line = false;  // here, not followed by another digit
  for (auto at = msg.find(here); at != std::string::npos && !names_line; at = msg.find(here, at + 1)) {
    const std::size_t end = at + here.size();
    names_line = end == msg.size() || msg[end] < '0' || msg[end] > '9';
  }
  const bool names_header = msg.find(".hpp:") != std::string::npos;
  if (msg.empty() || !names_line || names_header) {
    ++failures;
    std::printf("FAIL %s: expected %s%s; got: %s\n", what, here.c_str(), names_header ? " and no refx header" : "",
                msg.empty() ? "(no error)" : msg.c_str());
  } else {
    std::printf("ok   %s (%s)\n", what, here.c_str());
  }
}

const Mesh one{{"x", 1}};

/// An index map for rank-1 blocks.
constexpr auto block_i = [](auto i) { return i; };

}  // namespace

int main() {
  // ---- values and Refs
  expect_at("load of a window past the end", __LINE__ + 2, [&] {
    (void)kernel([](VmemRef<const float, 16> x, VmemRef<float, 4> y) {
      y.store(x.at(ds(14, 4)).load());
    }).compile(one);
  });
  expect_at("full outside a trace", __LINE__, [] { (void)full<float, 4>(1.0f); });
  expect_at("axis_index outside a trace", __LINE__, [] { (void)axis_index("x"); });
  expect_at("axis_index of an unknown axis", __LINE__ + 2, [] {
    (void)kernel([](VmemRef<std::int32_t, 1> y) {
      (void)axis_index("y"), (void)y;
    }).compile(one);
  });
  expect_at("prng_random_bits without a seed", __LINE__ + 2, [] {
    (void)kernel([](VmemRef<std::uint32_t, 8> out) {
      out.store(prng_random_bits<8>());
    }).compile(one);
  });
  expect_at("a scope's Ref used after it", __LINE__ + 4, [] {
    (void)kernel([](VmemRef<float, 8> y) {
      VmemRef<float, 8> leaked = y;
      run_scoped([&](VmemRef<float, 8> s) { leaked = s; });
      y.store(leaked.load());
    }).compile(one);
  });

  // ---- control flow and scopes
  expect_at("fori_loop outside a trace", __LINE__, [] { fori_loop(0, 4, [](Scalar<std::int32_t>) {}); });
  expect_at("run_scoped with a dynamic Ref and no shape", __LINE__ + 2, [] {
    (void)kernel([](VmemRef<float, 4>) {
      run_scoped([](Ref<float, extents<dyn>>) {});
    }).compile(one);
  });

  // ---- copies and semaphores
  expect_at("a copy between overlapping windows", __LINE__ + 3, [] {
    (void)kernel([](HbmRef<float, 16> x) {
      run_scoped([&](DmaSemaphore sem) {
        auto c = make_async_copy(x.at(ds(0, 8)), x.at(ds(4, 8)), sem);
        c.start();
        c.wait();
      });
    }).compile(one);
  });
  expect_at("a copy waited twice", __LINE__ + 6, [] {
    (void)kernel([](HbmRef<const float, 8> x, VmemRef<float, 8> y) {
      run_scoped([&](DmaSemaphore sem) {
        auto c = make_async_copy(x, y, sem);
        c.start();
        c.wait();
        c.wait();
      });
    }).compile(one);
  });
  expect_at("a wait nobody signals (verify)", __LINE__ + 3, [] {
    auto exe = kernel([](VmemRef<float, 4> y) {
      run_scoped([&](RegularSemaphore never) {
        semaphore_wait(never, 1);
        y.store(full<float, 4>(1.0f));
      });
    }).compile(one);
    auto out = exe();
    out[0].block_until_ready();
  });

  // ---- cores
  expect_at("core_barrier outside core_map", __LINE__ + 3, [] {
    (void)kernel([](HbmRef<float, 8> y) {
      (void)y;
      core_barrier();
    }).compile(Mesh{{"x", 1}}.with_cores(2));
  });

  // ---- emit_pipeline
  expect_at("emit_pipeline: a block index past the operand", __LINE__ + 3, [] {
    (void)kernel([](HbmRef<const float, 8> x, HbmRef<float, 8> z) {
      const auto body = [](VmemRef<const float, 8> xb, VmemRef<float, 8> zb) { zb.store(xb.load()); };
      emit_pipeline(grid(2), body)(in(x, block<8>(block_i)),  //
                                   out(z, block<8>(block_i)));
    }).compile(one);
  });
  expect_at("program_id in a rolled emit_pipeline body", __LINE__ + 4, [] {
    (void)kernel([](HbmRef<const float, 16> x, HbmRef<float, 16> z) {
      emit_pipeline(grid(2).rolled(),
                    [](VmemRef<const float, 8> xb, VmemRef<float, 8> zb) {
                      if (program_id(0) == 0) zb.store(xb.load());
                    })(in(x, block<8>(block_i)), out(z, block<8>(block_i)));
    }).compile(one);
  });

  // ---- pipeline_kernel: every message names the user's lines, none pipeline.hpp
  expect_at("pipeline_kernel: an index map's block index out of range", __LINE__ + 3, [] {
    const auto k = pipeline_kernel<HbmRef<const float, 16>, HbmRef<float, 16>>(
        grid(3), [](VmemRef<const float, 8> x, VmemRef<float, 8> z) { z.store(x.load()); },
        block<8>([](std::int64_t i) { return i; }), block<8>([](std::int64_t) { return std::int64_t{0}; }));
    (void)kernel(k).compile(one);
  });
  expect_at("pipeline_kernel: a partial block in a rolled grid", __LINE__ + 3, [] {
    const auto k = pipeline_kernel<HbmRef<const float, 20>, HbmRef<float, 20>>(
        grid(3).rolled(), [](VmemRef<const float, 8> x, VmemRef<float, 8> z) { z.store(x.load()); },
        block<8>(block_i), block<8>(block_i));
    (void)kernel(k).compile(one);
  });
  expect_at("pipeline_kernel: program_id in a rolled body", __LINE__ + 4, [] {
    const auto k = pipeline_kernel<HbmRef<const float, 16>, HbmRef<float, 16>>(
        grid(2).rolled(),
        [](VmemRef<const float, 8> x, VmemRef<float, 8> z) {
          if (program_id(0) == 0) z.store(x.load());
        },
        block<8>(block_i), block<8>(block_i));
    (void)kernel(k).compile(one);
  });
  expect_at("pipeline_kernel: a tiling violation on a target", __LINE__ + 3, [] {
    const auto k = pipeline_kernel<HbmRef<const float, 96, 128>, HbmRef<float, 96, 128>>(
        grid(8), [](VmemRef<const float, 12, 128> x, VmemRef<float, 12, 128> z) { z.store(x.load()); },
        block<12, 128>([](std::int64_t i) { return std::array<std::int64_t, 2>{i, 0}; }),
        block<12, 128>([](std::int64_t i) { return std::array<std::int64_t, 2>{i, 0}; }));
    (void)kernel(k).target(targets::v5e()).compile(one);
  });
  expect_at("pipeline_kernel: Vmem over the target's capacity", __LINE__ + 3, [] {
    const auto k = pipeline_kernel<HbmRef<const float, 16384, 2048>, HbmRef<float, 16384, 2048>>(
        grid(2), [](VmemRef<const float, 8192, 2048> x, VmemRef<float, 8192, 2048> z) { z.store(x.load()); },
        block<8192, 2048>([](std::int64_t i) { return std::array<std::int64_t, 2>{i, 0}; }),
        block<8192, 2048>([](std::int64_t i) { return std::array<std::int64_t, 2>{i, 0}; }));
    (void)kernel(k).target(targets::v5e()).compile(one);
  });
  expect_at("pipeline_kernel: a page index past the pool (run time)", __LINE__ + 3, [] {
    const auto k = pipeline_kernel<SmemRef<const std::int32_t, 2>, HbmRef<const float, 32>, HbmRef<float, 16>>(
        grid(2), [](auto, VmemRef<const float, 8> x, VmemRef<float, 8> z) { z.store(x.load()); },
        block<8>([](std::int64_t i, const auto& pages) { return pages.at(i).load(); }),
        block<8>([](auto i, const auto&) { return i; }));
    auto exe = kernel(k).compile(one);
    const auto pages = Array::from_shards<std::int32_t>({{0, 9}}, Shape{2});
    auto out = exe(pages, Array::generate<float>(1, Shape{32}, [](int, std::int64_t e) { return float(e); }));
    out[0].block_until_ready();
  });

  std::printf("locations: %d of %d cases name the user's line\n", cases - failures, cases);
  return failures == 0 ? 0 : 1;
}
