#pragma once
// Where a Ref's storage lives. Compute may only touch Vmem and Smem; Hbm is
// reachable by copies only (as on a TPU).

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include <refx/config.hpp>

namespace refx {

enum class MemorySpace : std::uint8_t { hbm, vmem, smem, semaphore };

constexpr std::string_view name_of(MemorySpace s) noexcept {
  switch (s) {
    case MemorySpace::hbm: return "hbm";
    case MemorySpace::vmem: return "vmem";
    case MemorySpace::smem: return "smem";
    case MemorySpace::semaphore: return "sem";
  }
  return "?";
}

/// Large device memory, reachable only by copies.
struct Hbm {
  static constexpr MemorySpace value = MemorySpace::hbm;
};
/// Local vector memory: readable and writable by compute.
struct Vmem {
  static constexpr MemorySpace value = MemorySpace::vmem;
};
/// Local scalar memory.
struct Smem {
  static constexpr MemorySpace value = MemorySpace::smem;
};

template <class S>
concept MemorySpaceTag = requires {
                           { S::value } -> std::convertible_to<MemorySpace>;
                         };

/// The three kinds of semaphore (see docs/semaphores.md).
enum class SemaphoreKind : std::uint8_t { none, regular, dma, barrier };

constexpr std::string_view name_of(SemaphoreKind k) noexcept {
  switch (k) {
    case SemaphoreKind::none: return "none";
    case SemaphoreKind::regular: return "regular";
    case SemaphoreKind::dma: return "dma";
    case SemaphoreKind::barrier: return "barrier";
  }
  return "?";
}

}  // namespace refx

template <>
struct fmt::formatter<refx::MemorySpace> : fmt::formatter<std::string_view> {
  format_context::iterator format(refx::MemorySpace s, format_context& ctx) const;
};
template <>
struct fmt::formatter<refx::SemaphoreKind> : fmt::formatter<std::string_view> {
  format_context::iterator format(refx::SemaphoreKind s, format_context& ctx) const;
};

// Out of line, so that naming these in a message does not instantiate fmt's
// string writer in every translation unit.
#if REFX_DEFINITIONS
REFX_DECL fmt::format_context::iterator fmt::formatter<refx::MemorySpace>::format(refx::MemorySpace s,
                                                                                  format_context& ctx) const {
  return fmt::formatter<std::string_view>::format(refx::name_of(s), ctx);
}
REFX_DECL fmt::format_context::iterator fmt::formatter<refx::SemaphoreKind>::format(refx::SemaphoreKind s,
                                                                                    format_context& ctx) const {
  return fmt::formatter<std::string_view>::format(refx::name_of(s), ctx);
}
#endif  // REFX_DEFINITIONS
