#pragma once
// Threefry-2x32, the counter-based generator of JAX's default PRNG (Salmon,
// Moraes, Dror and Shaw, "Parallel Random Numbers: As Easy as 1, 2, 3",
// SC'11): a keyed bijection of a 64-bit counter, so the bits at a counter
// depend on the key and the counter alone, never on what ran before or on
// which thread computes them. prng_seed / prng_random_bits
// (ir/primitives/random.hpp) build keys and counters from it as
// docs/tutorial.md ("Random bits") describes; the functions below are the
// whole generator, checked against the Random123 known-answer vectors
// (tests/ir/threefry_test.cpp).

#include <array>
#include <cstdint>

namespace refx::detail {

/// Two 32-bit words: a Threefry-2x32 key, counter or output block.
using ThreefryWords = std::array<std::uint32_t, 2>;

constexpr std::uint32_t rotate_left_32(std::uint32_t x, int r) noexcept { return (x << r) | (x >> (32 - r)); }

/// Threefry-2x32 with `Rounds` rounds (20: JAX's and Random123's default):
/// the block of `key` at `counter`. The rotations are Threefish's for two
/// words; the key is injected every four rounds with the key schedule's
/// third word k0 ^ k1 ^ 0x1BD11BDA and the injection number.
template <int Rounds = 20>
constexpr ThreefryWords threefry2x32(ThreefryWords key, ThreefryWords counter) noexcept {
  constexpr int rotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::uint32_t schedule[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  std::uint32_t x0 = counter[0] + schedule[0], x1 = counter[1] + schedule[1];
  for (int r = 0; r < Rounds; ++r) {
    x0 += x1;
    x1 = rotate_left_32(x1, rotations[r % 8]);
    x1 ^= x0;
    if (r % 4 == 3) {
      const auto s = static_cast<std::uint32_t>((r + 1) / 4);
      x0 += schedule[s % 3];
      x1 += schedule[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

/// A new key from `key` and 32 bits of data, as jax.random.fold_in: the
/// block of `key` at the counter (0, data).
constexpr ThreefryWords threefry_fold_in(ThreefryWords key, std::uint32_t data) noexcept {
  return threefry2x32(key, {0u, data});
}

/// `n` words of random bits from `key`: word i is the xor of the two words
/// of the block at the 64-bit counter i (high word first), which is what
/// jax.random.bits(key, shape, uint32) gives with jax_threefry_partitionable
/// (JAX's default since 0.5) for i in row-major order.
inline void threefry_random_bits(ThreefryWords key, std::uint32_t* out, std::int64_t n) noexcept {
  for (std::int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::uint64_t>(i);
    const ThreefryWords b = threefry2x32(key, {static_cast<std::uint32_t>(c >> 32), static_cast<std::uint32_t>(c)});
    out[i] = b[0] ^ b[1];
  }
}

}  // namespace refx::detail
