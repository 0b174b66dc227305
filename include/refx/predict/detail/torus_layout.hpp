#pragma once
// The definitions of predict.hpp's TorusLayout (docs/targets.md, "The mesh
// on the torus"): checking a layout against the mesh and the target, and
// each device's chip coordinates on the slice.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/core/error.hpp>
#include <refx/core/mesh.hpp>
#include <refx/target/target.hpp>

namespace refx::detail {

/// A checked layout: the slice's chips per torus axis, and per device its
/// coordinate on each torus axis.
struct PlacedMesh {
  std::vector<std::int32_t> slice;
  std::vector<std::vector<std::int32_t>> coords;  // [device][torus axis]
  std::vector<bool> ring;                         // per torus axis: wraparound links
  /// The chip's row-major index in the slice.
  std::int64_t chip(const std::vector<std::int32_t>& c) const {
    std::int64_t i = 0;
    for (std::size_t t = 0; t < slice.size(); ++t) i = i * slice[t] + c[t];
    return i;
  }
};

/// Throws unless mesh axis i fits torus axis i of `t` (the layout predict
/// takes when it is given none).
inline void check_mesh_on_torus(const Mesh& m, const Target& t) {
  std::string why;
  if (m.num_axes() > t.ici.dims.size())
    why = fmt::format("it has {} axes and the torus {}", m.num_axes(), t.ici.dims.size());
  for (std::size_t a = 0; why.empty() && a < m.num_axes(); ++a)
    if (m.axes()[a].size > t.ici.dims[a])
      why = fmt::format("axis '{}' has {} devices and torus axis {} has {} chips", m.axes()[a].name, m.axes()[a].size,
                        a, t.ici.dims[a]);
  if (!why.empty())
    throw Error(
        fmt::format("refx: predict: the mesh {} does not lay out on {}'s torus ({}) one mesh axis per torus axis: {}",
                    m.describe(), t.name, fmt::join(t.ici.dims, "x"), why));
}

/// The reason `l` cannot place mesh `m` on `t`'s torus, or empty.
inline std::string layout_problem(const Mesh& m, const Target& t, const TorusLayout& l,
                                  std::vector<std::int32_t>& slice) {
  const std::size_t rank = t.ici.dims.size();
  if (l.axes.size() != m.num_axes())
    return fmt::format("it places {} mesh axes and the mesh has {}", l.axes.size(), m.num_axes());
  std::vector<int> owner(rank, -1);
  for (std::size_t a = 0; a < l.axes.size(); ++a) {
    if (l.axes[a].empty() && m.axes()[a].size != 1)  // a mesh axis of one chip may run along none
      return fmt::format("mesh axis '{}' runs along no torus axis", m.axes()[a].name);
    for (std::int32_t x : l.axes[a]) {
      if (x < 0 || static_cast<std::size_t>(x) >= rank)
        return fmt::format("mesh axis '{}' names torus axis {}, and the torus has axes 0 to {}", m.axes()[a].name, x,
                           rank - 1);
      if (owner[static_cast<std::size_t>(x)] >= 0)
        return fmt::format("torus axis {} is named by mesh axes '{}' and '{}'", x,
                           m.axes()[static_cast<std::size_t>(owner[static_cast<std::size_t>(x)])].name,
                           m.axes()[a].name);
      owner[static_cast<std::size_t>(x)] = static_cast<int>(a);
    }
  }
  if (l.slice.empty()) {
    slice.assign(rank, 1);
    for (std::size_t a = 0; a < l.axes.size(); ++a) {
      if (l.axes[a].size() > 1)
        return fmt::format("mesh axis '{}' runs along torus axes {}: give the slice's extents", m.axes()[a].name,
                           fmt::join(l.axes[a], ", "));
      if (!l.axes[a].empty()) slice[static_cast<std::size_t>(l.axes[a][0])] = m.axes()[a].size;
    }
  } else {
    if (l.slice.size() != rank) return fmt::format("the slice has {} axes and the torus {}", l.slice.size(), rank);
    slice = l.slice;
  }
  for (std::size_t x = 0; x < rank; ++x) {
    if (slice[x] < 1 || slice[x] > t.ici.dims[x])
      return fmt::format("the slice has {} chips on torus axis {}, which has {}", slice[x], x, t.ici.dims[x]);
    if (owner[x] < 0 && slice[x] != 1)
      return fmt::format("the slice has {} chips on torus axis {}, which no mesh axis runs along", slice[x], x);
  }
  for (std::size_t a = 0; a < l.axes.size(); ++a) {
    std::int64_t chips = 1;
    for (std::int32_t x : l.axes[a]) chips *= slice[static_cast<std::size_t>(x)];
    if (chips != m.axes()[a].size)
      return fmt::format("mesh axis '{}' has {} devices and the slice {} chips along torus axes {}", m.axes()[a].name,
                         m.axes()[a].size, chips, fmt::join(l.axes[a], ", "));
  }
  return {};
}

/// Places mesh `m` on `t`'s torus as `l` says (an empty layout: mesh axis i
/// on torus axis i); throws refx::Error naming what is impossible.
inline PlacedMesh place_mesh(const Mesh& devices, const Target& t, const TorusLayout& l) {
  // Where a chip is several devices (TPU7x), the mesh's last axis pairs them:
  // coordinates c and c' of it share a chip when c / 2 == c' / 2 (an odd
  // last device has a chip to itself), and the layout places the mesh of chips.
  const std::int32_t per_chip = std::max(t.devices_per_chip, 1);
  std::vector<Mesh::Axis> chip_axes = devices.axes();
  chip_axes.back().size = (chip_axes.back().size + per_chip - 1) / per_chip;
  const Mesh m(chip_axes);
  TorusLayout layout = l;
  if (layout.axes.empty() && layout.slice.empty()) {
    check_mesh_on_torus(m, t);
    for (std::size_t a = 0; a < m.num_axes(); ++a) layout.axes.push_back({static_cast<std::int32_t>(a)});
  }
  PlacedMesh p;
  if (const std::string why = layout_problem(m, t, layout, p.slice); !why.empty())
    throw Error(fmt::format("refx: predict: the layout of mesh {} on {}'s torus ({}) is impossible: {}", m.describe(),
                            t.name, fmt::join(t.ici.dims, "x"), why));
  for (std::int32_t s : p.slice) p.ring.push_back(s % t.ici.wraparound_multiple == 0);
  p.coords.assign(static_cast<std::size_t>(devices.size()), std::vector<std::int32_t>(p.slice.size(), 0));
  for (std::int32_t d = 0; d < devices.size(); ++d)
    for (std::size_t a = 0; a < m.num_axes(); ++a) {
      std::int32_t c = devices.coord(d, a);
      if (a + 1 == m.num_axes()) c /= per_chip;
      const auto& axes = layout.axes[a];
      std::vector<std::int32_t> digits(axes.size());  // row-major, the major torus axis first
      for (std::size_t i = axes.size(); i-- > 0;) {
        const std::int32_t extent = p.slice[static_cast<std::size_t>(axes[i])];
        digits[i] = c % extent;
        c /= extent;
      }
      std::int64_t above = 0;  // the number the digits above digit i make
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const std::int32_t extent = p.slice[static_cast<std::size_t>(axes[i])];
        const std::int32_t digit = digits[i];
        p.coords[static_cast<std::size_t>(d)][static_cast<std::size_t>(axes[i])] =
            layout.serpentine && above % 2 == 1 ? extent - 1 - digit : digit;
        above = above * extent + digit;
      }
    }
  return p;
}

}  // namespace refx::detail
