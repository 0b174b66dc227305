#pragma once
// The definitions of target.hpp: validate() and the shipped generations
// (included at its end, in REFX_DEFINITIONS builds).
// Every figure below has its public source in docs/targets.md ("The
// figures"); keep the two in step.

#include <cmath>
#include <string>

#include <fmt/format.h>

#include <refx/core/error.hpp>

namespace refx {

namespace detail {
[[noreturn]] inline void invalid_target(const Target& t, std::string_view field, const std::string& value,
                                        std::string_view rule) {
  throw Error(fmt::format("refx: invalid Target \"{}\": {} is {}; it must be {}", t.name, field, value, rule));
}
inline void positive(const Target& t, std::string_view field, double v, std::string_view what) {
  if (!(v > 0) || !std::isfinite(v))
    invalid_target(t, field, fmt::format("{}", v), fmt::format("a positive number ({})", what));
}
inline void non_negative(const Target& t, std::string_view field, double v, std::string_view what) {
  if (!(v >= 0) || !std::isfinite(v))
    invalid_target(t, field, fmt::format("{}", v), fmt::format("0 or more ({})", what));
}
inline void check_tile(const Target& t, std::string_view field, const TileRule& r) {
  positive(t, fmt::format("{}.second_minor", field), static_cast<double>(r.second_minor),
           "rows of the tile a block's second-to-last extent is a multiple of");
  positive(t, fmt::format("{}.minor", field), static_cast<double>(r.minor),
           "lanes of the tile a block's last extent is a multiple of");
}
}  // namespace detail

REFX_DECL void validate(const Target& t) {
  using detail::invalid_target;
  if (t.name.empty()) invalid_target(t, "name", "empty", "the generation's name, used in every message");
  detail::positive(t, "vmem_bytes", static_cast<double>(t.vmem_bytes), "the Vmem of one TensorCore, in bytes");
  detail::positive(t, "smem_bytes", static_cast<double>(t.smem_bytes), "the Smem of one TensorCore, in bytes");
  detail::check_tile(t, "tile_32bit", t.tile_32bit);
  detail::check_tile(t, "tile_16bit", t.tile_16bit);
  detail::check_tile(t, "tile_8bit", t.tile_8bit);
  if (t.element_types.empty())
    invalid_target(t, "element_types", "empty", "the element types a kernel's buffers may hold");
  if (t.matmul.empty()) invalid_target(t, "matmul", "empty", "the operand types the matrix unit takes");
  for (const MatmulRate& m : t.matmul) {
    detail::non_negative(t, fmt::format("matmul[{}].ops_per_second", m.dtype), m.ops_per_second,
                         "0 when no peak is published");
    if (!t.supports(m.dtype))
      invalid_target(t, fmt::format("matmul[{}]", m.dtype), "an element type missing from element_types",
                     "one of element_types: a matmul operand is a buffer's element type");
  }
  detail::positive(t, "mxu_dim", static_cast<double>(t.mxu_dim), "the side of the matrix unit's systolic array");
  detail::positive(t, "cores_per_chip", t.cores_per_chip, "TensorCores per chip");
  detail::positive(t, "hbm_bytes", static_cast<double>(t.hbm_bytes), "HBM per chip, in bytes");
  if (t.vmem_bytes > t.hbm_bytes)
    invalid_target(t, "vmem_bytes", fmt::format("{} (more than hbm_bytes, {})", t.vmem_bytes, t.hbm_bytes),
                   "at most hbm_bytes");
  detail::positive(t, "hbm_bytes_per_second", t.hbm_bytes_per_second, "HBM bandwidth per chip");
  detail::non_negative(t, "vector_ops_per_second", t.vector_ops_per_second, "0 when no figure is published");
  if (t.ici.dims.empty())
    invalid_target(t, "ici.dims", "empty", "the largest slice's chips per torus axis, e.g. {16, 16}");
  for (std::size_t i = 0; i < t.ici.dims.size(); ++i)
    detail::positive(t, fmt::format("ici.dims[{}]", i), t.ici.dims[i], "chips along a torus axis");
  detail::positive(t, "ici.wraparound_multiple", t.ici.wraparound_multiple,
                   "an axis of a multiple of this many chips closes into a ring");
  detail::positive(t, "ici.link_bytes_per_second", t.ici.link_bytes_per_second, "one direction of one ICI link");
  detail::non_negative(t, "ici.hop_latency_seconds", t.ici.hop_latency_seconds, "latency added per chip crossed");
}

namespace detail {
// Pallas' block rule is the same (8, 128) for every element width (docs/targets.md).
inline constexpr TileRule pallas_tile{8, 128};
inline std::vector<DType> pallas_element_types(bool fp8) {
  // Two literal lists: g++ 12 at -O3 warns (-Warray-bounds, a false
  // positive) on inserting into the 7-element one.
  if (fp8)
    return {DType::pred, DType::i8,  DType::u8,       DType::i32,   DType::u32,
            DType::bf16, DType::f32, DType::f8e4m3fn, DType::f8e5m2};
  return {DType::pred, DType::i8, DType::u8, DType::i32, DType::u32, DType::bf16, DType::f32};
}
inline constexpr double gib = 1024.0 * 1024.0 * 1024.0;
inline constexpr std::int64_t mib = std::int64_t{1} << 20;
// The scaling book's worked per-hop latency (docs/targets.md: an assumption, not a measurement).
inline constexpr double assumed_hop_latency = 0.5e-6;
}  // namespace detail

namespace targets {
REFX_DECL const Target& v4() {
  static const Target t{"v4",
                        16 * detail::mib,
                        1 * detail::mib,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_element_types(false),
                        {{DType::bf16, 275e12}, {DType::f32, 0}, {DType::i8, 275e12}},
                        128,
                        2,
                        static_cast<std::int64_t>(32 * detail::gib),
                        1200e9,
                        0,
                        IciTopology{{16, 16, 16}, 4, 45e9, detail::assumed_hop_latency}};
  return t;
}
REFX_DECL const Target& v5e() {
  static const Target t{"v5e",
                        128 * detail::mib,
                        1 * detail::mib,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_element_types(false),
                        {{DType::bf16, 197e12}, {DType::f32, 0}, {DType::i8, 394e12}},
                        128,
                        1,
                        static_cast<std::int64_t>(16 * detail::gib),
                        819e9,
                        0,
                        IciTopology{{16, 16}, 16, 50e9, detail::assumed_hop_latency}};
  return t;
}
REFX_DECL const Target& v5p() {
  static const Target t{"v5p",
                        64 * detail::mib,
                        1 * detail::mib,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_element_types(false),
                        {{DType::bf16, 459e12}, {DType::f32, 0}, {DType::i8, 918e12}},
                        128,
                        2,
                        static_cast<std::int64_t>(95 * detail::gib),
                        2765e9,
                        0,
                        IciTopology{{16, 16, 24}, 4, 100e9, detail::assumed_hop_latency}};
  return t;
}
REFX_DECL const Target& v6e() {
  static const Target t{"v6e",
                        128 * detail::mib,
                        1 * detail::mib,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_tile,
                        detail::pallas_element_types(true),
                        {{DType::bf16, 918e12},
                         {DType::f32, 0},
                         {DType::i8, 1836e12},
                         {DType::f8e4m3fn, 920e12},
                         {DType::f8e5m2, 920e12}},
                        256,
                        1,
                        static_cast<std::int64_t>(32 * detail::gib),
                        1640e9,
                        0,
                        IciTopology{{16, 16}, 16, 100e9, detail::assumed_hop_latency}};
  return t;
}
}  // namespace targets

}  // namespace refx
