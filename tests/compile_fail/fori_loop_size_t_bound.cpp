// Misuse: a loop bound from a std::vector's size() (std::size_t, an unsigned
// 64-bit number, may not fit the signed 32-bit loop index; a std::int64_t
// bound converts and is checked while tracing).
// refx-expect: refx: an unsigned 64-bit integer (std::size_t, std::uint64_t) where a 32-bit integer is expected (a
// device id, loop bound, semaphore count or increment, step or index) may not fit; convert it explicitly with
// static_cast<std::int32_t>(...) (a std::int64_t converts, and is checked while tracing)
#include <cstddef>
#include <cstdint>
#include <vector>

#include <refx/refx.hpp>

using namespace refx;

void scale_rows(const std::vector<float>& row_scales) {
  trace([&](VmemRef<float, 16, 128> acc) {
    fori_loop(0, row_scales.size(),
              [&](Scalar<std::int32_t> r) { acc.at(r, all).store(acc.at(r, all).load() * 0.5f); });
  });
}
