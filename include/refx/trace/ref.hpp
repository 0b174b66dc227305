#pragma once
// Ref<T, extents<...>, Space>: a traced mutable array reference. The element
// type's constness is the access mode (Ref<const T> is read-only), and only
// the widening conversion Ref<T> -> Ref<const T> exists. `.at(...)` makes a
// view (reads nothing); load / store / accum record Read / Write / Accum.

#include <algorithm>
#include <array>
#include <span>
#include <tuple>

#include <refx/core/memory_space.hpp>
#include <refx/core/source_location.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/ir/view_access.hpp>
#include <refx/trace/value.hpp>

namespace refx {

/// A full slice of one dimension in `.at(...)`.
struct All {};
inline constexpr All all{};

/// A slice with a static size: `ds<128>(start)` keeps the extent in the type.
template <std::int64_t N>
struct FixedSlice {
  DynIndex start;
  std::int64_t stride = 1;
};
template <std::int64_t N>
constexpr FixedSlice<N> ds(std::int64_t start, std::int64_t stride = 1) {
  static_assert(N >= 0, "refx: ds<N> needs N >= 0");
  if (stride < 1) throw ArgumentError("refx: ds stride must be >= 1");
  return {DynIndex{start, -1}, stride};
}
template <std::int64_t N, std::integral I>
FixedSlice<N> ds(const Scalar<I>& start, std::int64_t stride = 1) {
  FixedSlice<N> s = ds<N>(0, stride);
  s.start = DynIndex{0, start.id()};
  return s;
}

namespace detail {
inline constexpr std::int64_t squeeze_dim = -2;
inline constexpr std::int64_t keep_dim = -3;
inline constexpr std::int64_t bad_index = -4;

template <class I>
inline constexpr std::int64_t index_kind = bad_index;
/// What view_extents uses for an index .at(...) rejects (so only that message shows).
template <class I>
inline constexpr std::int64_t extent_kind = index_kind<I> == bad_index ? dyn : index_kind<I>;
template <std::integral I>
inline constexpr std::int64_t index_kind<I> = squeeze_dim;
template <std::integral I>
inline constexpr std::int64_t index_kind<Value<I, extents<>>> = squeeze_dim;
template <>
inline constexpr std::int64_t index_kind<Slice> = dyn;
template <std::int64_t N>
inline constexpr std::int64_t index_kind<FixedSlice<N>> = N;
template <>
inline constexpr std::int64_t index_kind<All> = keep_dim;
/// ds<N> with N < 0 (reported by ds<N> itself).
template <class I>
inline constexpr bool negative_fixed_slice = false;
template <std::int64_t N>
inline constexpr bool negative_fixed_slice<FixedSlice<N>> = N < 0;

/// The static extents of `E` viewed through indices `I...`.
template <class E, class... I>
struct view_extents {
  struct Dims {
    std::array<std::int64_t, max_rank> d{};
    std::size_t n = 0;
  };
  static constexpr Dims dims = [] {
    Dims r;
    constexpr std::int64_t kinds[] = {extent_kind<std::remove_cvref_t<I>>..., 0};
    for (std::size_t i = 0; i < E::rank; ++i) {
      const std::int64_t k = i < sizeof...(I) ? kinds[i] : keep_dim;
      if (k == squeeze_dim) continue;
      r.d[r.n++] = k == keep_dim ? E::values[i] : k;
    }
    return r;
  }();
  template <std::size_t... J>
  static auto make(std::index_sequence<J...>) -> extents<dims.d[J]...>;
  using type = decltype(make(std::make_index_sequence<dims.n>{}));
};

template <class T, class E>
class StoreArg;

/// One index of `.at(...)`, type-erased.
struct IndexEntry {
  std::int64_t kind;  // squeeze_dim, keep_dim, or a size (dyn if the slice size is run-time)
  DynIndex start;
  std::int64_t size;
  std::int64_t stride;
};
template <class I>
IndexEntry index_entry(const I& i) {
  if constexpr (std::is_integral_v<I>) return {squeeze_dim, DynIndex{static_cast<std::int64_t>(i), -1}, 1, 1};
  else if constexpr (is_value_v<I>) return {squeeze_dim, DynIndex{0, i.id()}, 1, 1};
  else if constexpr (std::is_same_v<I, Slice>) return {dyn, i.start, i.size, i.stride};
  else if constexpr (std::is_same_v<I, All>) return {keep_dim, {}, 0, 1};
  else return {index_kind<I>, i.start, index_kind<I>, i.stride};
}
/// A view of `parent` through `entries`, in the coordinates of the base Ref.
ViewId make_view(ViewId parent, std::span<const IndexEntry> entries);
inline ViewId make_view(ViewId parent, std::initializer_list<IndexEntry> entries) {
  return make_view(parent, std::span<const IndexEntry>(entries.begin(), entries.size()));
}

/// A view presenting `parent`'s bytes as elements of `to`, with the extents
/// `reshape_to` (Ref::reshape) or, when null, the parent's extents with the
/// last one scaled by the ratio of the element sizes (Ref::bitcast).
ViewId reinterpret_view(ViewId parent, DType to, const Shape* reshape_to, SourceLoc loc);

/// The static extents of a bitcast from elements of `From` bytes to `To` bytes.
template <class E, std::size_t From, std::size_t To, class I = std::make_index_sequence<E::rank>>
struct bitcast_extents;
template <class E, std::size_t From, std::size_t To, std::size_t... I>
struct bitcast_extents<E, From, To, std::index_sequence<I...>> {
  static constexpr std::int64_t scaled(std::int64_t e) {
    return e == dyn ? dyn : e * static_cast<std::int64_t>(From) / static_cast<std::int64_t>(To);
  }
  using type = extents<(I + 1 == E::rank ? scaled(E::values[I]) : E::values[I])...>;
};

template <class E>
inline constexpr std::int64_t static_count = [] {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < E::rank; ++i) {
    if (E::values[i] == dyn) return dyn;
    n *= E::values[i];
  }
  return n;
}();
}  // namespace detail

