#pragma once
// pltpu.sample_block: random samples of one block of a larger array, the
// same whatever the block shape and the order blocks are drawn in:
//
//   auto noise = sample_block<extents<256, 128>, extents<8, 128>>(
//       [] { return stateful_uniform<8, 128>(); }, seed, {1024, 512}, i, j);
//
// The array (here 1024 x 512) is cut into tiles (8 x 128); tile t, counted
// in row-major order over the array's tiles, holds what the sampler draws
// after a seed made of `seed` and t alone (Pallas' fold_in(key, t): no
// device, no core, unlike prng_seed). The block (256 x 128) at block index
// (i, j) is its tiles side by side, so any block shape the tile divides
// sees the same numbers. The samples are refx's Threefry bits shaped by the
// sampler (docs/pallas-to-refx.md): the keys are JAX's, the bits are not.
// The kernel's own generator (prng_seed) is as it was after the call.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <refx/core/shape.hpp>
#include <refx/trace/random.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/scopes.hpp>
#include <refx/trace/value.hpp>

namespace refx {

namespace detail {
template <class I>
inline constexpr bool block_index_operand_v =
    std::is_same_v<I, Scalar<std::int32_t>> || (std::is_integral_v<I> && !std::is_same_v<I, bool>);

template <class I>
Scalar<std::int32_t> block_index_scalar(const I& i, refx::source_location loc) {
  if constexpr (std::is_same_v<I, Scalar<std::int32_t>>) return i;
  else return Scalar<std::int32_t>(i, loc);
}
}  // namespace detail

/// The block of extents Block at `block_index` (one integer or
/// Scalar<std::int32_t> per dimension) of an array of extents `total`,
/// sampled Tile by Tile: `sampler()` returns a Value of extents Tile drawn
/// with the stateful samplers (stateful_uniform<...>(), ...).
template <class Block, class Tile, class Sampler, class... Index>
auto sample_block(Sampler&& sampler, const detail::PrngSeed& seed, const Shape& total, const Index&... block_index) {
  constexpr std::size_t rank = Block::rank;
  static_assert(Tile::rank == rank, "refx: sample_block's block and tile have different ranks");
  static_assert(sizeof...(Index) == rank,
                "refx: sample_block takes one block index per dimension of the block (integers or "
                "Scalar<std::int32_t>)");
  static_assert((detail::block_index_operand_v<Index> && ...),
                "refx: sample_block's block indices are integers or Scalar<std::int32_t> values");
  constexpr bool divides = [] {
    for (std::size_t d = 0; d < std::min(Block::rank, Tile::rank); ++d)
      if (Tile::values[d] < 1 || Block::values[d] % Tile::values[d] != 0) return false;
    return true;
  }();
  static_assert(divides, "refx: sample_block's tile must divide its block in every dimension");
  using Drawn = std::remove_cvref_t<decltype(sampler())>;
  static_assert(std::is_same_v<typename Drawn::extents_type, Tile>,
                "refx: sample_block's sampler returns a Value of the tile's extents (sampler() takes no arguments: "
                "[] { return stateful_uniform<8, 128>(); })");
  using T = typename Drawn::element_type;
  const refx::source_location loc = seed.loc;
  if (total.rank() != rank)
    trace_error(loc, hint("give the whole array's extents, one per dimension of the block"),
                "sample_block's total shape {} has rank {}; the block has rank {}", total, total.rank(), rank);
  std::array<std::int64_t, rank> tiles{}, per_block{}, tile_stride{};  // of the whole array, of a block
  for (std::size_t d = 0; d < rank; ++d) {
    tiles[d] = (total[d] + Tile::values[d] - 1) / Tile::values[d];
    per_block[d] = Block::values[d] / Tile::values[d];
  }
  tile_stride[rank - 1] = 1;
  for (std::size_t d = rank - 1; d > 0; --d) tile_stride[d - 1] = tile_stride[d] * tiles[d];
  const std::array<Scalar<std::int32_t>, rank> index{detail::block_index_scalar(block_index, loc)...};
  detail::Tracer& t = detail::Tracer::current(loc);
  const detail::Tracer::PrngState kept = t.prng();
  auto block = run_scoped(
      [&](Ref<T, Block, Vmem> out) {
        std::array<std::int64_t, rank> at{};  // the tile within the block
        for (bool more = true; more;) {
          Scalar<std::int32_t> tile_id(0, loc);
          for (std::size_t d = 0; d < rank; ++d)
            tile_id =
                tile_id + (index[d] * static_cast<std::int32_t>(per_block[d]) + static_cast<std::int32_t>(at[d])) *
                              static_cast<std::int32_t>(tile_stride[d]);
          const ValueId seeds[] = {seed.id, tile_id.id()};
          detail::prng_seed_ids(seeds, loc, /*per_device=*/false);
          const auto drawn = sampler();
          const auto view = [&]<std::size_t... D>(std::index_sequence<D...>) {
            return out.at(ds<Tile::values[D]>(at[D] * Tile::values[D])...);
          }
          (std::make_index_sequence<rank>{});
          view.store(detail::StoreArg<T, Tile>(drawn, loc));
          more = false;
          for (std::size_t d = rank; d-- > 0;) {
            if (++at[d] < per_block[d]) {
              more = true;
              break;
            }
            at[d] = 0;
          }
        }
        return out.load(loc);
      },
      loc);
  t.prng() = kept;
  return block;
}

}  // namespace refx
