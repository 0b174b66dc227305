// libFuzzer entry point of the graph-builder fuzz target
// (graph_fuzz_target.hpp). Built by the "fuzz" preset (clang-15,
// -fsanitize=fuzzer,address,undefined; REFX_BUILD_FUZZERS=ON):
//   cmake --preset fuzz && cmake --build --preset fuzz
//   build/fuzz/tests/fuzz/refx_graph_fuzzer -runs=100000 -max_len=2048
// An input that raises anything but a refx error aborts with its message,
// which libFuzzer reports as a crash (and saves the input).

#include <cstdio>
#include <cstdlib>

#include "fuzz/graph_fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)refx::fuzz::run_one(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "refx graph fuzzer: an input raised something other than a refx error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
