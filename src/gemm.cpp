// The GEMM behind dot (include/refx/ir/gemm.hpp), compiled once for programs
// that link refx::gemm (REFX_EXTERNAL_GEMM), so that their translation units
// do not each instantiate Eigen's GEMM (docs/compile-time.md); with it the
// vectorised math kernels (include/refx/ir/vector_math.hpp).

#if !defined(REFX_EXTERNAL_GEMM)
#error "refx: src/gemm.cpp is built with REFX_EXTERNAL_GEMM (link the CMake target refx::gemm)"
#endif
#if defined(REFX_SEPARATE_COMPILATION)
#error "refx: refx::compiled defines the GEMM itself; link refx::compiled or refx::gemm, not both"
#endif
#define REFX_COMPILING_GEMM 1
// refx's worker threads are the parallelism: one dot runs on one thread,
// even where this file is compiled with OpenMP.
#define EIGEN_DONT_PARALLELIZE 1

#include <refx/ir/gemm.hpp>
#include <refx/ir/vector_math.hpp>
