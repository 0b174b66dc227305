#pragma once
// The definitions of passes/target_checks.hpp, included at its end in
// REFX_DEFINITIONS builds (docs/targets.md states the rules they implement).

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/ir/primitives/handles.hpp>
#include <refx/ir/printer.hpp>

namespace refx {

namespace detail {

inline std::string typed_shape(DType d, const Shape& s) { return fmt::format("{}{}", d, s); }

/// The line of value `v`: its producer's, the op owning the block it is a
/// parameter of, or the kernel's.
inline SourceLoc value_loc(const Graph& g, ValueId v, SourceLoc kernel_loc) {
  const ValueInfo& info = g.value(v);
  if (info.producer != no_id) return g.op(info.producer).loc;
  const OpId owner = g.block(info.block).owner;
  return owner != no_id ? g.op(owner).loc : kernel_loc;
}

/// The bytes a buffer of `type` takes in `space` on `t`: Vmem pads the last
/// two extents to whole tiles (the last one alone for rank 1), Smem holds
/// 32-bit words.
inline std::int64_t padded_bytes(const ValueType& type, const Target& t) {
  const std::int64_t elem = static_cast<std::int64_t>(size_of(type.dtype));
  const Shape& s = type.shape;
  if (type.space == MemorySpace::smem) return s.num_elements() * std::max<std::int64_t>(elem, 4);
  const TileRule* tile = t.tile(type.dtype);
  if (tile == nullptr || s.rank() == 0) return s.num_elements() * elem;
  const auto round_up = [](std::int64_t n, std::int64_t m) { return (n + m - 1) / m * m; };
  std::int64_t n = round_up(s[s.rank() - 1], tile->minor);
  if (s.rank() >= 2) n *= round_up(s[s.rank() - 2], tile->second_minor);
  for (std::size_t d = 0; d + 2 < s.rank(); ++d) n *= s[d];
  return n * elem;
}

/// The most Vmem / Smem live at once inside a block, and the buffers then live.
struct Peak {
  std::int64_t bytes = 0;
  std::vector<ValueId> buffers;
  SourceLoc loc;  ///< the innermost scope holding them
};

class FootprintWalk {
 public:
  FootprintWalk(const Graph& g, const Target& t, MemorySpace space) : g_(g), t_(t), space_(space) {}

  bool counts(ValueId v) const {
    const ValueType& type = g_.type(v);
    return type.is_ref() && !type.is_semaphore() && type.space == space_;
  }
  std::int64_t bytes(ValueId v) const { return padded_bytes(g_.type(v), t_); }

  Peak block(BlockId b) const {
    Peak best;
    for (OpId o : g_.block(b).ops) {
      const Op& op = g_.op(o);
      for (BlockId body : g_.bodies(op)) {
        Peak p = block(body);
        for (ValueId v : g_.block(body).params)
          if (counts(v)) {
            p.bytes += bytes(v);
            p.buffers.push_back(v);
          }
        if (!p.buffers.empty() && !p.loc.known()) p.loc = op.loc;
        if (p.bytes > best.bytes) best = std::move(p);
      }
    }
    return best;
  }

