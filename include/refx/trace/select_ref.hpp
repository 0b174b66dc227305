#pragma once
// Pallas' pl.select_ref: one of several Refs (or semaphores), chosen at run
// time by a traced index, as a copy's source, destination or semaphore.
//   auto x = select_ref(i, x0.at(ds(0, 8), all), x1);     // a RefChoice
//   async_copy(x, y, select_ref(i % 2, sems.at(0), sems.at(1))).wait();
// The alternatives share one element type, rank and memory space; `.at(...)`
// views each of them. A copy with a choice among its operands starts (and
// waits) the chosen alternative: a branch per alternative, as Pallas' TPU
// lowering nests an scf.if per choice. The index must lie in [0, n): outside
// it, the run stops with an error on select_ref's line (Pallas' lowering
// takes the last alternative for every index past n - 2); a constant index
// picks at trace time.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <tuple>
#include <type_traits>
#include <vector>

#include <refx/core/source_location.hpp>

#include <refx/trace/control_flow.hpp>
#include <refx/trace/copy.hpp>

namespace refx {

template <class... R>
class RefChoice;

namespace detail {
template <class T>
inline constexpr bool is_ref_choice_v = false;
template <class... R>
inline constexpr bool is_ref_choice_v<RefChoice<R...>> = true;

/// One copy operand's alternatives: their views and the (checked) index
/// that picks one; `index` is no_id for an operand that is not a choice.
struct Alternatives {
  std::vector<ViewId> views;
  ValueId index = no_id;
};
template <class X>
Alternatives alternatives_of(const X& x) {
  if constexpr (is_ref_choice_v<X>) return x.alternatives();
  else return {{x.view()}, no_id};
}
/// The type that stands for an operand in the copy's checks: a choice's first alternative.
template <class X>
struct representative {
  using type = X;
};
template <class R0, class... R>
struct representative<RefChoice<R0, R...>> {
  using type = R0;
};
template <class X>
using representative_t = typename representative<X>::type;

/// Whether `v` is an integer constant; its value in `out`.
inline bool constant_index(const Graph& g, ValueId v, std::int64_t& out) {
  const ValueInfo& info = g.value(v);
  if (info.producer == no_id || g.op(info.producer).prim != &prim::constant) return false;
  const prim::ConstantAttrs a = prim::constant_attrs(g, g.op(info.producer));
  if (is_floating(a.dtype)) return false;
  out = static_cast<std::int64_t>(a.bits);
  return true;
}

/// A copy whose source, destination or semaphore is a choice: one
/// descriptor; its start and its wait run the chosen alternatives' op.
class ChoiceCopy : public CopyBase {
 public:
  ChoiceCopy(std::array<Alternatives, 4> operands, SourceLoc loc)
      : CopyBase(operands[0].views[0], operands[1].views[0], operands[2].views[0], no_id, std::nullopt, loc),
        operands_(std::move(operands)) {}

 protected:
  void choice_start(CopyReduce reduce, refx::source_location loc) const {
    std::array<ViewId, 4> v{no_id, no_id, no_id, no_id};
    each_choice(v, {0, 1, 2}, 0, loc, [&] { start_views(v, reduce, loc); });
  }
  /// The receive side: the region it completes and its semaphore are what it names.
  void choice_wait(refx::source_location loc) const {
    std::array<ViewId, 4> v{operands_[0].views[0], no_id, no_id, no_id};
    each_choice(v, {1, 2}, 0, loc, [&] { wait_views({v[0], v[1], v[2]}, prim::WaitSide::recv, loc); });
  }

 private:
  // Operands which[k] onwards: a branch per alternative of each choice, `leaf` in the innermost.
  template <class F>
  void each_choice(std::array<ViewId, 4>& v, std::initializer_list<std::size_t> which, std::size_t k,
                   refx::source_location loc, const F& leaf) const {
    if (k == which.size()) return leaf();
    const std::size_t o = which.begin()[k];
    pick(v, which, k, o, 0, loc, leaf);
  }
  template <class F>
  void pick(std::array<ViewId, 4>& v, std::initializer_list<std::size_t> which, std::size_t k, std::size_t o,
            std::size_t j, refx::source_location loc, const F& leaf) const {
    const Alternatives& a = operands_[o];
    const auto take = [&] {
      v[o] = a.views[j];
      each_choice(v, which, k + 1, loc, leaf);
    };
    if (j + 1 == a.views.size()) return take();  // the index was checked: the last is what is left
    const auto index = wrap<std::int32_t, extents<>>(a.index);
    when(
        index == static_cast<std::int32_t>(j), take, [&] { pick(v, which, k, o, j + 1, loc, leaf); }, loc);
  }

  std::array<Alternatives, 4> operands_;  // src, dst, sem (and no send: local copies)
};
}  // namespace detail

/// The result of select_ref (see the top of this header).
template <class... R>
class RefChoice {
 public:
  /// `index` picks at run time; or `fixed` (>= 0), a constant index, at trace time.
  RefChoice(ValueId index, std::int64_t fixed, std::tuple<R...> refs)
      : index_(index), fixed_(fixed), refs_(std::move(refs)) {}

