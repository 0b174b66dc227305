#pragma once
// jax-ml/jax's grouped matmul (jax/experimental/pallas/ops/tpu/megablox/
// gmm.py, `gmm`), ported as it is written: rows of lhs [m, k] belong to
// groups of sizes group_sizes; group i's rows are multiplied by rhs[i]
// [k, n]. make_group_metadata (host code in the Python too: jnp ops around
// the pallas_call) assigns the grid's middle dimension to (group, m tile)
// pairs; its extent, num_active_tiles, is computed from group_sizes, so the
// grid's extent is known only when the kernel runs. The kernel, its index
// maps, BlockSpecs and the masked store of tiles shared by two groups keep
// the Python's names.
//
//   Pallas                                      refx
//   grid=(tiles_n, num_active_tiles, tiles_k)   grid(tiles_n, scalar_extent(4, 0, bound), tiles_k): the
//     with num_active_tiles traced                extent is element 0 of scalar operand 4, at most
//                                                 tiles_m + num_groups - 1 (the metadata's length)
//   num_scalar_prefetch=2: group_metadata       the Smem parameters group_offsets, group_ids,
//     (a tuple of 3 arrays), group_offset         m_tile_ids, group_offset, then num_active_tiles
//   BlockSpec((None, tk, tn), ...)              block<squeezed, tk, tn>(...)
//   existing_out=None                           a None parameter (kExistingOut = false)
//   lax.cond(k_i == tiles_k - 1, f, g)          cond(k_i == tiles_k - 1, f, g)
//   lax.dot_general(..., transpose_rhs dims)    dot<float>(lhs, rhs, trans_b)
//
// Not ported: tgmm, group_offset != 0 with fewer local groups (the
// _zero_uninitialized_memory step), and k or n not divisible by their tiles
// (a rolled grid's blocks divide their arrays in refx; the Python masks the
// last k tile, which mask_k_rem keeps for when that holds).

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <vector>

#include <refx/refx.hpp>

