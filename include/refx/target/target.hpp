#pragma once
// A TPU generation as data (docs/targets.md): memory capacities, the tiling
// rule of blocks, the element types its buffers and its matrix unit take,
// cores per chip, HBM, peak matmul rates, and the ICI torus. The fidelity
// checks (passes/target_checks.hpp) read it; adding a generation adds a
// value, not a branch.
//
//   auto exe = refx::kernel(f).target(refx::targets::v5e()).compile(mesh);
//
// refx ships v4, v5e, v5p, v6e and TPU7x (every figure with its public
// source in docs/targets.md, which says which figures are a data sheet's
// peak and which the working figures the model predicts with). Describe
// another by filling a Target (start from a shipped one and change what
// differs); validate(t) names the first missing or impossible figure.

#include <cstdint>
#include <string>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/dtype.hpp>
#include <refx/core/error.hpp>

namespace refx {

/// The tile a block's minor two dimensions must be multiples of (unless a
/// dimension spans the whole array): `second_minor` rows of `minor` lanes.
struct TileRule {
  std::int64_t second_minor = 0;
  std::int64_t minor = 0;
};

/// A dot operand element type the matrix unit takes, and its peak rate per
/// chip in operations (multiply and add counted apart) per second; 0 when
/// the type is supported but no peak is published for it.
struct MatmulRate {
  DType dtype = DType::bf16;
  double ops_per_second = 0;
};

/// The inter-chip interconnect of the largest slice: a torus of `dims` chips
/// whose axes close into rings (wraparound links) when the slice's extent
/// along them is a multiple of `wraparound_multiple`.
struct IciTopology {
  std::vector<std::int32_t> dims;        ///< the largest slice, in chips per axis
  std::int32_t wraparound_multiple = 0;  ///< an axis of a multiple of this many chips is a ring
  double link_bytes_per_second = 0;      ///< peak: one direction of one link (the data sheet's)
  double hop_latency_seconds = 0;        ///< working: added per chip a transfer crosses
  /// Working: what one direction of one link carries in practice, the
  /// figure predict() moves bytes at (0: the peak).
  double working_link_bytes_per_second = 0;
  /// Working: a collective's fixed cost, added once to every call of a
  /// kernel that sends to another device (0: none known; calibrate() fits it).
  double collective_fixed_seconds = 0;

  /// The bandwidth the model uses: the working figure, or the peak without one.
  double link_rate() const noexcept {
    return working_link_bytes_per_second > 0 ? working_link_bytes_per_second : link_bytes_per_second;
  }
};

/// One TPU generation. Capacities are per TensorCore (what one kernel
/// instance sees), rates and HBM per device: a chip where one device is a
/// chip (v4 and v5p as megacore devices, v5e, v6e), one TensorCore's half of
/// the chip where each core is a device of its own (TPU7x,
/// devices_per_chip == 2).
struct Target {
  std::string name;
  std::int64_t vmem_bytes = 0;  ///< per TensorCore
  std::int64_t smem_bytes = 0;  ///< per TensorCore
  TileRule tile_32bit;          ///< 4-byte elements
  TileRule tile_16bit;          ///< 2-byte elements
  TileRule tile_8bit;           ///< 1-byte elements (and bool)
  /// Element types a kernel's buffers and values may hold.
  std::vector<DType> element_types;
  /// Element types the matrix unit multiplies, with their peak rates.
  std::vector<MatmulRate> matmul;
  /// The matrix unit's systolic array is mxu_dim x mxu_dim (a matmul's
  /// contracted and output-column extents are padded to it).
  std::int64_t mxu_dim = 0;
  std::int32_t cores_per_chip = 0;
  std::int64_t hbm_bytes = 0;        ///< per chip
  double hbm_bytes_per_second = 0;   ///< per chip
  double vector_ops_per_second = 0;  ///< per chip; 0: no public figure (not used by the checks)
  IciTopology ici;
  /// The compiler's default scoped Vmem limit per TensorCore: a kernel whose
  /// Vmem peak passes it does not compile unless it raises its limit
  /// (vmem_limit_bytes). 0: vmem_bytes.
  std::int64_t scoped_vmem_bytes = 0;
  /// This kernel's scoped Vmem limit, at most vmem_bytes (Pallas'
  /// `vmem_limit_bytes` compiler parameter; Kernel::vmem_limit_bytes sets
  /// it). 0: scoped_vmem_bytes.
  std::int64_t vmem_limit_bytes = 0;
  /// Devices a chip is: 1, or 2 where each TensorCore is a device (TPU7x).
  /// A chip's devices share its ICI links.
  std::int32_t devices_per_chip = 1;
  /// Working: a device's time to start one copy (0: none known; calibrate() fits it).
  double dma_issue_seconds = 0;
  /// Whether a copy may complete on a REGULAR semaphore, which rises by 1
  /// when it lands (v6e and later).
  bool regular_semaphore_copies = false;

  /// The Vmem a kernel may use: vmem_limit_bytes, else scoped_vmem_bytes, else vmem_bytes.
  std::int64_t vmem_limit() const noexcept {
    return vmem_limit_bytes > 0 ? vmem_limit_bytes : scoped_vmem_bytes > 0 ? scoped_vmem_bytes : vmem_bytes;
  }
  /// TensorCores of one device: a megacore device's cores (v4, v5p), else 1.
  std::int32_t cores_per_device() const noexcept {
    return devices_per_chip > 0 ? cores_per_chip / devices_per_chip : cores_per_chip;
  }

  /// The tiling rule for elements of type `t` (by their size; 8-byte types have none).
  const TileRule* tile(DType t) const noexcept {
    switch (size_of(t)) {
      case 4: return &tile_32bit;
      case 2: return &tile_16bit;
      case 1: return &tile_8bit;
      default: return nullptr;
    }
  }
  bool supports(DType t) const noexcept {
    for (DType d : element_types)
      if (d == t) return true;
    return false;
  }
  /// The matrix unit's entry for operands of type `t`, or null if it takes none.
  const MatmulRate* matmul_rate(DType t) const noexcept {
    for (const MatmulRate& m : matmul)
      if (m.dtype == t) return &m;
    return nullptr;
  }
  /// Chips in the largest slice.
  std::int64_t max_chips() const noexcept {
    std::int64_t n = ici.dims.empty() ? 0 : 1;
    for (std::int32_t d : ici.dims) n *= d;
    return n;
  }
  /// Devices in the largest slice.
  std::int64_t max_devices() const noexcept { return max_chips() * devices_per_chip; }
};

/// Throws refx::Error naming the first missing or impossible figure of `t`
/// ("refx: invalid Target \"v9\": vmem_bytes is 0; ...").
REFX_DECL void validate(const Target& t);

namespace targets {
/// TPU v4 (2 TensorCores per chip, one megacore device; 3D torus).
REFX_DECL const Target& v4();
/// TPU v5e (1 TensorCore per chip; 2D torus of up to 16x16).
REFX_DECL const Target& v5e();
/// TPU v5p (2 TensorCores per chip, one megacore device; 3D torus).
REFX_DECL const Target& v5p();
/// TPU v6e, Trillium (1 TensorCore per chip; 2D torus of up to 16x16).
REFX_DECL const Target& v6e();
/// TPU7x, Ironwood (2 TensorCores per chip, each its own device; 3D torus
/// of 4x4x4 cubes).
REFX_DECL const Target& tpu7x();
/// Every shipped generation, oldest first.
REFX_DECL std::vector<const Target*> all();
}  // namespace targets

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/target/detail/shipped.hpp>
#endif
