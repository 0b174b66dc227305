// Misuse: log on an integer Value (cast it to a floating-point type first).
// refx-expect: refx: log needs a floating-point value; cast it first
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void log_counts() {
  trace([](VmemRef<const std::int64_t, 128> counts, VmemRef<double, 128> y) {
    y.store(cast<double>(log(counts.load())));
  });
}
