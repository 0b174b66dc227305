#pragma once
// Random bits in kernels, from Threefry-2x32 (ir/detail/threefry.hpp), and
// stochastic rounding with them. All three are pure: their results depend on
// their inputs, attributes and the device's place in the mesh only, so
// passes may drop, move or deduplicate them and every executor (the
// reference interpreter, the threaded runtime, any worker count) computes
// the same bits.
//   prng_seed: inputs = one or more i32 scalar seeds; output = the device's
//     key, u32[2]: (0, seed0), each further seed folded in, then the
//     device's logical id, then its core (0 until devices have cores);
//     attrs = [1] leaves the device and core out (sample_block's tile keys).
//   prng_random_bits: inputs = key, then the index of each fori_loop entered
//     after the seed, outermost first; attrs = [call, rank, dims...]. The
//     call's key is the key with the call number, then each index, folded
//     in; element i (row-major) is the xor of the two words of that key's
//     block at counter i.
//   stochastic_round: inputs = an f32 value, u32 bits of its shape; attrs =
//     [target dtype] (bf16 or f16).

#include <cstdint>
#include <string>

#include <refx/ir/detail/stochastic_round.hpp>
#include <refx/ir/detail/threefry.hpp>
#include <refx/ir/eval.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx::detail {

inline void prng_seed_abstract(AbstractContext& c) {
  if (c.num_inputs() == 0) c.fail("takes at least one seed");
  if (c.num_attrs() > 1 || (c.num_attrs() == 1 && c.attr(0) != 1))
    c.fail("takes no attribute, or 1 (a key without the device and core folded in); got {} attributes", c.num_attrs());
  for (std::size_t i = 0; i < c.num_inputs(); ++i) {
    const ValueType& t = c.input(i);
    if (t.is_ref() || t.shape.rank() != 0 || t.dtype != DType::i32)
      c.fail("seed {} is {}{}; seeds are i32 scalars", i, t.dtype, t.shape);
  }
  c.add_output(ValueType{DType::u32, ValueKind::array, MemorySpace::smem, SemaphoreKind::none, Shape{2}});
}
inline ExecStatus prng_seed_impl(ExecContext& ctx, const Op& op) {
  const auto ins = ctx.graph().inputs(op);
  const auto word = [&](std::size_t i) { return static_cast<std::uint32_t>(ctx.in(op, i).as_int(0)); };
  ThreefryWords key{0u, word(0)};  // a 32-bit seed as JAX's key(seed)
  for (std::size_t i = 1; i < ins.size(); ++i) key = threefry_fold_in(key, word(i));
  if (ctx.graph().attrs(op).empty()) {  // prng_seed's; sample_block's tile keys are shared
    key = threefry_fold_in(key, static_cast<std::uint32_t>(ctx.env().device_id()));
    key = threefry_fold_in(key, static_cast<std::uint32_t>(ctx.env().core_index()));  // (Mesh::with_cores)
  }
  std::uint32_t* out = ctx.out(op, 0).data<std::uint32_t>();
  out[0] = key[0];
  out[1] = key[1];
  return ExecStatus::done;
}

inline void prng_random_bits_abstract(AbstractContext& c) {
  const ValueType& key = c.input(0);
  if (key.is_ref() || key.dtype != DType::u32 || !(key.shape == Shape{2}))
    c.fail("takes the key that prng_seed makes (u32[2]), got {}{}", key.dtype, key.shape);
  for (std::size_t i = 1; i < c.num_inputs(); ++i) {
    const ValueType& t = c.input(i);
    if (t.is_ref() || t.shape.rank() != 0 || !is_integral(t.dtype))
      c.fail("operand {} is {}{}; loop indices are integer scalars", i, t.dtype, t.shape);
  }
  if (c.attr(0) < 0) c.fail("the call number is {}; it must be >= 0", c.attr(0));
  c.add_output(ValueType{DType::u32, ValueKind::array, MemorySpace::vmem, SemaphoreKind::none, c.shape_attrs(1)});
}
inline ExecStatus prng_random_bits_impl(ExecContext& ctx, const Op& op) {
  const Buffer& k = ctx.in(op, 0);
  ThreefryWords key{k.data<std::uint32_t>()[0], k.data<std::uint32_t>()[1]};
  key = threefry_fold_in(key, static_cast<std::uint32_t>(prim::prng_random_bits_attrs(ctx.graph(), op).call));
  for (std::size_t i = 1; i < ctx.graph().inputs(op).size(); ++i)
    key = threefry_fold_in(key, static_cast<std::uint32_t>(ctx.in(op, i).as_int(0)));
  Buffer& out = ctx.out(op, 0);
  threefry_random_bits(key, out.data<std::uint32_t>(), out.size());
  return ExecStatus::done;
}
inline void prng_random_bits_print(const Graph& g, const Op& op, std::string& s) {
  s += fmt::format("prng_random_bits[call={}]", prim::prng_random_bits_attrs(g, op).call);
}

inline void stochastic_round_abstract(AbstractContext& c) {
  const ValueType& x = c.input(0);
  const ValueType& bits = c.input(1);
  if (x.is_ref() || x.dtype != DType::f32) c.fail("rounds an f32 value, got {}{}", x.dtype, x.shape);
  if (bits.is_ref() || bits.dtype != DType::u32 || !(bits.shape == x.shape))
    c.fail("takes u32 random bits of the value's shape {}, got {}{}", x.shape, bits.dtype, bits.shape);
  const DType target = c.dtype_attr(0);
  if (!stochastic_round_target(target)) c.fail("rounds to bf16 or f16, not {}", target);
  ValueType t = x;
  t.dtype = target;
  c.add_output(t);
}
inline ExecStatus stochastic_round_impl(ExecContext& ctx, const Op& op) {
  const float* x = ctx.in(op, 0).data<float>();
  const std::uint32_t* r = ctx.in(op, 1).data<std::uint32_t>();
  Buffer& out = ctx.out(op, 0);
  const std::int64_t n = out.size();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    if constexpr (std::is_same_v<T, bf16>) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = stochastic_round_bf16(x[i], r[i]);
    } else if constexpr (is_half_float_v<T>) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = stochastic_round_to<T>(x[i], r[i]);
    }  // other types: rejected when traced (stochastic_round_abstract)
  });
  return ExecStatus::done;
}
inline void stochastic_round_print(const Graph& g, const Op& op, std::string& s) {
  s += fmt::format("stochastic_round[{}]", static_cast<DType>(g.attrs(op)[0]));
}

}  // namespace refx::detail

namespace refx::prim {

#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive prng_seed =
    detail::as_pure(Primitive{"prng_seed", detail::prng_seed_abstract, detail::prng_seed_impl});
inline constexpr Primitive prng_random_bits =
    detail::as_pure(Primitive{"prng_random_bits", detail::prng_random_bits_abstract, detail::prng_random_bits_impl,
                              detail::prng_random_bits_print});
inline constexpr Primitive stochastic_round =
    detail::as_pure(Primitive{"stochastic_round", detail::stochastic_round_abstract, detail::stochastic_round_impl,
                              detail::stochastic_round_print});
}  // namespace defs
REFX_DECL constinit const Primitive& prng_seed = defs::prng_seed;
REFX_DECL constinit const Primitive& prng_random_bits = defs::prng_random_bits;
REFX_DECL constinit const Primitive& stochastic_round = defs::stochastic_round;
#endif  // REFX_DEFINITIONS

}  // namespace refx::prim

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_RANDOM_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
