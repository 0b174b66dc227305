#pragma once
// A Mesh names device axes and their sizes, row-major: {{"y", 2}, {"x", 4}}
// has 8 devices and device (y, x) has logical id y * 4 + x. Each device has
// one core unless with_cores(C) says otherwise (C = 2 models a TPU megacore:
// docs/tutorial.md, "Cores per device").

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/config.hpp>
#include <refx/core/error.hpp>

namespace refx {

namespace detail {
/// The axis name under which the runtime answers axis_index with the core
/// (core_index() is traced as axis_index of it); not a name a Mesh accepts.
inline constexpr std::string_view core_axis_name = "refx.core";
}  // namespace detail

class Mesh {
 public:
  struct Axis {
    std::string name;
    std::int32_t size;
  };

  Mesh(std::initializer_list<std::pair<std::string, std::int32_t>> axes);
  explicit Mesh(std::vector<Axis> axes) : axes_(std::move(axes)) { validate(); }

  std::size_t num_axes() const noexcept { return axes_.size(); }
  const std::vector<Axis>& axes() const noexcept { return axes_; }
  std::int32_t size() const noexcept {
    std::int32_t n = 1;
    for (const Axis& a : axes_) n *= a.size;
    return n;
  }
  /// Position of the named axis; throws naming the mesh's axes if unknown.
  std::size_t axis(std::string_view name) const;
  std::int32_t axis_size(std::string_view name) const { return axes_[axis(name)].size; }
  /// Row-major stride of an axis in logical ids.
  std::int32_t stride(std::size_t axis) const {
    std::int32_t s = 1;
    for (std::size_t i = axis + 1; i < axes_.size(); ++i) s *= axes_[i].size;
    return s;
  }
  /// Coordinate of logical device `id` along `axis`.
  std::int32_t coord(std::int32_t id, std::size_t axis) const { return (id / stride(axis)) % axes_[axis].size; }

  /// The most cores a device may have: each core is an execution lane of
  /// the runtime with its own scratch and state (the runtime's limit, not a
  /// TPU's: megacore chips have 2).
  static constexpr std::int32_t max_cores = 16;
  /// The same mesh whose every device has `cores` cores (1 to max_cores).
  Mesh with_cores(std::int32_t cores) const;
  /// Cores per device (1 unless with_cores said otherwise).
  std::int32_t cores() const noexcept { return cores_; }
  /// Execution lanes: devices times cores; lane = device * cores() + core.
  std::int32_t lanes() const noexcept { return size() * cores_; }

  /// "device 3", or "device 1 core 0" on a mesh with several cores per device.
  std::string describe_lane(std::int32_t lane) const;

  std::string describe() const;
  friend bool operator==(const Mesh& a, const Mesh& b) {
    if (a.axes_.size() != b.axes_.size() || a.cores_ != b.cores_) return false;
    for (std::size_t i = 0; i < a.axes_.size(); ++i)
      if (a.axes_[i].name != b.axes_[i].name || a.axes_[i].size != b.axes_[i].size) return false;
    return true;
  }

 private:
  void validate() const;
  std::vector<Axis> axes_;
  std::int32_t cores_ = 1;
};

#if REFX_DEFINITIONS
REFX_DECL Mesh::Mesh(std::initializer_list<std::pair<std::string, std::int32_t>> axes) {
  for (const auto& [n, s] : axes) axes_.push_back(Axis{n, s});
  validate();
}

REFX_DECL std::size_t Mesh::axis(std::string_view name) const {
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return i;
  throw Error(fmt::format("refx: the mesh has no axis \"{}\" (its axes: {})", name, describe()));
}

REFX_DECL std::string Mesh::describe() const {
  std::vector<std::string> parts;
  for (const Axis& a : axes_) parts.push_back(fmt::format("{}={}", a.name, a.size));
  if (cores_ > 1) return fmt::format("{{{}}} with {} cores per device", fmt::join(parts, ", "), cores_);
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

REFX_DECL std::string Mesh::describe_lane(std::int32_t lane) const {
  if (cores_ == 1) return fmt::format("device {}", lane);
  return fmt::format("device {} core {}", lane / cores_, lane % cores_);
}

REFX_DECL Mesh Mesh::with_cores(std::int32_t cores) const {
  if (cores < 1 || cores > max_cores)
    throw Error(fmt::format(
        "refx: Mesh::with_cores({}): a device has 1 to {} cores (each core is a lane of the runtime with its own "
        "scratch; megacore is 2)",
        cores, max_cores));
  if (static_cast<std::int64_t>(size()) * cores > std::numeric_limits<std::int32_t>::max())
    throw Error(fmt::format("refx: the mesh {} with {} cores per device has more than {} lanes", describe(), cores,
                            std::numeric_limits<std::int32_t>::max()));
  Mesh m = *this;
  m.cores_ = cores;
  return m;
}

REFX_DECL void Mesh::validate() const {
  if (axes_.empty()) throw Error("refx: a Mesh needs at least one axis, e.g. Mesh{{\"x\", 4}}");
  std::int64_t devices = 1;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].size < 1)
      throw Error(fmt::format("refx: mesh axis \"{}\" has size {}; sizes must be >= 1", axes_[i].name, axes_[i].size));
    if (axes_[i].name.empty()) throw Error("refx: mesh axes need names");
    if (axes_[i].name == detail::core_axis_name)
      throw Error(
          fmt::format("refx: \"{}\" is reserved for the cores of a device (Mesh::with_cores)", detail::core_axis_name));
    for (std::size_t j = 0; j < i; ++j)
      if (axes_[j].name == axes_[i].name)
        throw Error(fmt::format("refx: mesh axis \"{}\" appears twice", axes_[i].name));
    devices *= axes_[i].size;  // each size is below 2^31: no overflow before the check below
    if (devices > std::numeric_limits<std::int32_t>::max())
      throw Error(fmt::format("refx: the mesh {} has more than {} devices (device ids are 32-bit)", describe(),
                              std::numeric_limits<std::int32_t>::max()));
  }
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
