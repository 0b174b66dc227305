// Misuse: an input block declared writable, as every ref is in a Pallas
// kernel (x_ref[...] = ... compiles there); an in(...) block is read-only.
// refx-expect: refx: an in(...) block is read-only; declare the body's parameter as VmemRef<const T, ...> (out(...)
// blocks and scratch are the writable ones)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void scale() {
  trace([](HbmRef<const float, 64, 256> x, HbmRef<float, 64, 256> o) {
    const auto tile = [](std::int64_t i, std::int64_t j) { return std::tuple{i, j}; };
    emit_pipeline(grid(4, 2), [](VmemRef<float, 16, 128> x_ref, VmemRef<float, 16, 128> o_ref) {
      o_ref.store(x_ref.load() * 3.0f);
    })(in(x, block<16, 128>(tile)), out(o, block<16, 128>(tile)));
  });
}