 private:
  const Graph& g_;
  const Target& t_;
  MemorySpace space_;
};

inline void check_capacity(const Graph& g, const Target& t, MemorySpace space, SourceLoc kernel_loc, TargetReport& r) {
  const FootprintWalk walk(g, t, space);
  Peak peak = walk.block(0);
  // Kernel operands and allocate() live for the whole kernel.
  for (ValueId v : g.params())
    if (walk.counts(v)) {
      peak.bytes += walk.bytes(v);
      peak.buffers.push_back(v);
    }
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim != &prim::allocate) continue;
    for (ValueId v : g.outputs(op))
      if (walk.counts(v)) {
        peak.bytes += walk.bytes(v);
        peak.buffers.push_back(v);
      }
  }
  const std::int64_t physical = space == MemorySpace::vmem ? t.vmem_bytes : t.smem_bytes;
  // Vmem: the compiler refuses at the scoped limit (the kernel's, or the target's default).
  const std::int64_t capacity = space == MemorySpace::vmem ? std::min(t.vmem_limit(), physical) : physical;
  if (space == MemorySpace::vmem) {
    r.vmem_peak_bytes = peak.bytes;
    r.vmem_limit_bytes = capacity;
  } else {
    r.smem_peak_bytes = peak.bytes;
  }
  if (peak.bytes <= capacity) return;
  std::sort(peak.buffers.begin(), peak.buffers.end(),
            [&](ValueId a, ValueId b) { return walk.bytes(a) > walk.bytes(b); });
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < peak.buffers.size() && i < 4; ++i) {
    const ValueId v = peak.buffers[i];
    parts.push_back(fmt::format("{} ({}, at {})", typed_shape(g.type(v).dtype, g.type(v).shape),
                                human_bytes(walk.bytes(v)), value_loc(g, v, kernel_loc)));
  }
  if (peak.buffers.size() > 4) parts.push_back(fmt::format("{} more", peak.buffers.size() - 4));
  const SourceLoc loc = peak.loc.known() ? peak.loc : kernel_loc;
  // Blocks and slots are Vmem's; Smem holds the kernel's Smem operands
  // (pipeline_kernel's scalar operands: page tables, offsets) whole.
  const auto is_param = [&](ValueId v) {
    const auto params = g.params();
    return std::find(params.begin(), params.end(), v) != params.end();
  };
  const char* advice = "use smaller blocks, fewer slots (BlockSpec::buffered) or end scratch scopes earlier";
  if (space == MemorySpace::smem)
    advice = std::any_of(peak.buffers.begin(), peak.buffers.end(), is_param)
                 ? "a Smem operand (a scalar operand, such as a page table) is held whole: pass a smaller one (split "
                   "the table over several kernel calls), or keep it in Hbm and copy the entries a step needs into "
                   "a Smem scratch"
                 : "use smaller Smem scratch buffers or end scratch scopes earlier";
  TargetViolation v{TargetViolation::Rule::capacity, loc, {}, peak.bytes, capacity};
  if (capacity < physical) {
    const bool own = t.vmem_limit_bytes > 0;
    v.message = target_message(
        loc,
        hint("the largest live then: {}; {}, or raise the kernel's limit with .vmem_limit_bytes(n) (Pallas' "
             "vmem_limit_bytes), up to the TensorCore's {}",
             fmt::join(parts, ", "), advice, human_bytes(physical)),
        "the buffers live at once in Vmem need {} bytes ({}), more than the scoped Vmem limit of {} bytes ({}) of "
        "one {} TensorCore ({})",
        peak.bytes, human_bytes(peak.bytes), capacity, human_bytes(capacity), t.name,
        own ? "the kernel's vmem_limit_bytes" : "the compiler's default");
  } else {
    v.message = target_message(loc, hint("the largest live then: {}; {}", fmt::join(parts, ", "), advice),
                               "the buffers live at once in {} need {} bytes ({}), more than the {} bytes ({}) of "
                               "one {} TensorCore",
                               space, peak.bytes, human_bytes(peak.bytes), capacity, human_bytes(capacity), t.name);
  }
  r.violations.push_back(std::move(v));
}

/// The name of an Hbm array in a message: "operand 2" for a kernel parameter.
inline std::string array_name(const Graph& g, ValueId ref) {
  const auto params = g.params();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i] == ref) return fmt::format("operand {}", i);
  if (const auto n = g.name(ref); !n.empty()) return fmt::format("'{}'", n);
  return "an Hbm buffer";
}

