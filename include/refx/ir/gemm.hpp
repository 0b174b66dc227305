#pragma once
// The floating-point matrix product behind the dot primitive: Eigen's
// single-threaded GEMM over row-major buffers (refx's worker threads are the
// parallelism; one dot runs on one device's thread).
//
// Eigen's GEMM costs seconds of compile time in the translation unit that
// instantiates it, so where it is compiled is a build choice
// (docs/compile-time.md):
//   - header-only (the default): in the program's REFX_IMPLEMENTATION file,
//     with the program's flags (-march=native reaches Eigen's kernels);
//   - REFX_EXTERNAL_GEMM (set by linking the CMake target refx::gemm): in
//     src/gemm.cpp, once, in a small library;
//   - REFX_SEPARATE_COMPILATION (refx::compiled): in librefx, from
//     src/refx.cpp.
// Everywhere else it is only declared.

#include <cstdint>

#include <refx/config.hpp>
#include <refx/core/dtype.hpp>

#if defined(REFX_COMPILING_GEMM) || (REFX_DEFINITIONS && !defined(REFX_EXTERNAL_GEMM))
#define REFX_GEMM_DEFINITIONS 1
#else
#define REFX_GEMM_DEFINITIONS 0
#endif

#if REFX_GEMM_DEFINITIONS
// GCC 12 at -O3 with AVX-512 reports false -Wmaybe-uninitialized positives
// inside the intrinsics Eigen's kernels inline (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>
#endif

namespace refx::detail {

/// out = a * b, or a * b^T when `trans_b`; with `accumulate`, out += the
/// product instead. All three are dense row-major arrays of `t` (f32 or
/// f64): a is m x k, b is k x n (n x k when `trans_b`), out is m x n and does
/// not overlap a or b. k may be 0 (out is then zero, or unchanged).
void gemm(DType t, const void* a, const void* b, void* out, std::int64_t m, std::int64_t k, std::int64_t n,
          bool trans_b, bool accumulate = false);

/// Whether gemm(t, ..., accumulate = true) over a depth of k adds each
/// element's whole sum at once: out + (the product gemm computes alone),
/// rounded once, as a separate product and addition would. A GEMM that
/// blocks k adds its partial sums one block at a time instead (out + s1 +
/// s2 rounds differently from out + (s1 + s2)).
bool gemm_adds_whole_sums(DType t, std::int64_t k);

#if REFX_GEMM_DEFINITIONS
template <class S>
void eigen_gemm(const S* a, const S* b, S* out, std::int64_t m, std::int64_t k, std::int64_t n, bool trans_b,
                bool accumulate) {
  using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<Mat> c(out, m, n);
  if (k == 0) {
    if (!accumulate) c.setZero();
    return;
  }
  const Eigen::Map<const Mat> lhs(a, m, k);
  if (trans_b) {
    const auto rhs = Eigen::Map<const Mat>(b, n, k).transpose();
    if (accumulate) c.noalias() += lhs * rhs;
    else c.noalias() = lhs * rhs;
  } else {
    const Eigen::Map<const Mat> rhs(b, k, n);
    if (accumulate) c.noalias() += lhs * rhs;
    else c.noalias() = lhs * rhs;
  }
}

// Eigen chooses its depth block from k and the L1 cache's size alone.
template <class S>
bool eigen_whole_depth(std::int64_t k) {
  Eigen::Index kc = k, mc = k, nc = k;
  Eigen::internal::computeProductBlockingSizes<S, S, 1>(kc, mc, nc, Eigen::Index{1});
  return kc >= k;
}

bool gemm_adds_whole_sums(DType t, std::int64_t k) {
  return t == DType::f64 ? eigen_whole_depth<double>(k) : eigen_whole_depth<float>(k);
}

void gemm(DType t, const void* a, const void* b, void* out, std::int64_t m, std::int64_t k, std::int64_t n,
          bool trans_b, bool accumulate) {
  if (t == DType::f64)
    eigen_gemm(static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(out), m, k, n,
               trans_b, accumulate);
  else
    eigen_gemm(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(out), m, k, n, trans_b,
               accumulate);
}
#endif  // REFX_GEMM_DEFINITIONS

}  // namespace refx::detail

#if REFX_GEMM_DEFINITIONS && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
