#pragma once
// Random bits in kernels, as Pallas TPU's pltpu.prng_seed /
// pltpu.prng_random_bits, and stochastic rounding with them:
//   prng_seed(seed, ...)                 seeds this device's generator
//   prng_random_bits<Dims...>()          a Value<std::uint32_t, extents<Dims...>>
//   stochastic_round<bf16>(x, bits)      f32 -> bf16 / f16, up with probability
//                                        the fraction of the step
// The generator is Threefry-2x32 (20 rounds, JAX's), counter-based: bits
// depend on the seeds, the device, the call and the loop iteration only,
// never on the schedule or the worker count (docs/tutorial.md, "Random bits").

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <refx/core/detail/checked_args.hpp>
#include <refx/core/source_location.hpp>
#include <refx/trace/value.hpp>

namespace refx {

namespace detail {
/// A C++ integer or a Scalar<std::int32_t>: what prng_seed takes.
template <class S>
inline constexpr bool prng_seed_operand_v =
    std::is_same_v<S, Scalar<std::int32_t>> ||
    (std::is_integral_v<S> && !std::is_same_v<S, bool> &&
     (integer_range_checked_v<S, std::int32_t> || integer_lossless_v<S, std::int32_t>));

/// A seed with the user's line (the source_location of the first seed's
/// conversion is the call's).
struct PrngSeed {
  template <class S>
  PrngSeed(const S& s, refx::source_location where = refx::source_location::current())  // NOLINT: implicit
      : loc(where) {
    static_assert(prng_seed_operand_v<S>,
                  "refx: prng_seed takes int32 seeds: integers or Scalar<std::int32_t> values (convert others with "
                  "refx::cast<std::int32_t>(v))");
    if constexpr (std::is_same_v<S, Scalar<std::int32_t>>) id = s.id();
    else if constexpr (prng_seed_operand_v<S>)
      id = Scalar<std::int32_t>(s, where).id();  // an i64 checked while tracing
  }
  ValueId id = no_id;
  refx::source_location loc;
};

/// Seeds the trace's generator; `per_device`: the device and core are folded
/// into the key (prng_seed), or not (sample_block's tile keys).
REFX_DECL void prng_seed_ids(std::span<const ValueId> seeds, SourceLoc loc, bool per_device = true);
REFX_DECL ValueId prng_random_bits_id(const Shape& shape, SourceLoc loc);

#if REFX_DEFINITIONS
REFX_DECL void prng_seed_ids(std::span<const ValueId> seeds, SourceLoc loc, bool per_device) {
  Tracer& t = Tracer::current(loc);
  const std::int64_t shared[] = {1};
  const ValueId key = t.bind1(prim::prng_seed, seeds, {}, per_device ? std::span<const std::int64_t>{} : shared, loc);
  t.prng() = Tracer::PrngState{key, loc, 0};
}

REFX_DECL ValueId prng_random_bits_id(const Shape& shape, SourceLoc loc) {
  Tracer& t = Tracer::current(loc);
  Tracer::PrngState& state = t.prng();
  if (state.key == no_id)
    trace_error(loc, hint("call refx::prng_seed(seed) before it in the kernel"),
                "prng_random_bits without a prng_seed before it (its bits would be undefined, as in Pallas)");
  // The key's block is open when the seed was traced here or around here;
  // a seed inside a body that has ended seeded that body only.
  const BlockId key_block = t.graph().value(state.key).block;
  const auto open = t.open_blocks();
  std::size_t depth = 0;
  while (depth < open.size() && open[depth] != key_block) ++depth;
  if (depth == open.size())
    trace_error(loc, hint("call prng_seed again after that body, or before it"),
                "prng_random_bits after the fori_loop, when or scope body holding the latest prng_seed (at {}) ended",
                state.seeded_at);
  // Loops entered after the seed draw fresh bits in every iteration; in a
  // loop around the seed, each iteration seeds again, as on a TPU.
  std::vector<ValueId> ins{state.key};
  for (const Tracer::OpenLoop& l : t.open_loops())
    for (std::size_t d = depth + 1; d < open.size(); ++d)
      if (open[d] == l.body) ins.push_back(l.index);
  std::vector<std::int64_t> attrs{state.calls++, static_cast<std::int64_t>(shape.rank())};
  attrs.insert(attrs.end(), shape.begin(), shape.end());
  return t.bind1(prim::prng_random_bits, ins, {}, attrs, loc);
}
#endif  // REFX_DEFINITIONS
}  // namespace detail

/// Seeds this device's generator with one or more int32 seeds (integers or
/// Scalar<std::int32_t>, e.g. a loop index or axis_index): the key is made
/// from the seeds, the device's logical id and its core, so devices draw
/// independent streams from one seed. Later prng_random_bits calls draw
/// from it; a prng_seed in a fori_loop, when or scope body seeds that body.
template <class... Rest>
void prng_seed(const detail::PrngSeed& first, const Rest&... rest) {
  static_assert((detail::prng_seed_operand_v<Rest> && ...),
                "refx: prng_seed takes int32 seeds: integers or Scalar<std::int32_t> values (convert others with "
                "refx::cast<std::int32_t>(v))");
  if constexpr ((detail::prng_seed_operand_v<Rest> && ...)) {
    const ValueId ids[] = {first.id, detail::PrngSeed(rest, first.loc).id...};
    detail::prng_seed_ids(ids, first.loc);
  }
}

/// Random bits of the static shape Dims...: fresh in every call and every
/// iteration of a fori_loop entered after the seed, the same on every run
/// with the same seeds. uint32 elements (Pallas gives int32: the same bits;
/// unsigned is what shifts and stochastic_round want).
template <std::int64_t... Dims>
Value<std::uint32_t, extents<Dims...>> prng_random_bits(refx::source_location loc = refx::source_location::current()) {
  static_assert(((Dims != dyn) && ...),
                "refx: prng_random_bits needs a static shape: write prng_random_bits<8, 128>() (no refx::dyn, no "
                "run-time Shape)");
  return detail::wrap<std::uint32_t, extents<Dims...>>(detail::prng_random_bits_id(Shape{Dims...}, loc));
}
/// Pallas' stateful samplers, drawn from prng_random_bits (the distribution
/// of JAX's, not its bits). stateful_bits: the bits themselves.
template <std::int64_t... Dims>
Value<std::uint32_t, extents<Dims...>> stateful_bits(refx::source_location loc = refx::source_location::current()) {
  return prng_random_bits<Dims...>(loc);
}
/// stateful_uniform: floats in [minval, maxval), from 24 random bits each.
template <std::int64_t... Dims>
Value<float, extents<Dims...>> stateful_uniform(float minval = 0.0f, float maxval = 1.0f,
                                                refx::source_location loc = refx::source_location::current()) {
  const auto unit =
      cast<float>(shift_right_logical(prng_random_bits<Dims...>(loc), std::uint32_t{8}), loc) * (1.0f / 16777216.0f);
  return unit * (maxval - minval) + minval;
}
/// stateful_normal: standard normal floats (Box-Muller over two uniform draws).
template <std::int64_t... Dims>
Value<float, extents<Dims...>> stateful_normal(refx::source_location loc = refx::source_location::current()) {
  const auto u1 = 1.0f - stateful_uniform<Dims...>(0.0f, 1.0f, loc);  // in (0, 1]: its log is finite
  const auto u2 = stateful_uniform<Dims...>(0.0f, 1.0f, loc);
  return sqrt(log(u1) * -2.0f) * cos(u2 * 6.28318530717958647692f);
}
/// stateful_bernoulli: true with probability p.
template <std::int64_t... Dims>
Value<bool, extents<Dims...>> stateful_bernoulli(float p = 0.5f,
                                                 refx::source_location loc = refx::source_location::current()) {
  return stateful_uniform<Dims...>(0.0f, 1.0f, loc) < p;
}

/// A shape given as an argument (Pallas' prng_random_bits(shape)): rejected.
template <class S>
void prng_random_bits(const S&, refx::source_location = refx::source_location::current()) {
  static_assert(detail::dependent_false<S>,
                "refx: prng_random_bits needs a static shape: write prng_random_bits<8, 128>() (no refx::dyn, no "
                "run-time Shape)");
}

/// `x` rounded to bf16 or f16 with the random bits `bits` (one uint32 per
/// element, prng_random_bits of x's shape): rounds up (away from zero) with
/// probability equal to x's distance from the value below it as a fraction
/// of the step, so that the mean of many roundings is x. Values the target
/// holds exactly, infinities and NaN are converted as cast<U> converts them.
template <Element U, class T, class E, class B, class EB>
Value<U, E> stochastic_round(const Value<T, E>& x, const Value<B, EB>& bits,
                             refx::source_location loc = refx::source_location::current()) {
  static_assert(std::is_same_v<U, bf16> || std::is_same_v<U, f16>,
                "refx: stochastic_round rounds to refx::bf16 or refx::f16: stochastic_round<bf16>(x, bits)");
  static_assert(std::is_same_v<T, float>, "refx: stochastic_round rounds a float (f32) Value; cast it to float first");
  constexpr bool bits_fit = [] {
    if constexpr (std::is_same_v<B, std::uint32_t> && E::rank == EB::rank) return extents_compatible<E, EB>;
    else return false;
  }();
  static_assert(bits_fit,
                "refx: stochastic_round's random bits must be a std::uint32_t Value of x's extents "
                "(prng_random_bits of the same shape)");
  const std::int64_t attrs[] = {static_cast<std::int64_t>(dtype_v<U>)};
  return detail::wrap<U, E>(detail::apply(prim::stochastic_round, {x.id(), bits.id()}, attrs, loc));
}

}  // namespace refx
