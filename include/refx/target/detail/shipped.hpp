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
  detail::non_negative(t, "ici.working_link_bytes_per_second", t.ici.working_link_bytes_per_second,
                       "what a link carries in practice; 0 for the peak");
  if (t.ici.working_link_bytes_per_second > t.ici.link_bytes_per_second)
    invalid_target(t, "ici.working_link_bytes_per_second",
                   fmt::format("{} (more than the peak link_bytes_per_second, {})", t.ici.working_link_bytes_per_second,
                               t.ici.link_bytes_per_second),
                   "at most the peak");
  detail::non_negative(t, "ici.collective_fixed_seconds", t.ici.collective_fixed_seconds, "0 when none is known");
  detail::non_negative(t, "dma_issue_seconds", t.dma_issue_seconds, "0 when none is known");
  for (const auto& [field, v] :
       {std::pair{"scoped_vmem_bytes", t.scoped_vmem_bytes}, std::pair{"vmem_limit_bytes", t.vmem_limit_bytes}}) {
    if (v < 0) invalid_target(t, field, fmt::format("{}", v), "0 (the default) or a positive number of bytes");
    if (v > t.vmem_bytes)
      invalid_target(t, field, fmt::format("{} (more than the {} bytes of vmem_bytes)", v, t.vmem_bytes),
                     "at most the TensorCore's Vmem");
  }
  if (t.devices_per_chip != 1 && t.devices_per_chip != t.cores_per_chip)
    invalid_target(t, "devices_per_chip",
                   fmt::format("{} (with {} cores_per_chip)", t.devices_per_chip, t.cores_per_chip),
                   "1 (a chip is a device) or cores_per_chip (each TensorCore is one)");
}

namespace detail {
// Pallas' block rule is the same (8, 128) for every element width (docs/targets.md).
inline constexpr TileRule pallas_tile{8, 128};
inline constexpr double gib = 1024.0 * 1024.0 * 1024.0;
inline constexpr std::int64_t mib = std::int64_t{1} << 20;
// The scaling book's working per-hop latency, "typically around 1 us" (docs/targets.md).
inline constexpr double working_hop_latency = 1e-6;
}  // namespace detail