inline void check_block(const Graph& g, const Target& t, ViewId vmem, ViewId hbm, SourceLoc loc, TargetReport& r) {
  const ValueType& window = g.type(g.view(vmem).ref);
  const Shape& array = g.type(g.view(hbm).ref).shape;
  // The block: the copied view's dimensions, at the full extent of the
  // buffer (a pipeline's partial last block still sits in a whole slot).
  Shape block;
  const auto dims = g.dims(g.view(vmem));
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (!dims[d].squeezed) block.push_back(window.shape[d]);
  const TileRule* tile = t.tile(window.dtype);
  if (tile == nullptr || block.rank() == 0 || array.rank() < block.rank()) return;
  const std::string what = typed_shape(window.dtype, block), whose = array_name(g, g.view(hbm).ref);
  const std::int64_t b0 = block[block.rank() - 1], a0 = array[array.rank() - 1];
  if (block.rank() == 1) {
    // Pallas' rank-1 rule: the array's extent, a multiple of a whole vreg
    // (sublanes x lanes), or a power of two of at least one packed row.
    const std::int64_t chunk = t.tile_32bit.second_minor * t.tile_32bit.minor;
    const std::int64_t least =
        tile->minor * std::max<std::int64_t>(1, 4 / static_cast<std::int64_t>(size_of(window.dtype)));
    if (b0 == a0 || b0 % chunk == 0 || (b0 >= least && (b0 & (b0 - 1)) == 0)) return;
    r.violations.push_back(
        {TargetViolation::Rule::tiling, loc,
         target_message(
             loc,
             hint("make the block the whole array, a multiple of {} elements, or a power of 2 of at least {}", chunk,
                  least),
             "the rank-1 Vmem block {} of {} breaks the tiling rule of {}: its extent {} is not the "
             "array's {}, not a multiple of {} and not a power of 2 of at least {}",
             what, whose, t.name, b0, a0, chunk, least)});
    return;
  }
  const std::int64_t b1 = block[block.rank() - 2], a1 = array[array.rank() - 2];
  const auto breaks = [&](std::string_view which, std::int64_t b, std::int64_t a, std::int64_t m) {
    if (b == a || b % m == 0) return false;
    r.violations.push_back(
        {TargetViolation::Rule::tiling, loc,
         target_message(loc,
                        hint("use block extents that are multiples of ({}, {}) or span the array's dimension",
                             tile->second_minor, tile->minor),
                        "the Vmem block {} of {} breaks the ({}, {}) tiling rule of {}: its {} dimension {} is not a "
                        "multiple of {} and not the array's {}",
                        what, whose, tile->second_minor, tile->minor, t.name, which, b, m, a)});
    return true;
  };
  if (!breaks("second-to-last", b1, a1, tile->second_minor)) breaks("last", b0, a0, tile->minor);
}

inline void check_tiling(const Graph& g, const Target& t, TargetReport& r) {
  std::set<std::pair<ValueId, ValueId>> seen;  // (Vmem buffer, Hbm array): one report each
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim != &prim::dma_start) continue;
    const ViewId src = g.views(op)[0], dst = g.views(op)[1];
    const MemorySpace s = g.type(g.view(src).ref).space, d = g.type(g.view(dst).ref).space;
    ViewId vmem = no_id, hbm = no_id;
    if (s == MemorySpace::hbm && d == MemorySpace::vmem) vmem = dst, hbm = src;
    else if (s == MemorySpace::vmem && d == MemorySpace::hbm) vmem = src, hbm = dst;
    else continue;
    if (seen.insert({g.view(vmem).ref, g.view(hbm).ref}).second) check_block(g, t, vmem, hbm, op.loc, r);
  }
}

inline std::string type_list(const std::vector<DType>& ts) {
  std::vector<std::string> names;
  for (DType d : ts) names.emplace_back(name_of(d));
  return fmt::format("{}", fmt::join(names, ", "));
}