namespace jax_megablox_gmm {
using namespace refx;
using I = std::int64_t;
using i32 = std::int32_t;

/// make_group_metadata's results: group_offsets [num_groups + 1], group_ids
/// and m_tile_ids [tiles_m + num_groups - 1], num_tiles.
struct GroupMetadata {
  std::vector<i32> group_offsets, group_ids, m_tile_ids;
  i32 num_tiles = 0;
};

/// make_group_metadata(group_sizes, m, tm, start_group, num_nonzero_groups,
/// visit_empty_groups), on the host.
inline GroupMetadata make_group_metadata(const std::vector<i32>& group_sizes, I m, I tm, i32 start_group,
                                         i32 num_nonzero_groups, bool visit_empty_groups = true) {
  const auto num_groups = static_cast<i32>(group_sizes.size());
  const i32 end_group = start_group + num_nonzero_groups - 1;
  const I tiles_m = m / tm;
  // group_offsets: [0, cumsum(group_sizes)...].
  std::vector<i32> group_ends(group_sizes.size());
  std::partial_sum(group_sizes.begin(), group_sizes.end(), group_ends.begin());
  GroupMetadata g;
  g.group_offsets.push_back(0);
  g.group_offsets.insert(g.group_offsets.end(), group_ends.begin(), group_ends.end());
  // The number of tm-tiles each group covers: its end rounded up, its start down.
  std::vector<i32> group_tiles(group_sizes.size());
  for (i32 i = 0; i < num_groups; ++i) {
    const i32 rounded_end = (group_ends[i] + static_cast<i32>(tm) - 1) / static_cast<i32>(tm) * static_cast<i32>(tm);
    const i32 rounded_start = (i == 0 ? 0 : group_ends[i - 1]) / static_cast<i32>(tm) * static_cast<i32>(tm);
    const i32 rounded_size = group_sizes[i] == 0 ? 0 : rounded_end - rounded_start;
    group_tiles[i] = rounded_size / static_cast<i32>(tm);
    if (visit_empty_groups && group_sizes[i] == 0) group_tiles[i] = 1;
  }
  const I total = tiles_m + num_groups - 1;
  // group_ids: each group's id repeated group_tiles times, padded with the last.
  for (i32 i = 0; i < num_groups; ++i) g.group_ids.insert(g.group_ids.end(), group_tiles[i], i);
  g.group_ids.resize(static_cast<std::size_t>(total), g.group_ids.empty() ? 0 : g.group_ids.back());
  // m_tile_ids: each tile once, plus once more per group starting inside it.
  std::vector<i32> tile_visits(static_cast<std::size_t>(tiles_m), 1);
  for (i32 i = 0; i < num_groups; ++i) {
    bool partial_tile_mask = g.group_offsets[i] % tm == 0 || group_sizes[i] == 0;
    if (visit_empty_groups && group_sizes[i] == 0) partial_tile_mask = false;
    if (!partial_tile_mask) ++tile_visits[static_cast<std::size_t>(g.group_offsets[i] / tm)];
  }
  for (I t = 0; t < tiles_m; ++t)
    g.m_tile_ids.insert(g.m_tile_ids.end(), tile_visits[static_cast<std::size_t>(t)], static_cast<i32>(t));
  g.m_tile_ids.resize(static_cast<std::size_t>(total), static_cast<i32>(tiles_m - 1));
  // Rotate our shard's tiles to the front, and count them.
  const auto first_tile_in_shard = std::count_if(g.group_ids.begin(), g.group_ids.end(), [&](i32 id) { return id < start_group; });
  std::rotate(g.group_ids.begin(), g.group_ids.begin() + first_tile_in_shard, g.group_ids.end());
  std::rotate(g.m_tile_ids.begin(), g.m_tile_ids.begin() + first_tile_in_shard, g.m_tile_ids.end());
  for (i32 i = 0; i < num_groups; ++i)
    if (i >= start_group && i <= end_group) g.num_tiles += group_tiles[i];
  return g;
}

/// gmm's static arguments: lhs [m, k], rhs [num_groups, k, n] ([.., n, k]
/// with transpose_rhs), tiling (tm, tk, tn), existing_out given or not.
template <class T, I m, I k, I n, I num_groups, I tm, I tk, I tn, bool transpose_rhs = false, bool kExistingOut = false>
struct Gmm {
  static constexpr I tiles_m = m / tm, tiles_k = (k + tk - 1) / tk, k_rem = k % tk, tiles_n = (n + tn - 1) / tn;
  static_assert(m % tm == 0, "m must be divisible by the m-dimension tile size");
  static constexpr I max_active_tiles = tiles_m + num_groups - 1;

  using GroupOffsets = SmemRef<const i32, num_groups + 1>;
  using GroupIds = SmemRef<const i32, max_active_tiles>;
  using GroupOffset = SmemRef<const i32, 1>;
  using NumTiles = SmemRef<const i32, 1>;
  using Lhs = HbmRef<const T, m, k>;
  using Rhs = std::conditional_t<transpose_rhs, HbmRef<const T, num_groups, n, k>, HbmRef<const T, num_groups, k, n>>;
  using Out = HbmRef<float, m, n>;
  using ExistingOut = std::conditional_t<kExistingOut, HbmRef<const float, m, n>, None>;

  /// The mask of the rows of the current tile that belong to the current group.
  template <I tile_n>
  static auto get_store_mask(const Scalar<i32>& grid_id, GroupOffsets group_offsets, GroupIds group_ids,
                             GroupIds m_tile_ids) {
    const auto group_id = group_ids[grid_id];
    const auto group_start = group_offsets[group_id];
    const auto group_end = group_offsets[group_id + 1];
    const auto m_id = m_tile_ids[grid_id] * static_cast<i32>(tm);
    const auto iota_ = iota<i32, tm, tile_n>(0) + m_id;
    return (iota_ >= group_start) & (iota_ < group_end);
  }

