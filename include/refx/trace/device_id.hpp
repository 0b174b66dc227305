#pragma once
// Which device a remote copy or signal targets:
//   DeviceId(k)                        LOGICAL: flat index k
//   DeviceId::mesh({y, x})             MESH: one coordinate per mesh axis
//   DeviceId::named({{"x", i}})        named: missing axes are the caller's own
// Each resolves, while tracing for a mesh, to a traced logical id.

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <refx/trace/value.hpp>

namespace refx {

class DeviceId {
 public:
  template <class N>
    requires detail::integer_lossless_v<N, std::int32_t>
  DeviceId(N logical)
      : kind_(Kind::logical), coords_{Scalar<std::int32_t>(static_cast<std::int32_t>(logical))} {}  // NOLINT: implicit
  /// An int or std::int64_t device id (a `constexpr std::int64_t kPeer`):
  /// checked while tracing, a TraceError naming the line when it does not fit
  /// 32 bits (detail::integer_range_checked_v).
  template <class N>
    requires(detail::integer_range_checked_v<N, std::int32_t> && !detail::integer_lossless_v<N, std::int32_t>)
  DeviceId(N logical, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit
      : kind_(Kind::logical), coords_{Scalar<std::int32_t>(logical, loc)} {}
  /// A floating-point, bool, unsigned 64-bit or unsigned 32-bit device id:
  /// rejected (it would be truncated or may not fit, and the copy would go to
  /// a device not named).
  template <class N>
    requires(std::is_arithmetic_v<N> && !detail::integer_lossless_v<N, std::int32_t> &&
             !detail::integer_range_checked_v<N, std::int32_t>)
  DeviceId(N) {  // NOLINT: implicit, to be rejected
    if constexpr (std::is_integral_v<N> && std::is_unsigned_v<N> && sizeof(N) == sizeof(std::int32_t)) {
      static_assert(detail::dependent_false<N>,
                    "refx: a device id is a signed 32-bit integer (std::int32_t or a Scalar<std::int32_t>); an "
                    "unsigned 32-bit one may not fit (a value above 2^31 - 1 would become a negative id); convert it "
                    "explicitly with static_cast<std::int32_t>(...)");
    } else {
      static_assert(detail::dependent_false<N>,
                    "refx: a device id is a 32-bit integer (std::int32_t or a Scalar<std::int32_t>); a floating-point, "
                    "bool or unsigned 64-bit number would be truncated or may not fit; convert it explicitly with "
                    "static_cast<std::int32_t>(...)");
    }
  }
  DeviceId(const Scalar<std::int32_t>& logical) : kind_(Kind::logical), coords_{logical} {}  // NOLINT: implicit

  /// One coordinate per mesh axis, in the mesh's axis order.
  static DeviceId mesh(std::initializer_list<Scalar<std::int32_t>> coords) {
    DeviceId d;
    d.kind_ = Kind::mesh;
    d.coords_.assign(coords.begin(), coords.end());
    return d;
  }
  /// Coordinates by axis name; unnamed axes take this device's own index.
  static DeviceId named(std::initializer_list<std::pair<std::string, Scalar<std::int32_t>>> axes) {
    DeviceId d;
    d.kind_ = Kind::named;
    for (const auto& [n, c] : axes) {
      d.names_.push_back(n);
      d.coords_.push_back(c);
    }
    return d;
  }

  /// The logical device id as a traced i32 scalar.
  ValueId resolve(detail::Tracer& t, SourceLoc loc) const;

 private:
  enum class Kind { logical, mesh, named };
  DeviceId() = default;
  static std::size_t axis_of(const Mesh& m, const std::string& n, SourceLoc loc);
  /// A coordinate known while tracing must lie on its axis (a traced one
  /// is not checked: only the device id it makes is, at run time).
  static void check_coordinate(const detail::Tracer& t, const Mesh& m, std::size_t axis, const Scalar<std::int32_t>& c,
                               SourceLoc loc);

  Kind kind_ = Kind::logical;
  std::vector<Scalar<std::int32_t>> coords_;
  std::vector<std::string> names_;
};

#if REFX_DEFINITIONS
REFX_DECL ValueId DeviceId::resolve(detail::Tracer& t, SourceLoc loc) const {
  if (kind_ == Kind::logical) return coords_[0].id();
  const Mesh* mesh = t.mesh();
  if (mesh == nullptr) trace_error(loc, "a MESH or named device id needs a mesh; compile the kernel for one");
  Scalar<std::int32_t> id = 0;
  if (kind_ == Kind::mesh) {
    if (coords_.size() != mesh->num_axes())
      trace_error(loc, "the device id has {} coordinates but the mesh {} has {} axes", coords_.size(), mesh->describe(),
                  mesh->num_axes());
    for (std::size_t a = 0; a < coords_.size(); ++a) {
      check_coordinate(t, *mesh, a, coords_[a], loc);
      id = id + coords_[a] * mesh->stride(a);
    }
    return id.id();
  }
  for (const std::string& n : names_) (void)axis_of(*mesh, n, loc);
  for (std::size_t a = 0; a < mesh->num_axes(); ++a) {
    const std::string& axis = mesh->axes()[a].name;
    const auto it = std::find(names_.begin(), names_.end(), axis);
    const Scalar<std::int32_t> c = it != names_.end() ? coords_[static_cast<std::size_t>(it - names_.begin())]
                                                      : detail::axis_scalar(prim::axis_index, axis, loc);
    check_coordinate(t, *mesh, a, c, loc);
    id = id + c * mesh->stride(a);
  }
  return id.id();
}

REFX_DECL void DeviceId::check_coordinate(const detail::Tracer& t, const Mesh& m, std::size_t axis,
                                          const Scalar<std::int32_t>& c, SourceLoc loc) {
  const Graph& g = t.graph();
  if (c.id() < 0 || static_cast<std::size_t>(c.id()) >= g.num_values()) return;  // reported where it is used
  const ValueInfo& info = g.value(c.id());
  if (info.producer == no_id || g.op(info.producer).prim != &prim::constant) return;
  const std::int64_t k = prim::constant_attrs(g, g.op(info.producer)).bits;
  const Mesh::Axis& a = m.axes()[axis];
  if (k < 0 || k >= a.size)
    trace_error(loc, "the device id's coordinate {} on axis \"{}\" is outside that axis (size {}) of the mesh {}", k,
                a.name, a.size, m.describe());
}

REFX_DECL std::size_t DeviceId::axis_of(const Mesh& m, const std::string& n, SourceLoc loc) {
  for (std::size_t a = 0; a < m.num_axes(); ++a)
    if (m.axes()[a].name == n) return a;
  trace_error(loc, "the device id names axis \"{}\" but the mesh is {}", n, m.describe());
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