inline void check_element_types(const Graph& g, const Target& t, SourceLoc kernel_loc, TargetReport& r) {
  std::set<std::tuple<DType, const char*, std::uint32_t>> seen;  // one report per type and line
  for (std::size_t i = 0; i < g.num_values(); ++i) {
    const auto v = static_cast<ValueId>(i);
    const ValueType& type = g.type(v);
    if (type.is_semaphore() || t.supports(type.dtype)) continue;
    if (!type.is_ref() && type.shape.rank() == 0) continue;  // scalars live in the scalar unit's registers
    const SourceLoc loc = value_loc(g, v, kernel_loc);
    if (!seen.insert({type.dtype, loc.file, loc.line}).second) continue;
    std::string what = type.is_ref() ? fmt::format("a {} Ref {}", type.space, typed_shape(type.dtype, type.shape))
                                     : fmt::format("a value {}", typed_shape(type.dtype, type.shape));
    const auto params = g.params();
    if (const auto p = std::find(params.begin(), params.end(), v); p != params.end())
      what = fmt::format("operand {}, {}", p - params.begin(), what);
    r.violations.push_back({TargetViolation::Rule::element_type, loc,
                            target_message(loc, hint("use one of {}", type_list(t.element_types)),
                                           "element type {} is not supported on {} ({})", type.dtype, t.name, what)});
  }
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim != &prim::dot || op.in_count < 2) continue;
    for (std::size_t k = 0; k < 2; ++k) {
      const DType d = g.type(g.inputs(op)[k]).dtype;
      if (t.matmul_rate(d) != nullptr) continue;
      std::vector<DType> taken;
      for (const MatmulRate& m : t.matmul) taken.push_back(m.dtype);
      r.violations.push_back(
          {TargetViolation::Rule::matmul_type, op.loc,
           target_message(op.loc, hint("cast the operands to one of {}", type_list(taken)),
                          "dot operand {} of type {} is not taken by the matrix unit of {}", k, d, t.name)});
      break;
    }
  }
}

/// Copies that complete on a REGULAR semaphore, where the target's DMA
/// engine only counts bytes into DMA semaphores: one report per line.
inline void check_copy_semaphores(const Graph& g, const Target& t, TargetReport& r) {
  if (t.regular_semaphore_copies) return;
  std::set<std::pair<const char*, std::uint32_t>> seen;
  for (std::size_t o = 0; o < g.num_ops(); ++o) {
    const Op& op = g.op(static_cast<OpId>(o));
    if (op.prim != &prim::dma_start) continue;
    const auto views = g.views(op);
    for (std::size_t v = 2; v < views.size(); ++v) {
      const ValueId sem = g.view(views[v]).ref;
      if (g.type(sem).semaphore != SemaphoreKind::regular || !seen.insert({op.loc.file, op.loc.line}).second) continue;
      r.violations.push_back(
          {TargetViolation::Rule::semaphore, op.loc,
           target_message(op.loc, hint("complete the copy on a DMA semaphore and wait() on the copy"),
                          "the copy completes on {}, but {}'s copies complete on DMA semaphores "
                          "only (REGULAR completion is v6e and later)",
                          semaphore_name(g, sem), t.name)});
    }
  }
}

/// Can mesh axes of `sizes` (from `i` on) be laid out on a torus of `dims`
/// chips per axis, `used` of them taken? A mesh axis may span several torus
/// axes, a factor on each; the factors along one torus axis multiply to at
/// most its extent.
inline bool lay_out(const std::vector<std::int64_t>& sizes, std::size_t i, const std::vector<std::int64_t>& dims,
                    std::vector<std::int64_t>& used) {
  if (i == sizes.size()) return true;
  const auto split = [&](auto& self, std::int64_t rest, std::size_t d) -> bool {
    if (rest == 1) return lay_out(sizes, i + 1, dims, used);
    if (d == dims.size()) return false;
    for (std::int64_t f = std::min(rest, dims[d] / used[d]); f >= 1; --f) {
      if (rest % f != 0) continue;
      used[d] *= f;
      const bool ok = self(self, rest / f, d + 1);
      used[d] /= f;
      if (ok) return true;
    }
    return false;
  };
  return split(split, sizes[i], 0);
}

inline std::string torus_shape(const Target& t) { return fmt::format("{}", fmt::join(t.ici.dims, "x")); }

