// Misuse: a loop written as `for i in range(len(tiles))` with an int index
// and a std::size_t bound; the body's parameter is the main misuse, and its
// sentence comes first (fori_loop's deduced return type makes the compiler
// instantiate its body before the bound's conversion), then the bound's.
// refx-expect: refx: a fori_loop body takes the loop index as a Scalar: [&](refx::Scalar<std::int32_t> i) { ... }
// refx-expect: refx: an unsigned 64-bit integer (std::size_t, std::uint64_t) where a 32-bit integer is expected
#include <cstddef>
#include <cstdint>
#include <vector>

#include <refx/refx.hpp>

using namespace refx;

void per_tile(const std::vector<int>& tiles) {
  trace([&](VmemRef<float, 16, 128> acc) {
    fori_loop(0, tiles.size(), [&](int t) { acc.at(t, all).store(0.0f); });
  });
}