namespace detail {
/// Whether Ref<T, E, Space> names a usable Ref; the ones that do not get the
/// specialization below, which reports the first thing wrong and has no
/// members (so nothing else about it fails to compile afterwards).
template <class T, class E, class Space>
inline constexpr bool ref_args_ok =
    !is_ref_v<T> && !is_value_v<T> && Element<T> && is_extents<E>::value && MemorySpaceTag<Space>;

/// Reports the first thing wrong with Ref<T, E, Space>'s arguments; true
/// (reported), so the static_assert that calls it adds no second error.
template <class T, class E, class Space>
constexpr bool report_ref_args() {
  if constexpr (is_ref_v<T>) {
    static_assert(!is_ref_v<T>, "refx: a Ref cannot hold Refs (no Ref of Refs); pass the inner Refs separately");
  } else if constexpr (is_value_v<T>) {
    static_assert(!is_value_v<T>, "refx: a Ref holds elements, not Values; write Ref<float, ...>, not Ref<Value<...>>");
  } else if constexpr (!Element<T>) {
    static_assert(Element<T>, "refx: a Ref's element type must be one of bool, i8, u8, i32, u32, i64, bf16, f16, f32, f64 (std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, refx::bf16, refx::f16, float, double)");
  } else if constexpr (!is_extents<E>::value) {
    static_assert(is_extents<E>::value, "refx: the second argument of Ref must be refx::extents<...>");
  } else {
    static_assert(MemorySpaceTag<Space>, "refx: the third argument of Ref must be a memory space: Hbm, Vmem or Smem");
  }
  return true;
}
}  // namespace detail

template <class T, class E = extents<>, class Space = Vmem>
class Ref : public detail::ref_base {
 public:
  using element_type = T;
  using value_type = std::remove_const_t<T>;
  using extents_type = E;
  using space_type = Space;
  static constexpr std::size_t rank = E::rank;
  static constexpr bool read_only = std::is_const_v<T>;
  static constexpr MemorySpace space = Space::value;

  Ref() = default;

  /// Read-write to read-only: the only conversion between access modes.
  operator Ref<const value_type, E, Space>() const requires(!read_only) {  // NOLINT: implicit widening on purpose
    return Ref<const value_type, E, Space>::from_view(view());
  }

