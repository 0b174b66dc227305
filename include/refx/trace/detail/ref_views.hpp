#pragma once
// The views behind Ref::at, Ref::reshape and Ref::bitcast: make_view composes
// `.at(...)` indices into the base Ref's coordinates (checking static bounds),
// reinterpret_view presents a view's bytes as other elements or extents.
// Part of trace/ref.hpp, which includes it at its end, after declaring both (so it includes nothing back).

namespace refx {

inline ViewId detail::make_view(ViewId parent_id, std::span<const IndexEntry> entries) {
  auto& t = detail::Tracer::current();
  Graph& g = t.graph();
  // (The Ref's scope is checked, with the user's line, by the op that uses the view.)
  if (parent_id < 0 || static_cast<std::size_t>(parent_id) >= g.num_views())
    trace_error_near(t.near(), ".at(...) on an empty (default-constructed) Ref");
  const View parent = g.view(parent_id);
  if (parent.layout != no_id)
    trace_error_near(t.near(), hint("index the Ref first, then reshape or bitcast the indexed view"),
                     ".at(...) on a reshaped or bitcast Ref view");
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
      const bool whole =
          di.start.is_static() && di.start.constant == 0 && di.stride == 1 && di.size == g.type(parent.ref).shape[d];
      // A traced index into a Smem Ref while a pipeline runs an index map is
      // checked here even then, naming the operand and the step.
      const detail::SmemIndexContext* context =
          g.type(parent.ref).space == MemorySpace::smem ? detail::smem_index_context() : nullptr;
      if (!x.start.is_static() && (!whole || context != nullptr)) {
        const std::int64_t attrs[] = {
            static_cast<std::int64_t>(d), size, x.stride, di.size,
            context != nullptr ? g.add_string(context->describe(context->data, parent.ref)) : 0};
        s = t.bind1(prim::index_check, std::span<const ValueId>(&s, 1), {},
                    std::span<const std::int64_t>(attrs, context != nullptr ? 5 : 4), t.near());
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
  const auto strides = footprint_strides(g, parent_id);
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
      const bool last_contiguous =
          dense || foot.rank() == 0 || foot[foot.rank() - 1] <= 1 || strides[foot.rank() - 1] == 1;
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
  } else v = g.add_reinterpreted_view(parent_id, ViewLayout{to, shape});
  t.inherit_view_error(parent_id, v, {});
  return v;
}

}  // namespace refx
