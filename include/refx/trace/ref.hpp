#pragma once
// Ref<T, extents<...>, Space>: a traced mutable array reference. The element
// type's constness is the access mode (Ref<const T> is read-only), and only
// the widening conversion Ref<T> -> Ref<const T> exists. `.at(...)` makes a
// view (reads nothing); load / store / accum record Read / Write / Accum.

#include <algorithm>
#include <array>
#include <span>
#include <string>
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
template <class T, class Space>
class ElementRef;  // ref[i] of a rank-1 Ref, below
template <class T, class Space>
  requires std::integral<std::remove_const_t<T>>
inline constexpr std::int64_t index_kind<ElementRef<T, Space>> = squeeze_dim;
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
/// `ref[i]`'s index (an integer or an integer Scalar), with the line it was
/// written on.
struct ElementIndex {
  template <class I>
    requires(std::is_integral_v<I> || (is_value_v<I> && index_kind<I> == squeeze_dim))
  ElementIndex(const I& i, refx::source_location l = refx::source_location::current())  // NOLINT: implicit
      : entry(index_entry(i)), loc(l) {}
  IndexEntry entry;
  refx::source_location loc;
};
/// While set (emit_pipeline, calling an index map): says, for the Smem Ref
/// `ref`, what a run-time index_check of a traced index into it names in its
/// error (the pipeline operand, the scalar operand and the grid step).
struct SmemIndexContext {
  std::string (*describe)(const void* data, ValueId ref);
  const void* data;
};
inline const SmemIndexContext*& smem_index_context() {
  thread_local const SmemIndexContext* context = nullptr;
  return context;
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
    static_assert(
        Element<T>,
        "refx: a Ref's element type must be one of bool, i8, u8, i32, u32, i64, f8e4m3fn, f8e5m2, bf16, f16, f32, f64 "
        "(std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, refx::f8e4m3fn, refx::f8e5m2, "
        "refx::bf16, refx::f16, float, double)");
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
  operator Ref<const value_type, E, Space>() const
    requires(!read_only)
  {  // NOLINT: implicit widening on purpose
    return Ref<const value_type, E, Space>::from_view(view());
  }

  /// A view of a region: integers drop a dimension, `ds(...)` keeps it.
  template <class... I>
  auto at(const I&... idx) const {
    constexpr bool fits = sizeof...(I) <= rank;
    constexpr bool kinds = ((detail::index_kind<I> != detail::bad_index) && ...);
    static_assert(fits, "refx: more indices than the Ref's rank in .at(...)");
    static_assert(
        kinds, "refx: .at(...) takes integers, integer Scalars, ds(start, size[, stride]), ds<N>(start) or refx::all");
    // ds<N> with N < 0 reported its own error: stop here, before extents<N>.
    constexpr bool sizes = (!detail::negative_fixed_slice<I> && ...);
    if constexpr (!fits || !kinds || !sizes) {
      return *this;  // not reached: a check above failed to compile
    } else {
      using NE = typename detail::view_extents<E, I...>::type;
      return Ref<T, NE, Space>::from_view(detail::make_view(view(), {detail::index_entry(idx)...}));
    }
  }

  /// Pallas' `ref[i]`. On a rank-1 Vmem or Smem Ref, the element: a Scalar
  /// loaded here, which `ref[i] = v` stores into instead (`lengths[b]`,
  /// `buffer_index[0] = next`). Otherwise the view at(i) (`pages[h]`), so
  /// `ref[i][j]` is the element (i, j).
  auto operator[](detail::ElementIndex i) const {
    static_assert(rank >= 1, "refx: ref[i] indexes a Ref of rank >= 1; a rank-0 Ref is read with load()");
    if constexpr (rank >= 1) {
      using NE = typename detail::view_extents<E, std::int64_t>::type;
      const auto v = Ref<T, NE, Space>::from_view(detail::make_view(view(), {i.entry}));
      if constexpr (rank == 1 && space != MemorySpace::hbm) return detail::ElementRef<T, Space>(v, i.loc);
      else return v;
    }
  }

  /// The same bytes as elements of U, as Pallas' `ref.bitcast`: with
  /// sizeof(U) != sizeof(T) the last dimension scales by sizeof(T) /
  /// sizeof(U), and the view must be contiguous along it. Loads, stores and
  /// accumulations go through it; copies do not (copy the Refs themselves).
  template <class U>
  auto bitcast(refx::source_location loc = refx::source_location::current()) const {
    static_assert(!std::is_const_v<U>,
                  "refx: bitcast<U> takes an element type without const (a read-only Ref's view stays read-only)");
    static_assert(std::is_const_v<U> || Element<U>,
                  "refx: bitcast<U>'s element type must be one of bool, i8, u8, i32, u32, i64, f8e4m3fn, f8e5m2, bf16, "
                  "f16, f32, f64 (std::int8_t, std::uint8_t, std::int32_t, std::uint32_t, std::int64_t, "
                  "refx::f8e4m3fn, refx::f8e5m2, refx::bf16, refx::f16, float, double); there are no 16-bit integers: "
                  "view 16-bit data as refx::bf16 or refx::f16, or as std::uint32_t (two 16-bit halves each)");
    if constexpr (Element<U> && !std::is_const_v<U>) return bitcast_to<U>(loc);
  }

 private:
  template <class V>
  auto bitcast_to(refx::source_location loc) const {
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

 public:
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
  /// `x -= v`, `x *= v`, `x /= v` (Pallas' `x_ref[...] *= v`): the view's
  /// contents combined with `v` (a Value or a number) and stored back, as a
  /// load, the elementwise op and a store on the caller's line. Only `+=` is
  /// one accumulate effect.
  void operator-=(detail::StoreArg<T, E> v) const { update(prim::sub, v); }
  void operator*=(detail::StoreArg<T, E> v) const { update(prim::mul, v); }
  void operator/=(detail::StoreArg<T, E> v) const { update(prim::div, v); }
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
    detail::Tracer::current().name_ref(view(), std::move(n));
    return *this;
  }

  static Ref from_view(ViewId v) {
    Ref r;
    r.view_ = v;
    r.trace_ = detail::Tracer::current_serial();
    return r;
  }

 private:
  void write(const Primitive& p, const detail::StoreArg<T, E>& v) const { put(p, operand(v), v.loc()); }
  void update(const Primitive& p, const detail::StoreArg<T, E>& v) const;
  ValueId operand(const detail::StoreArg<T, E>& v) const;
  /// Records `p` writing the Value `id` into the view.
  void put(const Primitive& p, ValueId id, SourceLoc loc) const;

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
    if constexpr (is_narrow_float_v<U> && std::is_same_v<std::remove_const_t<T>, float>) {
      // Most often `acc += dot(a, b)` of bf16 or fp8 operands into an f32 accumulator.
      static_assert(detail::dependent_false<U>,
                    "refx: a bf16, f16 or fp8 Value is not widened implicitly into an f32 Ref; if it is a dot's "
                    "result, write dot<float>(a, b) (JAX's preferred_element_type=jnp.float32: the f32 sums, not "
                    "rounded to the operands' type); otherwise convert it with refx::cast<float>(value)");
    } else {
      static_assert(std::is_same_v<U, std::remove_const_t<T>>,
                    "refx: the stored Value's element type differs from the Ref's (no implicit narrowing); convert "
                    "it with refx::cast<T>(value)");
    }
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

namespace detail {
/// `ref[i]` of a rank-1 Ref: the element's value, loaded where `ref[i]` was
/// written, and a handle to it: `ref[i] = v` stores v into it (the load is
/// then unused and removed). Only a temporary is assigned to: `auto e =
/// ref[i]; e = v;` does not compile (e is a value, not the element).
template <class T, class Space>
class ElementRef : public Value<std::remove_const_t<T>, extents<>> {
  using V = Value<std::remove_const_t<T>, extents<>>;

 public:
  ElementRef(const Ref<T, extents<>, Space>& r, refx::source_location loc) : V(r.load(loc)), ref_(r), loc_(loc) {}
  ElementRef(const ElementRef&) = default;
  /// ref[i] = v
  void operator=(StoreArg<T, extents<>> v) &&
        requires(!std::is_const_v<T>)
  {
    ref_.store(v);
  }
  /// ref[i] = other[j]: the other element's value (on its line).
  void operator=(const ElementRef& other) &&
        requires(!std::is_const_v<T>)
  {
    ref_.store(StoreArg<T, extents<>>(static_cast<const V&>(other), other.loc_));
  }
  /// `auto e = ref[i]; e = v;`: e is the value read, not the element.
  ElementRef& operator=(const ElementRef&) & {
    static_assert(dependent_false<T>,
                  "refx: a variable holding ref[i] holds the value read there, not the element: assigning to it "
                  "writes nothing; write ref[i] = v where you index");
    return *this;
  }
  template <class U>
  void operator=(const U&) & {
    static_assert(dependent_false<U>,
                  "refx: a variable holding ref[i] holds the value read there, not the element: assigning to it "
                  "writes nothing; write ref[i] = v where you index");
  }
  /// The element as a Ref (a rank-0 view).
  const Ref<T, extents<>, Space>& ref() const noexcept { return ref_; }

 private:
  Ref<T, extents<>, Space> ref_;
  refx::source_location loc_;  ///< where ref[i] was written
};
}  // namespace detail

/// The stored Value, a scalar broadcast to the view's shape.
template <class T, class E, class Space>
ValueId Ref<T, E, Space>::operand(const detail::StoreArg<T, E>& v) const {
  return v.scalar() && rank != 0 ? detail::broadcast_to(v.id(), shape(), v.loc()) : v.id();
}

template <class T, class E, class Space>
void Ref<T, E, Space>::put(const Primitive& p, ValueId id, SourceLoc loc) const {
  static_assert(space != MemorySpace::hbm,
                "refx: compute cannot write an Hbm Ref; write a Vmem Ref and copy it (make_async_copy or sync_copy)");
  auto& t = detail::Tracer::current(loc);
  t.note(loc);
  const ValueId ins[] = {id};
  const ViewId views[] = {view()};
  t.bind(p, ins, views, {}, loc);
}

template <class T, class E, class Space>
void Ref<T, E, Space>::update(const Primitive& p, const detail::StoreArg<T, E>& v) const {
  auto& t = detail::Tracer::current(v.loc());
  const ViewId views[] = {view()};
  const ValueId ins[] = {t.bind1(prim::load, {}, views, {}, v.loc()), operand(v)};
  put(prim::store, t.bind1(p, ins, {}, {}, v.loc()), v.loc());
}

/// Aliases for the common memory spaces.
template <class T, std::int64_t... Dims>
using VmemRef = Ref<T, extents<Dims...>, Vmem>;
template <class T, std::int64_t... Dims>
using HbmRef = Ref<T, extents<Dims...>, Hbm>;
template <class T, std::int64_t... Dims>
using SmemRef = Ref<T, extents<Dims...>, Smem>;

}  // namespace refx

// Definitions and free functions kept apart to keep this header short.
#include <refx/trace/detail/ref_views.hpp>
#include <refx/trace/detail/ref_operands.hpp>
