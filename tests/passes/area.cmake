# Included by tests/CMakeLists.txt after the passes_* test targets exist.
# Stage programs (include/refx/ir/primitives/detail/fused_stages.hpp) have a
# form per vector width; the suite's flags reach the SSE one. Where this
# machine has AVX-512 (the benchmarks' -march=native reaches it), the stage
# tests run a second time built for it: header-only, so that the fused loops
# themselves are compiled with -mavx512f, not taken from refx::compiled.
set(_refx_cpu_flags "")
if(EXISTS /proc/cpuinfo)
  file(STRINGS /proc/cpuinfo _refx_cpu_flags REGEX "^flags" LIMIT_COUNT 1)
endif()
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-mavx512f REFX_CXX_HAS_MAVX512F)
if(_refx_cpu_flags MATCHES " avx512f( |$)" AND REFX_CXX_HAS_MAVX512F)
  set(tgt passes_fuse_stages_avx512_test)
  refx_add_gtest(${tgt} "${CMAKE_CURRENT_SOURCE_DIR}/passes/fuse_stages_test.cpp" "passes.avx512." passes)
  target_link_libraries(${tgt} PRIVATE refx::refx refx::gemm)
  target_compile_definitions(${tgt} PRIVATE REFX_IMPLEMENTATION)
  target_compile_options(${tgt} PRIVATE -mavx512f)
endif()
