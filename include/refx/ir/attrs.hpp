#pragma once
// How built-in ops encode choices in their attributes (shared by the tracer,
// which writes them, and the primitives and runtime, which read them).

#include <cstdint>

#include <refx/core/dtype.hpp>

namespace refx {

/// How a copy combines with what the destination holds (dma_start's attribute 1).
enum class CopyReduce : std::uint8_t { none = 0, sum = 1, max = 2 };

namespace prim {
/// Which semaphore a dma_wait waits on (its attribute 1).
enum class WaitSide : std::int64_t { recv = 0, send = 1 };
/// dot's attributes are [result element type, transposes]; transposes is a
/// bit set of these. An op bound with no attributes (through refx::extend)
/// has its operands' element type and transposes nothing.
inline constexpr std::int64_t dot_trans_b = 1;
/// Whether a dot of `in` operands may give `out` results (JAX's rule for
/// preferred_element_type): not bool, floating for floating operands, and
/// at least as wide as the operands.
constexpr bool dot_result_fits(DType in, DType out) noexcept {
  return out != DType::pred && (!is_floating(in) || is_floating(out)) && size_of(out) >= size_of(in);
}
}  // namespace prim

}  // namespace refx