namespace targets {
// Designated initializers, in Target's order; what is not named keeps its default.
REFX_DECL const Target& v4() {
  static const Target t{
      .name = "v4",
      .vmem_bytes = 16 * detail::mib,
      .smem_bytes = 1 * detail::mib,
      .tile_32bit = detail::pallas_tile,
      .tile_16bit = detail::pallas_tile,
      .tile_8bit = detail::pallas_tile,
      .element_types = {DType::pred, DType::i8, DType::u8, DType::i32, DType::u32, DType::bf16, DType::f32},
      .matmul = {{DType::bf16, 275e12}, {DType::f32, 0}, {DType::i8, 275e12}},
      .mxu_dim = 128,
      .cores_per_chip = 2,
      .hbm_bytes = static_cast<std::int64_t>(32 * detail::gib),
      .hbm_bytes_per_second = 1200e9,
      .ici = {.dims = {16, 16, 16},
              .wraparound_multiple = 4,
              .link_bytes_per_second = 45e9,
              .hop_latency_seconds = detail::working_hop_latency},
      .scoped_vmem_bytes = 16 * detail::mib,
  };
  return t;
}
REFX_DECL const Target& v5e() {
  static const Target t{
      .name = "v5e",
      .vmem_bytes = 128 * detail::mib,
      .smem_bytes = 1 * detail::mib,
      .tile_32bit = detail::pallas_tile,
      .tile_16bit = detail::pallas_tile,
      .tile_8bit = detail::pallas_tile,
      .element_types = {DType::pred, DType::i8, DType::u8, DType::i32, DType::u32, DType::bf16, DType::f32,
                        DType::f8e5m2},
      .matmul = {{DType::bf16, 197e12}, {DType::f32, 0}, {DType::i8, 394e12}, {DType::f8e5m2, 0}},
      .mxu_dim = 128,
      .cores_per_chip = 1,
      .hbm_bytes = static_cast<std::int64_t>(16 * detail::gib),
      .hbm_bytes_per_second = 819e9,
      .ici = {.dims = {16, 16},
              .wraparound_multiple = 16,
              .link_bytes_per_second = 50e9,
              .hop_latency_seconds = detail::working_hop_latency,
              .working_link_bytes_per_second = 45e9},
      .scoped_vmem_bytes = 16 * detail::mib,
  };
  return t;
}
REFX_DECL const Target& v5p() {
  static const Target t{
      .name = "v5p",
      .vmem_bytes = 64 * detail::mib,
      .smem_bytes = 1 * detail::mib,
      .tile_32bit = detail::pallas_tile,
      .tile_16bit = detail::pallas_tile,
      .tile_8bit = detail::pallas_tile,
      .element_types = {DType::pred, DType::i8, DType::u8, DType::i32, DType::u32, DType::bf16, DType::f32,
                        DType::f8e5m2},
      .matmul = {{DType::bf16, 459e12}, {DType::f32, 0}, {DType::i8, 918e12}, {DType::f8e5m2, 0}},
      .mxu_dim = 128,
      .cores_per_chip = 2,
      .hbm_bytes = static_cast<std::int64_t>(95 * detail::gib),
      .hbm_bytes_per_second = 2765e9,
      .ici = {.dims = {16, 16, 24},
              .wraparound_multiple = 4,
              .link_bytes_per_second = 100e9,
              .hop_latency_seconds = detail::working_hop_latency,
              .working_link_bytes_per_second = 90e9},
      .scoped_vmem_bytes = 16 * detail::mib,
  };
  return t;
}
REFX_DECL const Target& v6e() {
  static const Target t{
      .name = "v6e",
      .vmem_bytes = 128 * detail::mib,
      .smem_bytes = 1 * detail::mib,
      .tile_32bit = detail::pallas_tile,
      .tile_16bit = detail::pallas_tile,
      .tile_8bit = detail::pallas_tile,
      .element_types = {DType::pred, DType::i8, DType::u8, DType::i32, DType::u32, DType::bf16, DType::f32,
                        DType::f8e4m3fn, DType::f8e5m2},
      .matmul = {{DType::bf16, 918e12}, {DType::f32, 0}, {DType::i8, 1836e12}, {DType::f8e5m2, 920e12}},
      .mxu_dim = 256,
      .cores_per_chip = 1,
      .hbm_bytes = static_cast<std::int64_t>(32 * detail::gib),
      .hbm_bytes_per_second = 1640e9,
      .ici = {.dims = {16, 16},
              .wraparound_multiple = 16,
              .link_bytes_per_second = 100e9,
              .hop_latency_seconds = detail::working_hop_latency,
              .working_link_bytes_per_second = 90e9},
      .scoped_vmem_bytes = 32 * detail::mib,
      .regular_semaphore_copies = true,
  };
  return t;
}
// Each TensorCore is a device: HBM, its bandwidth and the matrix unit's
// rates are the chip's halved.
REFX_DECL const Target& tpu7x() {
  static const Target t{
      .name = "tpu7x",
      .vmem_bytes = 64 * detail::mib,
      .smem_bytes = 1 * detail::mib,
      .tile_32bit = detail::pallas_tile,
      .tile_16bit = TileRule{16, 128},
      .tile_8bit = TileRule{32, 128},
      .element_types = {DType::pred, DType::i8, DType::u8, DType::i32, DType::u32, DType::bf16, DType::f32,
                        DType::f8e4m3fn, DType::f8e5m2},
      .matmul = {{DType::bf16, 2307e12 / 2},
                 {DType::f32, 0},
                 {DType::f8e4m3fn, 4614e12 / 2},
                 {DType::f8e5m2, 4614e12 / 2}},
      .mxu_dim = 256,
      .cores_per_chip = 2,
      .hbm_bytes = static_cast<std::int64_t>(96 * detail::gib),
      .hbm_bytes_per_second = 7380e9 / 2,
      .ici = {.dims = {4, 4, 576},
              .wraparound_multiple = 4,
              .link_bytes_per_second = 100e9,
              .hop_latency_seconds = detail::working_hop_latency,
              .working_link_bytes_per_second = 90e9},
      .scoped_vmem_bytes = 32 * detail::mib,
      .devices_per_chip = 2,
      .regular_semaphore_copies = true,
  };
  return t;
}
REFX_DECL std::vector<const Target*> all() { return {&v4(), &v5e(), &v5p(), &v6e(), &tpu7x()}; }
}  // namespace targets

}  // namespace refx
