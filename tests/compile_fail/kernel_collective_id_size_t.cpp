// Misuse: a std::size_t collective id (unsigned 64-bit into the signed 64-bit id).
// refx-expect: refx: an unsigned integer of 64 bits (std::size_t, std::uint64_t) where a signed 64-bit integer
#include <cstddef>

#include <refx/kernel.hpp>
#include <refx/refx.hpp>

using namespace refx;

void build(std::size_t id) {
  auto k = kernel([](VmemRef<float, 128> y) { y.store(0.0f); }).collective_id(id);
  (void)k;
}