  static void kernel(GroupOffsets group_offsets, GroupIds group_ids, GroupIds m_tile_ids, GroupOffset,
                     NumTiles, VmemRef<const T, tm, tk> lhs, auto rhs, auto existing_out, VmemRef<float, tm, tn> out,
                     VmemRef<float, tm, tn> acc_scratch) {
    const auto grid_id = traced_program_id(1);
    const auto k_i = traced_program_id(2);

    when(k_i == 0, [&] {  // _zero_acc
      acc_scratch.store(zeros<float, tm, tn>());
      if constexpr (!is_none_v<decltype(existing_out)>) {
        const auto prev_grid_id = select(grid_id > 0, grid_id - 1, Scalar<i32>(0));
        const auto is_first_processed_group = grid_id == 0;
        const auto m_tile_changed = m_tile_ids[grid_id] != m_tile_ids[prev_grid_id];
        const auto first_time_seeing_out = is_first_processed_group | m_tile_changed;
        when(first_time_seeing_out, [&] { out.store(existing_out.load()); });  // _init_out
      }
    });

    const auto mask_k_rem = [](const auto& x, auto dim) {
      if constexpr (k_rem == 0) {
        return x;
      } else {
        using E = typename std::remove_cvref_t<decltype(x)>::extents_type;
        const auto iota_ = iota<i32>(TypedShape<E>{x.shape()}, decltype(dim)::value);
        return cast<T>(select(iota_ < static_cast<i32>(k_rem), cast<float>(x), 0.0f));
      }
    };

    const auto store_accum = [&] {
      const auto mask = get_store_mask<tn>(grid_id, group_offsets, group_ids, m_tile_ids);
      const auto to_store = acc_scratch.load();
      out.store(select(mask, to_store, out.load()));
    };

    const auto accum = [&](bool is_last_k_tile) {
      const auto loaded_lhs = lhs.load();
      const auto loaded_rhs = rhs.load();
      const auto l = is_last_k_tile ? mask_k_rem(loaded_lhs, std::integral_constant<int, 1>{}) : loaded_lhs;
      const auto r = is_last_k_tile ? mask_k_rem(loaded_rhs, std::integral_constant<int, transpose_rhs ? 1 : 0>{})
                                    : loaded_rhs;
      if constexpr (transpose_rhs) acc_scratch += dot<float>(l, r, trans_b);
      else acc_scratch += dot<float>(l, r);
      if (is_last_k_tile) store_accum();
    };

    cond(k_i == static_cast<i32>(tiles_k - 1), [&] { accum(true); }, [&] { accum(false); });
  }

  /// The pallas_call: a kernel taking (group_offsets, group_ids, m_tile_ids,
  /// group_offset, num_active_tiles, lhs, rhs[, existing_out]) and returning out.
  static auto gmm() {
    const auto lhs_transform_indices = [](auto, auto grid_id, auto k_i, auto, auto, GroupIds m_tile_ids, auto, auto) {
      return std::tuple{m_tile_ids[grid_id], k_i};
    };
    const auto rhs_transform_indices = [](auto n_i, auto grid_id, auto k_i, auto, GroupIds group_ids, auto,
                                          GroupOffset group_offset, auto) {
      if constexpr (transpose_rhs) return std::tuple{group_ids[grid_id] - group_offset[0], n_i, k_i};
      else return std::tuple{group_ids[grid_id] - group_offset[0], k_i, n_i};
    };
    const auto out_transform_indices = [](auto n_i, auto grid_id, auto, auto, auto, GroupIds m_tile_ids, auto, auto) {
      return std::tuple{m_tile_ids[grid_id], n_i};
    };
    const auto out_block_spec = block<tm, tn>(out_transform_indices);
    const auto in_out_block_spec = [&] {
      if constexpr (kExistingOut) return out_block_spec;
      else return none;
    }();
    const auto lhs_block_spec = block<tm, tk>(lhs_transform_indices);
    const auto rhs_block_spec = [&] {
      if constexpr (transpose_rhs) return block<squeezed, tn, tk>(rhs_transform_indices);
      else return block<squeezed, tk, tn>(rhs_transform_indices);
    }();
    return pipeline_kernel<GroupOffsets, GroupIds, GroupIds, GroupOffset, NumTiles, Lhs, Rhs, ExistingOut, Out>(
        grid(tiles_n, scalar_extent(4, 0, max_active_tiles), tiles_k)
            .dimension_semantics(parallel, arbitrary, arbitrary),
        [](auto... refs) { kernel(refs...); }, lhs_block_spec, rhs_block_spec, in_out_block_spec, out_block_spec,
        scratch<VmemRef<float, tm, tn>>());
  }
};
}  // namespace jax_megablox_gmm