  /// A view of a region: integers drop a dimension, `ds(...)` keeps it.
  template <class... I>
  auto at(const I&... idx) const {
    constexpr bool fits = sizeof...(I) <= rank;
    constexpr bool kinds = ((detail::index_kind<I> != detail::bad_index) && ...);
    static_assert(fits, "refx: more indices than the Ref's rank in .at(...)");
    static_assert(kinds,
                  "refx: .at(...) takes integers, integer Scalars, ds(start, size[, stride]), ds<N>(start) or refx::all");
    // ds<N> with N < 0 reported its own error: stop here, before extents<N>.
    constexpr bool sizes = (!detail::negative_fixed_slice<I> && ...);
    if constexpr (!fits || !kinds || !sizes) {
      return *this;  // not reached: a check above failed to compile
    } else {
      using NE = typename detail::view_extents<E, I...>::type;
      return Ref<T, NE, Space>::from_view(detail::make_view(view(), {detail::index_entry(idx)...}));
    }
  }

  /// The same bytes as elements of U, as Pallas' `ref.bitcast`: with
  /// sizeof(U) != sizeof(T) the last dimension scales by sizeof(T) /
  /// sizeof(U), and the view must be contiguous along it. Loads, stores and
  /// accumulations go through it; copies do not (copy the Refs themselves).
  template <class U>
  auto bitcast(refx::source_location loc = refx::source_location::current()) const {
    static_assert(Element<U> && !std::is_const_v<U>,
                  "refx: bitcast<U> takes an element type without const (a read-only Ref's view stays read-only)");
    using V = std::remove_const_t<U>;
    static_assert(!std::is_same_v<value_type, bool> && !std::is_same_v<V, bool>,
                  "refx: bitcast does not take bool elements (not every byte is a bool); bitcast u8 or i8 instead");
    constexpr std::size_t from = size_of(dtype_v<value_type>), to = size_of(dtype_v<V>);
    static_assert(from == to || rank > 0,
                  "refx: a bitcast to an element of another size scales the last dimension; a rank-0 Ref has none");
    if constexpr (from != to && rank > 0) {
      constexpr std::int64_t last = E::values[rank - 1];
      static_assert(last == dyn || (last * static_cast<std::int64_t>(from)) % static_cast<std::int64_t>(to) == 0,
                    "refx: bitcast to a wider element needs the last extent's bytes to be a multiple of the new "
                    "element's size");
    }
    using NE = typename detail::bitcast_extents<E, from, to>::type;
    using NT = std::conditional_t<read_only, const V, V>;
    return Ref<NT, NE, Space>::from_view(detail::reinterpret_view(view(), dtype_v<V>, nullptr, loc));
  }

  /// The same elements, in row-major order, with the static extents
  /// `Dims...` (Pallas' `ref.reshape`). The view must be contiguous (one
  /// dense run in its Ref), and the element count must stay the same. The
  /// result cannot be indexed further with `.at(...)`; index first.
  template <std::int64_t... Dims>
  Ref<T, extents<Dims...>, Space> reshape(refx::source_location loc = refx::source_location::current()) const {
    static_assert(((Dims != dyn) && ...), "refx: Ref::reshape<Dims...> takes static extents (no refx::dyn)");
    static_assert(detail::static_count<E> == dyn || detail::static_count<E> == (std::int64_t{1} * ... * Dims),
                  "refx: reshape must keep the element count; the target extents hold a different number of elements "
                  "than the Ref");
    const Shape to{Dims...};
    return Ref<T, extents<Dims...>, Space>::from_view(detail::reinterpret_view(view(), dtype_v<value_type>, &to, loc));
  }

  /// Reads the whole view into a Value.
  Value<value_type, E> load(refx::source_location loc = refx::source_location::current()) const {
    static_assert(space != MemorySpace::hbm,
                  "refx: compute cannot read an Hbm Ref; copy it to Vmem first (make_async_copy or sync_copy)");
    auto& t = detail::Tracer::current(loc);
    t.note(loc);
    const ViewId views[] = {view()};
    return detail::wrap<value_type, E>(t.bind1(prim::load, {}, views, {}, loc));
  }
  /// Overwrites the view with a Value of the same element type and shape (or a scalar).
  void store(detail::StoreArg<T, E> v) const { write(prim::store, v); }
  /// Adds a Value into the view: one Accum effect.
  void accum(detail::StoreArg<T, E> v) const { write(prim::accum, v); }
  void operator+=(detail::StoreArg<T, E> v) const { write(prim::accum, v); }
  /// `y = v` with a Value or number: a Ref is a handle, so this would not
  /// write its memory; rejected with the spelling that does.
  template <class V>
    requires(is_value_v<V> || is_number_v<V>)
  Ref& operator=(const V&) {
    static_assert(detail::dependent_false<V>,
                  "refx: `ref = value` does not write a Ref's memory (a Ref is a handle); write ref.store(value), or "
                  "ref += value to accumulate");
    return *this;
  }

