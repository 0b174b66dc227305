// jax-ml/jax's megablox gmm (examples/jax_megablox_gmm.hpp): lhs [m, k] in
// groups of rows, each multiplied by its group's rhs [k, n], for several
// group_sizes through one compiled kernel (the grid's middle extent,
// num_active_tiles, is read from the metadata when the kernel runs): groups
// that start inside a tile, an empty group, one group holding every row.
// rhs plain and transposed, f32 and bf16 inputs, the race detector on for
// one. Checked against the per-group products computed on the host in
// double; prints the largest error and the time per call, and exits
// non-zero on an error above tolerance. A num_active_tiles past the
// metadata's length is reported, not run.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/runtime/runtime.hpp>

#include "jax_megablox_gmm.hpp"

namespace {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

constexpr I kM = 512, kK = 256, kN = 256, kGroups = 4, kTm = 128, kTk = 128, kTn = 128;

float input(int which, I e) { return static_cast<float>(((e * 2654435761u + which * 7919) % 2003) / 1001.0 - 1.0); }

template <class T, bool kTranspose>
using G = jax_megablox_gmm::Gmm<T, kM, kK, kN, kGroups, kTm, kTk, kTn, kTranspose>;

template <class T, bool kTranspose>
bool run(const char* what, RuntimeOptions options = {}) {
  using Gmm = G<T, kTranspose>;
  Runtime rt(options);
  const Executable exe = kernel(Gmm::gmm()).name("gmm").compile(Mesh{{"x", 1}}, {}, rt);
  const Array lhs = Array::generate<T>(1, Shape{kM, kK}, [](int, I e) { return T(input(0, e)); }, rt);
  const Shape rhs_shape = kTranspose ? Shape{kGroups, kN, kK} : Shape{kGroups, kK, kN};
  const Array rhs = Array::generate<T>(1, rhs_shape, [](int, I e) { return T(input(1, e)); }, rt);
  const auto f = [](T x) { return static_cast<double>(static_cast<float>(x)); };
  const std::vector<T> hl = lhs.to_host<T>(0), hr = rhs.to_host<T>(0);
  bool ok = true;
  for (const std::vector<i32>& group_sizes : {std::vector<i32>{100, 156, 200, 56}, std::vector<i32>{128, 0, 300, 84},
                                              std::vector<i32>{0, 0, 512, 0}, std::vector<i32>{1, 1, 1, 509}}) {
    const auto meta = jax_megablox_gmm::make_group_metadata(group_sizes, kM, kTm, 0, kGroups, false);
    const auto smem = [&](const std::vector<i32>& v) {
      return Array::from_shards<i32>({v}, Shape{static_cast<I>(v.size())}, rt);
    };
    const std::vector<Array> args{smem(meta.group_offsets), smem(meta.group_ids), smem(meta.m_tile_ids), smem({0}),
                                  smem({meta.num_tiles}), lhs, rhs};
    const std::vector<float> out = exe(args)[0].to_host<float>(0);
    double worst = 0;
    for (I r = 0, g = 0, end = group_sizes[0]; r < kM; ++r) {
      while (r >= end) end += group_sizes[static_cast<std::size_t>(++g)];
      for (I c = 0; c < kN; ++c) {
        double want = 0;
        for (I x = 0; x < kK; ++x) {
          const I ri = kTranspose ? (g * kN + c) * kK + x : (g * kK + x) * kN + c;
          want += f(hl[static_cast<std::size_t>(r * kK + x)]) * f(hr[static_cast<std::size_t>(ri)]);
        }
        worst = std::max(worst, std::abs(out[static_cast<std::size_t>(r * kN + c)] - want));
      }
    }
    const bool good = worst < (sizeof(T) == 4 ? 1e-3 : 2e-2);
    constexpr int reps = 3;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) exe(args)[0].block_until_ready();
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
    fmt::print("gmm {:<30} group_sizes [{}] num_active_tiles {}  {}  error {:.1e}  {:8.1f} us/call\n", what,
               fmt::join(group_sizes, ", "), meta.num_tiles, good ? "ok" : "WRONG", worst, us);
    ok = ok && good;
  }
  return ok;
}

/// num_active_tiles beyond the metadata's length: a run-time error naming it.
bool extent_past_bound_reported() {
  Runtime rt;
  const Executable exe = kernel(G<float, false>::gmm()).name("gmm").compile(Mesh{{"x", 1}}, {}, rt);
  const auto meta = jax_megablox_gmm::make_group_metadata({128, 128, 128, 128}, kM, kTm, 0, kGroups, false);
  const auto smem = [&](const std::vector<i32>& v) {
    return Array::from_shards<i32>({v}, Shape{static_cast<I>(v.size())}, rt);
  };
  const Array lhs = Array::generate<float>(1, Shape{kM, kK}, [](int, I e) { return input(0, e); }, rt);
  const Array rhs = Array::generate<float>(1, Shape{kGroups, kK, kN}, [](int, I e) { return input(1, e); }, rt);
  try {
    exe(smem(meta.group_offsets), smem(meta.group_ids), smem(meta.m_tile_ids), smem({0}), smem({99}), lhs, rhs)[0]
        .block_until_ready();
  } catch (const Error& e) {
    const std::string what = e.what();
    const bool named = what.find("grid dimension 1") != std::string::npos && what.find("[0, 7]") != std::string::npos;
    fmt::print("gmm num_active_tiles 99 > 7: {}\n  {}\n", named ? "reported" : "UNEXPECTED ERROR", what);
    return named;
  }
  fmt::print("gmm num_active_tiles 99 > 7: NOT REPORTED\n");
  return false;
}
}  // namespace

int main() {
  bool ok = run<float, false>("f32");
  ok = run<float, true>("f32, transpose_rhs, detect_races", RuntimeOptions{.detect_races = true}) && ok;
  ok = run<bf16, false>("bf16") && ok;
  ok = extent_past_bound_reported() && ok;
  return ok ? 0 : 1;
}
