// Reading, writing, accumulating and max-combining through resolved strided
// views, directly on Buffers (no tracing), against plain index arithmetic.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <refx/refx.hpp>

#include "support/testing.hpp"

using namespace refx;
using refx::testing::contents;
using refx::testing::make_buffer;
using refx::testing::make_buffer_fn;

namespace {

/// A view of `b` (row-major, base shape b.shape()) with per-kept-dimension
/// (size, stride-in-base-elements) and a start offset.
ResolvedView view_of(Buffer& b, std::int64_t offset, std::vector<std::pair<std::int64_t, std::int64_t>> dims) {
  ResolvedView v;
  v.buffer = &b;
  v.offset = offset;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    v.shape.push_back(dims[d].first);
    v.strides[d] = dims[d].second;
  }
  return v;
}

/// Flat base indices of the view, in its row-major order.
std::vector<std::int64_t> indices(const ResolvedView& v) {
  std::vector<std::int64_t> out{v.offset};
  for (std::size_t d = 0; d < v.shape.rank(); ++d) {
    std::vector<std::int64_t> next;
    for (auto o : out)
      for (std::int64_t k = 0; k < v.shape[d]; ++k) next.push_back(o + k * v.strides[d]);
    out = std::move(next);
  }
  return out;
}

TEST(ViewAccess, ReadWriteAccumThroughA2DStridedView) {
  // Base (6, 10); view rows {1, 3, 5}, columns {2, 5, 8}: offset 12, strides (20, 3).
  Buffer base = make_buffer_fn<std::int32_t>(Shape{6, 10}, [](std::int64_t i) { return i; });
  const ResolvedView v = view_of(base, 12, {{3, 20}, {3, 3}});
  const auto idx = indices(v);
  ASSERT_EQ(idx.size(), 9u);
  EXPECT_EQ(idx.front(), 12);
  EXPECT_EQ(idx.back(), 5 * 10 + 8);

  Buffer out(DType::i32, Shape{3, 3});
  read_view(v, out);
  std::vector<std::int32_t> want;
  for (auto i : idx) want.push_back(static_cast<std::int32_t>(i));
  EXPECT_EQ(contents<std::int32_t>(out), want);

  Buffer in = make_buffer_fn<std::int32_t>(Shape{3, 3}, [](std::int64_t i) { return 1000 + i; });
  write_view(v, in);
  std::vector<std::int32_t> after = refx::testing::contents<std::int32_t>(make_buffer_fn<std::int32_t>(Shape{6, 10}, [](std::int64_t i) { return i; }));
  for (std::size_t k = 0; k < idx.size(); ++k) after[static_cast<std::size_t>(idx[k])] = 1000 + static_cast<std::int32_t>(k);
  EXPECT_EQ(contents<std::int32_t>(base), after);

  accum_view(v, in);
  for (std::size_t k = 0; k < idx.size(); ++k) after[static_cast<std::size_t>(idx[k])] += 1000 + static_cast<std::int32_t>(k);
  EXPECT_EQ(contents<std::int32_t>(base), after);
}

TEST(ViewAccess, RankZeroAndEmptyViews) {
  Buffer base = make_buffer<float>(Shape{4}, {1, 2, 3, 4});
  const ResolvedView one = view_of(base, 2, {});
  Buffer s(DType::f32, Shape{});
  read_view(one, s);
  EXPECT_EQ(contents<float>(s)[0], 3.0f);
  accum_view(one, s);
  EXPECT_EQ(contents<float>(base), (std::vector<float>{1, 2, 6, 4}));

  const ResolvedView empty = view_of(base, 4, {{0, 1}});
  Buffer e(DType::f32, Shape{0});
  read_view(empty, e);
  write_view(empty, e);
  accum_view(empty, e);
  max_view(empty, e);
  EXPECT_EQ(contents<float>(base), (std::vector<float>{1, 2, 6, 4}));
}

TEST(ViewAccess, AccumOfBoolIsLogicalOr) {
  Buffer base = make_buffer<bool>(Shape{4}, {false, true, false, true});
  Buffer in = make_buffer<bool>(Shape{4}, {false, false, true, true});
  accum_view(view_of(base, 0, {{4, 1}}), in);
  EXPECT_EQ(contents<bool>(base), (std::vector<bool>{false, true, true, true}));
}