  /// The traced view; checks that the handle belongs to the active trace.
  ViewId view() const {
    detail::Tracer::check_serial(trace_);
    return view_;
  }
  ValueId base() const { return detail::Tracer::current().graph().view(view()).ref; }
  Shape shape() const { return detail::Tracer::current().graph().view_shape(view()); }
  TypedShape<E> typed_shape() const { return {shape()}; }
  /// Names the Ref in printed graphs, DOT files and timelines.
  const Ref& name(std::string n) const {
    auto& g = detail::Tracer::current().graph();
    g.set_name(g.view(view()).ref, std::move(n));
    return *this;
  }

  static Ref from_view(ViewId v) {
    Ref r;
    r.view_ = v;
    r.trace_ = detail::Tracer::current_serial();
    return r;
  }

 private:
  void write(const Primitive& p, const detail::StoreArg<T, E>& v) const;

  ViewId view_ = no_id;
  std::uint64_t trace_ = 0;  // the trace that made it (Tracer::serial)
};

/// A Ref with arguments that name no Ref (an element type that is not one,
/// not extents<...>, not a memory space): one refx: error, and no members
/// whose declarations would fail after it.
template <class T, class E, class Space>
  requires(!detail::ref_args_ok<T, E, Space>)
class Ref<T, E, Space> : public detail::ref_base {
  static_assert(detail::report_ref_args<T, E, Space>());
};

