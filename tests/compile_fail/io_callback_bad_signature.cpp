// Misuse: an io_callback function whose parameters do not match the values
// (a block Value<float, extents<4>> arrives as std::span<const float>).
// refx-expect: refx: io_callback
// refx-expect: function must take one argument per value: T for a scalar Value<T>, std::span<const T> for a block Value<T, ...>
#include <vector>

#include <refx/refx.hpp>
#include <refx/trace/effects.hpp>

using namespace refx;

void record() {
  std::vector<float> log;
  trace([&](VmemRef<const float, 4> x) {
    io_callback([&](const std::vector<float>& v) { log.insert(log.end(), v.begin(), v.end()); }, x.load());
  });
}