inline void check_mesh(const Mesh& mesh, const Target& t, SourceLoc kernel_loc, TargetReport& r) {
  if (mesh.cores() > t.cores_per_device()) {
    r.violations.push_back(
        {TargetViolation::Rule::mesh, kernel_loc,
         target_message(kernel_loc,
                        hint("{}", t.cores_per_device() == 1 && t.cores_per_chip > 1
                                       ? "each of its TensorCores is a device of its own: give the mesh twice the "
                                         "devices instead of .with_cores(2)"
                                       : "compile for one core per device (no .with_cores), or for v4 / v5p"),
                        "the mesh {} runs {} cores per device, and a {} device has {} TensorCore{}", mesh.describe(),
                        mesh.cores(), t.name, t.cores_per_device(), t.cores_per_device() == 1 ? "" : "s")});
  }
  const std::int64_t devices = t.max_devices();
  if (mesh.size() > devices) {
    r.violations.push_back(
        {TargetViolation::Rule::mesh, kernel_loc,
         target_message(kernel_loc,
                        hint("use a mesh of at most {} devices ({} device{} per chip)", devices, t.devices_per_chip,
                             t.devices_per_chip == 1 ? "" : "s"),
                        "the mesh {} has {} devices, more than the {} of the largest {} slice ({} chips)",
                        mesh.describe(), mesh.size(), devices, t.name, torus_shape(t))});
    return;
  }
  std::vector<std::int64_t> sizes, dims(t.ici.dims.begin(), t.ici.dims.end()), used(dims.size(), 1);
  // A chip's devices (TPU7x: its two TensorCores) take one more factor, of devices_per_chip.
  if (t.devices_per_chip > 1) {
    dims.push_back(t.devices_per_chip);
    used.push_back(1);
  }
  for (const Mesh::Axis& a : mesh.axes()) sizes.push_back(a.size);
  std::sort(sizes.rbegin(), sizes.rend());  // the largest axes first: fewest dead ends
  if (lay_out(sizes, 0, dims, used)) return;
  r.violations.push_back(
      {TargetViolation::Rule::mesh, kernel_loc,
       target_message(
           kernel_loc,
           hint("split each mesh axis into factors, at most one per torus axis, whose products along each torus "
                "axis stay within its extent"),
           "the mesh {} does not lay out on the {} torus of {}: its axes cannot be split into factors "
           "of the torus axes",
           mesh.describe(), torus_shape(t), t.name)});
}

}  // namespace detail

REFX_DECL std::string TargetReport::to_string() const {
  if (target.empty()) return {};
  std::string s;
  for (const TargetViolation& v : violations) s += v.message + "\n";
  s += fmt::format("{}: {} violation(s); Vmem peak {} bytes ({}) of a limit of {}, Smem peak {} bytes ({})\n", target,
                   violations.size(), vmem_peak_bytes, detail::human_bytes(vmem_peak_bytes),
                   detail::human_bytes(vmem_limit_bytes), smem_peak_bytes, detail::human_bytes(smem_peak_bytes));
  return s;
}

REFX_DECL TargetReport passes::check_target(const Graph& g, const Mesh& mesh, const Target& t, SourceLoc kernel_loc) {
  TargetReport r;
  r.target = t.name;
  detail::check_mesh(mesh, t, kernel_loc, r);
  detail::check_element_types(g, t, kernel_loc, r);
  detail::check_copy_semaphores(g, t, r);
  detail::check_tiling(g, t, r);
  detail::check_capacity(g, t, MemorySpace::vmem, kernel_loc, r);
  detail::check_capacity(g, t, MemorySpace::smem, kernel_loc, r);
  return r;
}

REFX_DECL TargetReport detail::check_for_target(const Graph& g, const Mesh& mesh, const Target& t, TargetMode mode,
                                                SourceLoc kernel_loc) {
  validate(t);
  TargetReport r = passes::check_target(g, mesh, t, kernel_loc);
  if (mode == TargetMode::error && !r.ok()) throw TraceError(r.violations.front().message);
  return r;
}

}  // namespace refx