namespace detail {
/// The argument of store / accum / +=: carries the caller's source line and
/// checks, where the types can tell, that the store is well-formed.
template <class T, class E>
class StoreArg {
 public:
  template <class U, class F>
  StoreArg(const Value<U, F>& v, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit
      : loc_(loc), scalar_(F::rank == 0) {
    if (Tracer* t = Tracer::current_slot()) t->note(loc_);  // for the message if v is from another trace
    id_ = v.id();
    static_assert(!std::is_const_v<T>, "refx: cannot write through a read-only Ref<const T>; take a Ref<T> to write");
    static_assert(std::is_same_v<U, std::remove_const_t<T>>,
                  "refx: the stored Value's element type differs from the Ref's (no implicit narrowing); convert "
                  "it with refx::cast<T>(value)");
    static_assert(F::rank == E::rank || F::rank == 0, "refx: the stored Value's rank differs from the Ref view's rank");
    if constexpr (F::rank == E::rank && F::rank != 0) {
      static_assert(extents_compatible<E, F>, "refx: the stored Value's static extents disagree with the Ref view's");
    }
  }
  template <class U>
    requires is_number_v<U>
  StoreArg(U literal, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit
      : loc_(loc), scalar_(true) {
    static_assert(!std::is_const_v<T>, "refx: cannot write through a read-only Ref<const T>; take a Ref<T> to write");
    static_assert(!(std::is_integral_v<std::remove_const_t<T>> && is_floating_v<U>),
                  "refx: a floating-point literal stored into an integer Ref would be truncated; write an integer "
                  "literal or use refx::cast");
    using V = std::remove_const_t<T>;
    id_ = constant<V>(literal_as<V>(literal, "of the Ref it is stored into", "at", loc_), Shape{});
  }

  template <class R>
    requires is_ref_v<R>
  StoreArg(const R&) {  // NOLINT: implicit, to give the message below
    static_assert(!is_ref_v<R>, "refx: store / accum take a Value, not a Ref; read it with load() first");
  }

  ValueId id() const noexcept { return id_; }
  SourceLoc loc() const noexcept { return loc_; }
  bool scalar() const noexcept { return scalar_; }

 private:
  ValueId id_ = no_id;
  SourceLoc loc_;
  bool scalar_ = false;
};
}  // namespace detail

template <class T, class E, class Space>
void Ref<T, E, Space>::write(const Primitive& p, const detail::StoreArg<T, E>& v) const {
  static_assert(space != MemorySpace::hbm,
                "refx: compute cannot write an Hbm Ref; write a Vmem Ref and copy it (make_async_copy or sync_copy)");
  auto& t = detail::Tracer::current(v.loc());
  t.note(v.loc());
  ValueId id = v.id();
  if (v.scalar() && rank != 0) id = detail::broadcast_to(id, shape(), v.loc());
  const ValueId ins[] = {id};
  const ViewId views[] = {view()};
  t.bind(p, ins, views, {}, v.loc());
}

inline ViewId detail::make_view(ViewId parent_id, std::span<const IndexEntry> entries) {
  auto& t = detail::Tracer::current();
  Graph& g = t.graph();
  // (The Ref's scope is checked, with the user's line, by the op that uses the view.)
  if (parent_id < 0 || static_cast<std::size_t>(parent_id) >= g.num_views())
    throw TraceError(fmt::format("refx: .at(...) on an empty (default-constructed) Ref (near {})", t.near()));
  const View parent = g.view(parent_id);
  if (parent.layout != no_id)
    throw TraceError(fmt::format("refx: .at(...) on a reshaped or bitcast Ref view (near {}); index the Ref first, then "
                                 "reshape or bitcast the indexed view",
                                 t.near()));
  std::string error;  // reported, with the user's line, by the op that uses the view
  std::array<DimIndex, max_rank> dims{};
  const auto pd = g.dims(parent);
  std::copy(pd.begin(), pd.end(), dims.begin());
  auto e = entries.begin();
  for (std::size_t d = 0; d < parent.rank && e != entries.end(); ++d) {
    DimIndex& di = dims[d];
    if (di.squeezed) continue;
    const IndexEntry& x = *e++;
    if (x.kind == detail::keep_dim) continue;
    const std::int64_t size = x.kind == detail::squeeze_dim ? 1 : x.size;
    if (x.start.is_static()) {
      if (!window_fits(x.start.constant, size, x.stride, di.size))
        error = out_of_bounds_text(x.start.constant, size, x.stride, d, di.size);
    }
    // New start in base coordinates: parent.start + start * parent.stride.
    if (x.start.is_static() && di.start.is_static()) {
      di.start.constant += x.start.constant * di.stride;
    } else {
      // Index arithmetic in the traced starts' type; an i32 and an i64 start
      // meet in i64.
      DType it = g.type(x.start.is_static() ? di.start.value : x.start.value).dtype;
      if (!x.start.is_static() && !di.start.is_static() && g.type(di.start.value).dtype != it) it = DType::i64;
      const auto as_value = [&](const DynIndex& i) {
        if (!i.is_static()) {
          if (g.type(i.value).dtype == it) return i.value;
          const std::int64_t to[] = {static_cast<std::int64_t>(it)};
          return detail::apply(prim::cast, {i.value}, to);
        }
        return visit_dtype(it, [&](auto tag) {
          using I = typename decltype(tag)::type;
          return detail::constant<I>(static_cast<I>(i.constant), Shape{});
        });
      };
      ValueId s = as_value(x.start);
      // A traced start is checked against this parent dimension at run time
      // unless the parent spans the base Ref's whole dimension (then the
      // check of the composed view against the base is the same check).
      const bool whole = di.start.is_static() && di.start.constant == 0 && di.stride == 1 &&
                         di.size == g.type(parent.ref).shape[d];
      if (!x.start.is_static() && !whole) {
        const std::int64_t attrs[] = {static_cast<std::int64_t>(d), size, x.stride, di.size};
        s = t.bind1(prim::index_check, std::span<const ValueId>(&s, 1), {}, attrs, t.near());
      }
      if (di.stride != 1) s = detail::apply(prim::mul, {s, as_value(DynIndex{di.stride, -1})});
      if (!(di.start.is_static() && di.start.constant == 0)) s = detail::apply(prim::add, {as_value(di.start), s});
      di.start = DynIndex{0, s};
    }
    di.size = size;
    di.stride *= x.stride;
    di.squeezed = x.kind == detail::squeeze_dim;
  }
  const ViewId v = g.add_view(parent.ref, std::span<const DimIndex>(dims.data(), parent.rank));
  t.inherit_view_error(parent_id, v, std::move(error));
  return v;
}

inline ViewId detail::reinterpret_view(ViewId parent_id, DType to, const Shape* reshape_to, SourceLoc loc) {
  auto& t = detail::Tracer::current(loc);
  Graph& g = t.graph();
  const char* what = reshape_to ? "reshape" : "bitcast";
  if (parent_id < 0 || static_cast<std::size_t>(parent_id) >= g.num_views())
    trace_error(loc, "{} of an empty (default-constructed) Ref", what);
  const View parent = g.view(parent_id);
  const Shape from = g.view_shape(parent_id), foot = g.footprint_shape(parent_id);
  // The footprint's strides in the Ref's elements (squeezed dimensions dropped).
  const auto base_strides = g.type(parent.ref).shape.strides();
  std::array<std::int64_t, max_rank> strides{};
  std::size_t k = 0;
  for (std::size_t d = 0; d < parent.rank; ++d)
    if (const DimIndex& di = g.dims(parent)[d]; !di.squeezed) strides[k++] = di.stride * base_strides[d];
  const bool dense = is_dense_run(foot.dims(), strides.data());
  Shape shape = from;
  if (reshape_to != nullptr) {
    shape = *reshape_to;
    if (shape.num_elements() != from.num_elements())
      trace_error(loc,
                  "Ref::reshape: cannot reshape a {} view ({} elements) to {} ({} elements); the element count must "
                  "stay the same",
                  from, from.num_elements(), shape, shape.num_elements());
    if (!dense)
      trace_error(loc,
                  "Ref::reshape: the {} view is not contiguous in its {} Ref (strided, or a window of an inner "
                  "dimension); reshape a contiguous view, or load it and reshape the Value",
                  foot, g.type(parent.ref).shape);
  } else {
    const std::size_t sf = size_of(g.view_dtype(parent_id)), st = size_of(to);
    if (sf != st) {
      const std::size_t r = from.rank();
      const bool last_contiguous = dense || foot.rank() == 0 || foot[foot.rank() - 1] <= 1 || strides[foot.rank() - 1] == 1;
      if (r == 0 || !last_contiguous)
        trace_error(loc,
                    "Ref::bitcast: a {} view of {} elements is not contiguous along its last dimension, which a "
                    "bitcast from {} to {} rescales; bitcast a view with a unit stride along the last dimension",
                    from, g.view_dtype(parent_id), g.view_dtype(parent_id), to);
      const std::int64_t bytes = from[r - 1] * static_cast<std::int64_t>(sf);
      if (bytes % static_cast<std::int64_t>(st) != 0)
        trace_error(
            loc,
            "Ref::bitcast: the last dimension of a {} view of {} holds {} bytes, not a multiple of the {} bytes of {}",
            from, g.view_dtype(parent_id), bytes, st, to);
      shape[r - 1] = bytes / static_cast<std::int64_t>(st);
    }
  }
  ViewId v;
  if (to == g.type(parent.ref).dtype && shape == foot) {  // presents its footprint as it is: a plain view
    std::array<DimIndex, max_rank> dims{};
    std::ranges::copy(g.dims(parent), dims.begin());  // (add_view appends to the pool the span points into)
    v = g.add_view(parent.ref, std::span<const DimIndex>(dims.data(), parent.rank));
  } else
    v = g.add_reinterpreted_view(parent_id, ViewLayout{to, shape});
  t.inherit_view_error(parent_id, v, {});
  return v;
}

/// Aliases for the common memory spaces.
template <class T, std::int64_t... Dims>
using VmemRef = Ref<T, extents<Dims...>, Vmem>;
template <class T, std::int64_t... Dims>
using HbmRef = Ref<T, extents<Dims...>, Hbm>;
template <class T, std::int64_t... Dims>
using SmemRef = Ref<T, extents<Dims...>, Smem>;


// A Ref given where a Value is needed (exp(x) for exp(x.load())): each Value
// operation has a catch-all for Ref operands that says so, instead of "no
// matching function". It returns a Value of the Ref's type, so nothing after
// it fails again.
namespace detail {
template <class R>
struct loaded {
  using type = Scalar<float>;
};
template <class R>
  requires(is_ref_v<R> && requires { typename R::value_type; })
struct loaded<R> {
  using type = Value<typename R::value_type, typename R::extents_type>;
};
template <class R>
using loaded_t = typename loaded<std::remove_cvref_t<R>>::type;
template <class A, class B>
concept ref_operands = (is_ref_v<A> || is_ref_v<B>) && (is_ref_v<A> || is_value_v<A> || is_number_v<A>) &&
                       (is_ref_v<B> || is_value_v<B> || is_number_v<B>);
template <class A, class B>
using ref_operand_result_t = loaded_t<std::conditional_t<is_ref_v<A>, A, B>>;
}  // namespace detail

template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> exp(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: exp takes a Value, not a Ref; read the Ref first: exp(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> log(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: log takes a Value, not a Ref; read the Ref first: log(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> sqrt(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: sqrt takes a Value, not a Ref; read the Ref first: sqrt(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> rsqrt(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: rsqrt takes a Value, not a Ref; read the Ref first: rsqrt(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> tanh(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: tanh takes a Value, not a Ref; read the Ref first: tanh(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> logistic(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: logistic takes a Value, not a Ref; read the Ref first: logistic(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> abs(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: abs takes a Value, not a Ref; read the Ref first: abs(x.load())");
  return {};
}
template <class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> transpose(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: transpose takes a Value, not a Ref; read the Ref first: transpose(x.load())");
  return {};
}
template <std::size_t Axis, class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> reduce_sum(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: reduce_sum takes a Value, not a Ref; read the Ref first: reduce_sum<axis>(x.load())");
  return {};
}
template <std::size_t Axis, class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> reduce_max(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: reduce_max takes a Value, not a Ref; read the Ref first: reduce_max<axis>(x.load())");
  return {};
}
template <std::size_t Axis, class R, class... Rest>
  requires is_ref_v<R>
detail::loaded_t<R> reduce_min(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>, "refx: reduce_min takes a Value, not a Ref; read the Ref first: reduce_min<axis>(x.load())");
  return {};
}
template <class U, class R, class... Rest>
  requires is_ref_v<R>
Value<U, typename detail::loaded_t<R>::extents_type> cast(const R&, Rest&&...) {
  static_assert(detail::dependent_false<R>,
                "refx: cast converts a Value, not a Ref; read the Ref first: cast<T>(x.load()) (to reinterpret a Ref's "
                "bytes, use x.bitcast<T>())");
  return {};
}
template <class A, class B, class... Rest>
  requires(is_ref_v<A> || is_ref_v<B>)
detail::ref_operand_result_t<A, B> dot(const A&, const B&, Rest&&...) {
  static_assert(detail::dependent_false<A>, "refx: dot multiplies Values, not Refs; read the Refs first: dot(a.load(), b.load())");
  return {};
}
template <class C, class A, class B, class... Rest>
  requires(is_ref_v<C> || is_ref_v<A> || is_ref_v<B>)
auto select(const C&, const A&, const B&, Rest&&...) {
  static_assert(detail::dependent_false<C>,
                "refx: select takes Values (a bool condition and two alternatives), not Refs; read the Refs first: "
                "select(c, x.load(), y.load())");
  if constexpr (is_ref_v<A>) return detail::loaded_t<A>{};
  else if constexpr (is_ref_v<B>) return detail::loaded_t<B>{};
  else return detail::loaded_t<C>{};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator+(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator-(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator*(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator/(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator%(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator&(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator|(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator^(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator<(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator<=(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator>(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator>=(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator==(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}
template <class A, class B>
  requires detail::ref_operands<A, B>
detail::ref_operand_result_t<A, B> operator!=(const A&, const B&) {
  static_assert(detail::dependent_false<A>,
                "refx: arithmetic and comparisons take Values, not Refs; read the Ref first with load(), e.g. x.load() + 1.0f");
  return {};
}

/// Free-function spellings of the Ref operations (as in Pallas' ref_get / ref_set).
template <class R>
auto load(const R& ref, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_ref_v<R>, "refx: expected a Ref here but got something else (a Value is immutable; "
                             "store it into a Ref first)");
  if constexpr (is_ref_v<R>) return ref.load(loc);
}
template <class R, class V>
void store(const R& ref, const V& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_ref_v<R>, "refx: expected a Ref here but got something else (a Value is immutable; "
                             "store it into a Ref first)");
  if constexpr (is_ref_v<R>) ref.store(detail::StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
}
template <class R, class V>
void accum(const R& ref, const V& v, refx::source_location loc = refx::source_location::current()) {
  static_assert(is_ref_v<R>, "refx: expected a Ref here but got something else (a Value is immutable; "
                             "store it into a Ref first)");
  if constexpr (is_ref_v<R>) ref.accum(detail::StoreArg<typename R::element_type, typename R::extents_type>(v, loc));
}

}  // namespace refx