TEST(ViewAccess, AccumWrapsSignedOverflow) {
  constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max(), lo = std::numeric_limits<std::int64_t>::min();
  Buffer base = make_buffer<std::int64_t>(Shape{3}, {hi, lo, 5});
  Buffer in = make_buffer<std::int64_t>(Shape{3}, {1, -1, -7});
  accum_view(view_of(base, 0, {{3, 1}}), in);
  EXPECT_EQ(contents<std::int64_t>(base), (std::vector<std::int64_t>{lo, hi, -2}));
}

TEST(ViewAccess, MaxViewTakesTheElementwiseMaximum) {
  // Every other element of an 8-vector.
  Buffer base = make_buffer<float>(Shape{8}, {1, 100, -5, 100, 7, 100, 0, 100});
  Buffer in = make_buffer<float>(Shape{4}, {2, -6, 3, -0.5});
  max_view(view_of(base, 0, {{4, 2}}), in);
  EXPECT_EQ(contents<float>(base), (std::vector<float>{2, 100, -5, 100, 7, 100, 0, 100}));

  Buffer ints = make_buffer<std::int32_t>(Shape{3}, {std::numeric_limits<std::int32_t>::min(), 4, -9});
  max_view(view_of(ints, 0, {{3, 1}}), make_buffer<std::int32_t>(Shape{3}, {-1, 3, -8}));
  EXPECT_EQ(contents<std::int32_t>(ints), (std::vector<std::int32_t>{-1, 4, -8}));
}

TEST(ViewAccess, MaxViewPropagatesNanWhicheverSideItIsOn) {
  // Max-combining copies must not depend on the order data arrives in (a ring
  // all-reduce combines in a different order on every device).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Buffer a = make_buffer<float>(Shape{2}, {nan, 1.0f});
  max_view(view_of(a, 0, {{2, 1}}), make_buffer<float>(Shape{2}, {1.0f, nan}));
  Buffer b = make_buffer<float>(Shape{2}, {1.0f, nan});
  max_view(view_of(b, 0, {{2, 1}}), make_buffer<float>(Shape{2}, {nan, 1.0f}));
  for (float x : contents<float>(a)) EXPECT_TRUE(std::isnan(x));
  for (float x : contents<float>(b)) EXPECT_TRUE(std::isnan(x));
}

TEST(ViewAccess, CopyViewOverwritesSumsOrMaxes) {
  Buffer src = make_buffer<double>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  // Column 1 of src (2, 5) into elements 0 and 3 of dst.
  const ResolvedView from = view_of(src, 1, {{2, 3}});
  Buffer dst = make_buffer<double>(Shape{4}, {10, 0, 0, 1});
  const ResolvedView to = view_of(dst, 0, {{2, 3}});
  copy_view(from, to, CopyReduce::none);
  EXPECT_EQ(contents<double>(dst), (std::vector<double>{2, 0, 0, 5}));
  copy_view(from, to, CopyReduce::sum);
  EXPECT_EQ(contents<double>(dst), (std::vector<double>{4, 0, 0, 10}));
  Buffer dst2 = make_buffer<double>(Shape{4}, {3, 0, 0, 1});
  copy_view(from, view_of(dst2, 0, {{2, 3}}), CopyReduce::max);
  EXPECT_EQ(contents<double>(dst2), (std::vector<double>{3, 0, 0, 5}));
}

TEST(ViewAccess, OverlappingCopyWithinOneBuffer) {
  // copy_view stages through a temporary, so an overlapping shift is clean.
  Buffer b = make_buffer_fn<std::int32_t>(Shape{6}, [](std::int64_t i) { return i; });
  copy_view(view_of(b, 0, {{5, 1}}), view_of(b, 1, {{5, 1}}), CopyReduce::none);
  EXPECT_EQ(contents<std::int32_t>(b), (std::vector<std::int32_t>{0, 0, 1, 2, 3, 4}));
}

}  // namespace
