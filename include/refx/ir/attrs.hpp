#pragma once
// How built-in ops encode choices in their attributes (shared by the tracer,
// which writes them, and the primitives and runtime, which read them).

#include <cstdint>

namespace refx {

/// How a copy combines with what the destination holds (dma_start's attribute 1).
enum class CopyReduce : std::uint8_t { none = 0, sum = 1, max = 2 };

namespace prim {
/// Which semaphore a dma_wait waits on (its attribute 1).
enum class WaitSide : std::int64_t { recv = 0, send = 1 };
}  // namespace prim

}  // namespace refx