  /// The view of each alternative.
  template <class... I>
  auto at(const I&... idx) const {
    return std::apply(
        [&](const R&... r) {
          return RefChoice<decltype(r.at(idx...))...>(index_, fixed_,
                                                      std::tuple<decltype(r.at(idx...))...>(r.at(idx...)...));
        },
        refs_);
  }
  detail::Alternatives alternatives() const {
    detail::Alternatives a{{}, index_};
    std::apply([&](const R&... r) { (a.views.push_back(r.view()), ...); }, refs_);
    if (fixed_ >= 0) a = {{a.views[static_cast<std::size_t>(fixed_)]}, no_id};
    return a;
  }

 private:
  ValueId index_;  // checked to lie in [0, n)
  std::int64_t fixed_;
  std::tuple<R...> refs_;
};

/// pl.select_ref(i, *refs): refs[i], chosen where the copy runs.
template <class R0, class... R>
auto select_ref(const detail::SwitchIndex& i, const R0& first, const R&... rest) {
  constexpr bool refs = is_ref_v<R0> && (is_ref_v<R> && ...);
  static_assert(refs, "refx: select_ref chooses among Refs or semaphores (a select_ref of select_refs is not taken)");
  static_assert(sizeof...(R) >= 1, "refx: select_ref needs at least two Refs to choose from");
  if constexpr (refs) {  // (after a failed check below, on with what was given: no follow-on errors)
    if constexpr (is_semaphore_v<R0>) {
      static_assert(((is_semaphore_v<R> && R::kind == R0::kind && R::rank == R0::rank) && ...),
                    "refx: select_ref's semaphores must be of one kind and rank");
    } else {
      static_assert(((!is_semaphore_v<R> && std::is_same_v<typename R::element_type, typename R0::element_type> &&
                      R::rank == R0::rank && R::space == R0::space) &&
                     ...),
                    "refx: select_ref's Refs must have one element type (and constness), rank and memory space");
    }
    auto& t = detail::Tracer::current(i.loc);
    t.note(i.loc);
    const auto n = static_cast<std::int64_t>(sizeof...(R) + 1);
    ValueId index = i.index.id();
    std::int64_t fixed = -1;
    if (detail::constant_index(t.graph(), index, fixed)) {
      if (fixed < 0 || fixed >= n) trace_error(i.loc, "select_ref: index {} is out of range for {} Refs", fixed, n);
    } else {
      const std::int64_t attrs[] = {0, 1, 1, n, t.graph().add_string(fmt::format("select_ref among {} Refs", n))};
      index = t.bind1(prim::index_check, std::span<const ValueId>(&index, 1), {}, attrs, i.loc);
    }
    return RefChoice<R0, R...>(index, fixed, std::tuple<R0, R...>(first, rest...));
  }
}

/// make_async_copy where the source, the destination or the semaphore is a
/// select_ref choice.
template <class Src, class Dst, class Sem>
  requires(detail::is_ref_choice_v<Src> || detail::is_ref_choice_v<Dst> || detail::is_ref_choice_v<Sem>)
auto make_async_copy(const Src& src, const Dst& dst, const Sem& sem,
                     refx::source_location loc = refx::source_location::current()) {
  using S = detail::representative_t<Src>;
  using D = detail::representative_t<Dst>;
  using M = detail::representative_t<Sem>;
  class Copy : public detail::ChoiceCopy {
   public:
    using ChoiceCopy::ChoiceCopy;
    void start(refx::source_location l = refx::source_location::current()) const { choice_start(CopyReduce::none, l); }
    void start(Accumulate a, refx::source_location l = refx::source_location::current()) const {
      choice_start(a.op, l);
    }
    void wait(refx::source_location l = refx::source_location::current()) const {
      if constexpr (detail::dma_side<detail::is_regular_v<M>>()) choice_wait(l);
    }
    void wait_recv(refx::source_location l = refx::source_location::current()) const { wait(l); }
  };
  if constexpr (detail::check_copy_types<S, D>() && detail::check_dma_semaphore<M>()) {
    detail::Tracer::current(loc).note(loc);
    return Copy({detail::alternatives_of(src), detail::alternatives_of(dst), detail::alternatives_of(sem), {}}, loc);
  }
}

/// async_copy with select_ref choices: started; returns the descriptor.
template <class Src, class Dst, class Sem>
  requires(detail::is_ref_choice_v<Src> || detail::is_ref_choice_v<Dst> || detail::is_ref_choice_v<Sem>)
auto async_copy(const Src& src, const Dst& dst, const Sem& sem,
                refx::source_location loc = refx::source_location::current()) {
  auto c = make_async_copy(src, dst, sem, loc);
  c.start(loc);
  return c;
}

}  // namespace refx
