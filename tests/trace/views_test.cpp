// Views of Refs: `.at(...)` with integers, ds(start, size[, stride]),
// ds<N>(start), refx::all, nested views and traced starts; loads, stores and
// accumulations through each; bounds checks at trace and run time.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

#include "support/testing.hpp"

using namespace refx;
using namespace refx::testing;

namespace {

/// One dimension of a region in base coordinates, for the plain-C++ model.
struct Dim {
  std::int64_t start, size, stride = 1;
  bool squeezed = false;
};
Dim at(std::int64_t i) { return {i, 1, 1, true}; }
Dim range(std::int64_t start, std::int64_t size, std::int64_t stride = 1) { return {start, size, stride, false}; }

/// Flat (row-major) indices into a base of shape `base`, in the region's own
/// row-major order.
std::vector<std::int64_t> region(const Shape& base, const std::vector<Dim>& dims) {
  std::vector<std::int64_t> out{0};
  const auto strides = base.strides();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    std::vector<std::int64_t> next;
    for (std::int64_t o : out)
      for (std::int64_t k = 0; k < dims[d].size; ++k) next.push_back(o + (dims[d].start + k * dims[d].stride) * strides[d]);
    out = std::move(next);
  }
  return out;
}

/// x[i] for every index in `idx`.
template <class T>
std::vector<T> gather(const std::vector<T>& x, const std::vector<std::int64_t>& idx) {
  std::vector<T> out;
  for (auto i : idx) out.push_back(x[static_cast<std::size_t>(i)]);
  return out;
}

/// The base data used throughout: element i has value i.
template <class T>
std::vector<T> iota_data(std::int64_t n) {
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(static_cast<T>(i));
  return v;
}

const Shape base48{4, 8};

// ---------------------------------------------------------------- static views: loads

TEST(Views, IntegerIndicesDropDimensions) {
  Graph g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 8> row, VmemRef<float> elem, VmemRef<float, 4> col) {
    auto r = x.at(2);
    static_assert(std::is_same_v<decltype(r), Ref<const float, extents<8>, Vmem>>);
    static_assert(std::is_same_v<decltype(x.at(1, 3).load()), Scalar<float>>);
    static_assert(std::is_same_v<decltype(x.at(all, 5)), Ref<const float, extents<4>, Vmem>>);
    row.store(r.load());
    elem.store(x.at(1, 3).load());
    col.store(x.at(all, 5).load());
  });
  const auto xs = iota_data<float>(32);
  Buffer bx = make_buffer_fn<float>(base48, [](std::int64_t i) { return i; }), brow(DType::f32, Shape{8}), be(DType::f32, Shape{}),
         bc(DType::f32, Shape{4});
  interpret(g, bx, brow, be, bc);
  EXPECT_TRUE(elements_match(contents<float>(brow), gather(xs, region(base48, {at(2), range(0, 8)}))));
  EXPECT_EQ(contents<float>(be)[0], 11.0f);  // 1 * 8 + 3
  EXPECT_TRUE(elements_match(contents<float>(bc), std::vector<float>{5, 13, 21, 29}));
}

TEST(Views, FewerIndicesThanRankKeepTrailingDimensions) {
  Graph g = trace([](VmemRef<const std::int32_t, 2, 3, 4> x, VmemRef<std::int32_t, 3, 4> a, VmemRef<std::int32_t, 2, 4> b) {
    static_assert(std::is_same_v<decltype(x.at(1)), Ref<const std::int32_t, extents<3, 4>, Vmem>>);
    a.store(x.at(1).load());
    b.store(x.at(ds(0, 2), 2).load());
  });
  const Shape s{2, 3, 4};
  const auto xs = iota_data<std::int32_t>(24);
  Buffer bx = make_buffer_fn<std::int32_t>(s, [](std::int64_t i) { return i; }), ba(DType::i32, Shape{3, 4}), bb(DType::i32, Shape{2, 4});
  interpret(g, bx, ba, bb);
  EXPECT_EQ(contents<std::int32_t>(ba), gather(xs, region(s, {at(1), range(0, 3), range(0, 4)})));
  EXPECT_EQ(contents<std::int32_t>(bb), gather(xs, region(s, {range(0, 2), at(2), range(0, 4)})));
  EXPECT_EQ(contents<std::int32_t>(bb), (std::vector<std::int32_t>{8, 9, 10, 11, 20, 21, 22, 23}));
}

TEST(Views, DynamicSizeSlice) {
  Graph g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 2, 4> y) {
    auto v = x.at(ds(1, 2), ds(3, 4));
    static_assert(std::is_same_v<decltype(v), Ref<const float, extents<dyn, dyn>, Vmem>>);
    EXPECT_EQ(v.shape(), (Shape{2, 4}));
    y.store(v.load());
  });
  const auto xs = iota_data<float>(32);
  Buffer bx = make_buffer_fn<float>(base48, [](std::int64_t i) { return i; }), by(DType::f32, Shape{2, 4});
  interpret(g, bx, by);
  EXPECT_TRUE(elements_match(contents<float>(by), gather(xs, region(base48, {range(1, 2), range(3, 4)}))));
  EXPECT_TRUE(elements_match(contents<float>(by), std::vector<float>{11, 12, 13, 14, 19, 20, 21, 22}));
}

TEST(Views, StridedSlices) {
  Graph g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 4> odd_cols, VmemRef<float, 2, 3> corners,
                     VmemRef<float, 2> last) {
    odd_cols.store(x.at(all, ds(1, 4, 2)).load());
    corners.store(x.at(ds(0, 2, 3), ds(0, 3, 3)).load());
    last.store(x.at(3, ds(6, 2, 1)).load());
  });
  const auto xs = iota_data<float>(32);
  Buffer bx = make_buffer_fn<float>(base48, [](std::int64_t i) { return i; }), bo(DType::f32, Shape{4, 4}), bc(DType::f32, Shape{2, 3}),
         bl(DType::f32, Shape{2});
  interpret(g, bx, bo, bc, bl);
  EXPECT_TRUE(elements_match(contents<float>(bo), gather(xs, region(base48, {range(0, 4), range(1, 4, 2)}))));
  // Rows 0 and 3, columns 0, 3 and 6.
  EXPECT_TRUE(elements_match(contents<float>(bc), std::vector<float>{0, 3, 6, 24, 27, 30}));
  EXPECT_TRUE(elements_match(contents<float>(bl), std::vector<float>{30, 31}));
}

TEST(Views, FixedSizeSlicesKeepTheExtentInTheType) {
  Graph g = trace([](VmemRef<const double, 4, 8> x, VmemRef<double, 3, 8> a, VmemRef<double, 4, 2> b) {
    auto v = x.at(ds<3>(1));
    static_assert(std::is_same_v<decltype(v), Ref<const double, extents<3, 8>, Vmem>>);
    auto w = x.at(all, ds<2>(1, 5));  // columns 1 and 6
    static_assert(std::is_same_v<decltype(w.load()), Value<double, extents<4, 2>>>);
    a.store(v.load());
    b.store(w.load());
  });
  const auto xs = iota_data<double>(32);
  Buffer bx = make_buffer_fn<double>(base48, [](std::int64_t i) { return i; }), ba(DType::f64, Shape{3, 8}), bb(DType::f64, Shape{4, 2});
  interpret(g, bx, ba, bb);
  EXPECT_TRUE(elements_match(contents<double>(ba), gather(xs, region(base48, {range(1, 3), range(0, 8)}))));
  EXPECT_TRUE(elements_match(contents<double>(bb), std::vector<double>{1, 6, 9, 14, 17, 22, 25, 30}));
}

TEST(Views, AllKeepsTheWholeDimension) {
  Graph g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y, VmemRef<float, 8> z) {
    static_assert(std::is_same_v<decltype(x.at(all, all)), Ref<const float, extents<4, 8>, Vmem>>);
    y.store(x.at(all).load() + x.at(all, all).load());
    z.store(x.at(all, all).at(3).load());
  });
  const auto xs = iota_data<float>(32);
  Buffer bx = make_buffer_fn<float>(base48, [](std::int64_t i) { return i; }), by(DType::f32, base48), bz(DType::f32, Shape{8});
  interpret(g, bx, by, bz);
  std::vector<float> want;
  for (float v : xs) want.push_back(2 * v);
  EXPECT_TRUE(elements_match(contents<float>(by), want));
  EXPECT_TRUE(elements_match(contents<float>(bz), gather(xs, region(base48, {at(3), range(0, 8)}))));
}

TEST(Views, ZeroSizeSliceAtTheEndIsEmptyAndValid) {
  Graph g = trace([](VmemRef<float, 8> x) {
    auto e = x.at(ds(8, 0));
    EXPECT_EQ(e.shape(), Shape{0});
    e.store(e.load());
    x.at(ds(3, 0)) += x.at(ds(0, 0)).load();
  });
  Buffer bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return i; });
  interpret(g, bx);
  EXPECT_TRUE(elements_match(contents<float>(bx), iota_data<float>(8)));
}

// ---------------------------------------------------------------- nested views

TEST(Views, NestedViewsCompose) {
  Graph g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 2, 3> a, VmemRef<float, 8> b, VmemRef<float, 2> c) {
    auto rows = x.at(ds(1, 3));                  // rows 1..3
    a.store(rows.at(ds(1, 2), ds(2, 3)).load());  // rows 2..3, columns 2..4
    b.store(rows.at(1).load());                   // row 2
    c.store(x.at(all, ds(1, 4, 2)).at(2, ds(1, 2)).load());  // row 2, columns {1,3,5,7}[1..2] = {3, 5}
  });
  const auto xs = iota_data<float>(32);
  Buffer bx = make_buffer_fn<float>(base48, [](std::int64_t i) { return i; }), ba(DType::f32, Shape{2, 3}), bb(DType::f32, Shape{8}),
         bc(DType::f32, Shape{2});
  interpret(g, bx, ba, bb, bc);
  EXPECT_TRUE(elements_match(contents<float>(ba), gather(xs, region(base48, {range(2, 2), range(2, 3)}))));
  EXPECT_TRUE(elements_match(contents<float>(bb), gather(xs, region(base48, {at(2), range(0, 8)}))));
  EXPECT_TRUE(elements_match(contents<float>(bc), std::vector<float>{19, 21}));
}

TEST(Views, NestedStridesMultiply) {
  Graph g = trace([](VmemRef<const std::int32_t, 32> x, VmemRef<std::int32_t, 3> a, VmemRef<std::int32_t, 2> b,
                     VmemRef<std::int32_t, 3> c) {
    auto odd = x.at(ds(1, 15, 2));             // 1, 3, ..., 29
    a.store(odd.at(ds(1, 3, 2)).load());       // odd[1], odd[3], odd[5] = 3, 7, 11
    b.store(odd.at(ds(2, 3, 3)).at(ds(1, 2)).load());  // odd[{2,5,8}][1..2] = odd[5], odd[8] = 11, 17
    c.store(x.at(ds(2, 8, 3)).at(ds(1, 3, 3)).load());  // x[{2,5,...,23}][{1,4,7}] = 5, 14, 23
  });
  const auto xs = iota_data<std::int32_t>(32);
  Buffer bx = make_buffer_fn<std::int32_t>(Shape{32}, [](std::int64_t i) { return i; }), ba(DType::i32, Shape{3}),
         bb(DType::i32, Shape{2}), bc(DType::i32, Shape{3});
  interpret(g, bx, ba, bb, bc);
  // 1 + 2 * (1 + 2k) = 3 + 4k.
  EXPECT_EQ(contents<std::int32_t>(ba), (std::vector<std::int32_t>{3, 7, 11}));
  EXPECT_EQ(contents<std::int32_t>(bb), (std::vector<std::int32_t>{11, 17}));
  EXPECT_EQ(contents<std::int32_t>(bc), gather(xs, region(Shape{32}, {range(2 + 3 * 1, 3, 3 * 3)})));
  EXPECT_EQ(contents<std::int32_t>(bc), (std::vector<std::int32_t>{5, 14, 23}));
}

TEST(Views, NestedStaticOutOfBoundsIsCheckedAgainstTheParentView) {
  // Rows 0..1 of x; asking for rows 1..2 of that view exceeds it although the
  // base Ref has 4 rows.
  auto f = [] {
    trace([](VmemRef<float, 4, 8> x) {
      auto top = x.at(ds(0, 2));
      top.at(ds(1, 2)).store(1.0f);
    });
  };
  EXPECT_TRUE(throws_with<TraceError>(f, {"out of bounds"}));
}

// ---------------------------------------------------------------- stores and accumulations

TEST(Views, StoresThroughEveryKindOfView) {
  Graph g = trace([](VmemRef<float, 4, 8> y) {
    y.at(0).store(full<float, 8>(1.0f));                        // integer index
    y.at(1, ds(2, 3)).store(iota<float, 3>(0) + 10.0f);        // ds
    y.at(2, ds(0, 4, 2)).store(full<float, 4>(2.0f));          // strided ds
    y.at(ds<2>(2), 7).store(full<float, 2>(3.0f));             // ds<N> and an integer
    y.at(all, 6).at(ds(1, 2)).store(full<float, 2>(4.0f));     // nested: column 6, rows 1..2
    y.at(3, 1).store(5.0f);                                     // a single element, from a literal
  });
  Buffer by = filled<float>(base48, -1.0f);
  interpret(g, by);
  std::vector<float> want(32, -1.0f);
  auto set = [&](std::int64_t r, std::int64_t c, float v) { want[static_cast<std::size_t>(r * 8 + c)] = v; };
  for (int c = 0; c < 8; ++c) set(0, c, 1.0f);
  for (int k = 0; k < 3; ++k) set(1, 2 + k, 10.0f + static_cast<float>(k));
  for (int k = 0; k < 4; ++k) set(2, 2 * k, 2.0f);
  set(2, 7, 3.0f);
  set(3, 7, 3.0f);
  set(1, 6, 4.0f);
  set(2, 6, 4.0f);
  set(3, 1, 5.0f);
  EXPECT_TRUE(elements_match(contents<float>(by), want));
}

// x_ref[...] -= v, *= v, /= v as a Pallas kernel writes them: a load, the
// op and a store through the view, on the user's line.
TEST(Views, CompoundAssignmentsThroughViews) {
  int line = 0;
  Graph g = trace([&](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y) {
    y.store(x.load());
    y *= 2.0f;                                   // a literal, whole view
    y.at(1) -= x.at(1).load();                   // a Value, one row
    y.at(ds(2, 2), ds(0, 4, 2)) /= full<float, 2, 4>(4.0f);  // strided columns
    line = __LINE__; y.at(3, 7) *= Scalar<float>(-1.0f);     // one element, a scalar Value
  });
  Buffer bx = make_buffer_fn<float>(base48, [](std::int64_t i) { return i; }), by = filled<float>(base48, 0.0f);
  interpret(g, bx, by);
  std::vector<float> want;
  for (std::int64_t i = 0; i < 32; ++i) {
    const std::int64_t r = i / 8, c = i % 8;
    float v = 2.0f * static_cast<float>(i);
    if (r == 1) v -= static_cast<float>(i);
    if (r >= 2 && c % 2 == 0 && c < 8) v /= 4.0f;
    if (r == 3 && c == 7) v = -v;
    want.push_back(v);
  }
  EXPECT_TRUE(elements_match(contents<float>(by), want));
  // The last update's load, multiply and store carry the line it was written on.
  std::size_t on_line = 0;
  for (std::size_t o = 0; o < g.num_ops(); ++o)
    if (g.op(static_cast<OpId>(o)).loc.line == static_cast<std::uint32_t>(line)) ++on_line;
  EXPECT_GE(on_line, 3u);
}

TEST(Views, CompoundAssignmentOfIntegers) {
  Graph g = trace([](VmemRef<std::int32_t, 8> y) {
    y *= 3;
    y -= 1;
    y /= 2;
  });
  Buffer by = make_buffer_fn<std::int32_t>(Shape{8}, [](std::int64_t i) { return i; });
  interpret(g, by);
  std::vector<std::int32_t> want;
  for (std::int32_t i = 0; i < 8; ++i) want.push_back((3 * i - 1) / 2);
  EXPECT_EQ(contents<std::int32_t>(by), want);
}

// Pallas' ref[i]: on a rank-1 Ref the element's value (a Scalar, usable as
// an index and in arithmetic) or, assigned to, a store; on rank 2 the row
// view, so ref[i][j] is an element.
TEST(Views, SubscriptReadsAndWritesElements) {
  Graph g = trace([](SmemRef<const std::int32_t, 4> lengths, SmemRef<std::int32_t, 3> state,
                     VmemRef<float, 2, 4> m, VmemRef<const float, 4> row) {
    const auto b = lengths[1];                // a load
    state[0] = b * 2;                         // a store
    state[1] = lengths[lengths[3]];           // an element as an index
    state[2] = state[0];                      // element to element
    m[1][2] = row[3] + 1.0f;                  // rank 2: the row, then the element
    m[0].store(row.load() * cast<float>(lengths[0]));
  });
  Buffer bl = make_buffer<std::int32_t>(Shape{4}, {3, 7, 9, 2}), bs = filled<std::int32_t>(Shape{3}, -1);
  Buffer bm = filled<float>(Shape{2, 4}, 0.0f), br = make_buffer<float>(Shape{4}, {1, 2, 3, 4});
  interpret(g, bl, bs, bm, br);
  EXPECT_EQ(contents<std::int32_t>(bs), (std::vector<std::int32_t>{14, 9, 14}));
  EXPECT_EQ(contents<float>(bm), (std::vector<float>{3, 6, 9, 12, 0, 0, 5, 0}));
}

// pl.load(ref, mask=, other=) and pl.store(ref, v, mask=): the masked-off
// elements read `other` and keep the Ref's.
TEST(Views, MaskedLoadAndStore) {
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y, VmemRef<float, 8> z) {
    const auto mask = iota<std::int32_t, 8>(0) % 3 == 0;  // elements 0, 3, 6
    y.store(load(x, mask, -1.0f));
    store(z, x.load() * 10.0f, mask);
  });
  Buffer bx = make_buffer<float>(Shape{8}, {1, 2, 3, 4, 5, 6, 7, 8}), by = filled<float>(Shape{8}, 0.0f),
         bz = filled<float>(Shape{8}, 0.5f);
  interpret(g, bx, by, bz);
  EXPECT_EQ(contents<float>(by), (std::vector<float>{1, -1, -1, 4, -1, -1, 7, -1}));
  EXPECT_EQ(contents<float>(bz), (std::vector<float>{10, 0.5f, 0.5f, 40, 0.5f, 0.5f, 70, 0.5f}));
}

TEST(Views, AccumThroughEveryKindOfView) {
  Graph g = trace([](VmemRef<std::int64_t, 4, 8> y) {
    y.at(0) += full<std::int64_t, 8>(1);
    y.at(1, ds(2, 3)) += iota<std::int64_t, 3>(0);
    y.at(ds(0, 2, 2), ds(1, 4, 2)) += full<std::int64_t, 2, 4>(100);  // rows 0, 2; odd columns
    y.at(ds<2>(2), 7) += full<std::int64_t, 2>(1000);
    y.at(all, 6).at(ds(1, 2)) += full<std::int64_t, 2>(7);
    refx::accum(y.at(3, 0), Scalar<std::int64_t>(-5));
    y.at(3, 0) += 2;  // a literal
  });
  Buffer by = make_buffer_fn<std::int64_t>(base48, [](std::int64_t i) { return i; });
  interpret(g, by);
  std::vector<std::int64_t> want = iota_data<std::int64_t>(32);
  auto add = [&](std::int64_t r, std::int64_t c, std::int64_t v) { want[static_cast<std::size_t>(r * 8 + c)] += v; };
  for (int c = 0; c < 8; ++c) add(0, c, 1);
  for (int k = 0; k < 3; ++k) add(1, 2 + k, k);
  for (int r : {0, 2})
    for (int c : {1, 3, 5, 7}) add(r, c, 100);
  add(2, 7, 1000);
  add(3, 7, 1000);
  add(1, 6, 7);
  add(2, 6, 7);
  add(3, 0, -5 + 2);
  EXPECT_EQ(contents<std::int64_t>(by), want);
}

TEST(Views, AccumAccumulatesAcrossCalls) {
  Graph g = trace([](VmemRef<float, 4> y, VmemRef<const float, 4> x) {
    y += x.load();
    y += x.load();
    y.at(ds(1, 2)) += x.at(ds(2, 2)).load();
  });
  Buffer by = refx::testing::make_buffer<float>(Shape{4}, {1, 1, 1, 1}), bx = refx::testing::make_buffer<float>(Shape{4}, {1, 2, 3, 4});
  interpret(g, by, bx);
  // y = 1 + 2x, then y[1] += x[2], y[2] += x[3].
  EXPECT_TRUE(elements_match(contents<float>(by), std::vector<float>{3, 5 + 3, 7 + 4, 9}));
}

TEST(Views, FreeFunctionSpellings) {
  Graph g = trace([](VmemRef<const float, 4> x, VmemRef<float, 4> y) {
    refx::store(y, refx::load(x.at(ds<4>(0))) * 3.0f);
    refx::accum(y.at(ds(2, 2)), refx::load(x.at(ds(0, 2))));
  });
  Buffer bx = refx::testing::make_buffer<float>(Shape{4}, {1, 2, 3, 4}), by(DType::f32, Shape{4});
  interpret(g, bx, by);
  EXPECT_TRUE(elements_match(contents<float>(by), std::vector<float>{3, 6, 9 + 1, 12 + 2}));
}

TEST(Views, StoreOverlappingCopyWithinOneRef) {
  // Shifting a Ref by one element through two overlapping views: the load
  // happens before the store, so the result is a clean shift.
  Graph g = trace([](VmemRef<std::int32_t, 8> x) { x.at(ds(1, 7)).store(x.at(ds(0, 7)).load()); });
  Buffer bx = make_buffer_fn<std::int32_t>(Shape{8}, [](std::int64_t i) { return i; });
  interpret(g, bx);
  EXPECT_EQ(contents<std::int32_t>(bx), (std::vector<std::int32_t>{0, 0, 1, 2, 3, 4, 5, 6}));
}

TEST(Views, ReadOnlyViewOfAWritableRef) {
  Graph g = trace([](VmemRef<float, 4> x, VmemRef<float, 2> y) {
    Ref<const float, extents<4>, Vmem> ro = x;  // the widening conversion
    y.store(ro.at(ds(1, 2)).load());
  });
  Buffer bx = refx::testing::make_buffer<float>(Shape{4}, {5, 6, 7, 8}), by(DType::f32, Shape{2});
  interpret(g, bx, by);
  EXPECT_TRUE(elements_match(contents<float>(by), std::vector<float>{6, 7}));
}

TEST(Views, BoolRefsThroughViews) {
  Graph g = trace([](VmemRef<bool, 2, 4> m) {
    m.at(0, ds(1, 2)).store(true);
    m.at(1) += m.at(0).load();  // accumulating bools is a logical or
  });
  Buffer bm = refx::testing::make_buffer<bool>(Shape{2, 4}, {false, false, false, true, true, false, false, false});
  interpret(g, bm);
  EXPECT_EQ(contents<bool>(bm), (std::vector<bool>{false, true, true, true, true, true, true, true}));
}

TEST(Views, DynamicSizeSlicesCombineWithScalars) {
  // ds(start, size) gives a dyn extent; scalar arithmetic on it must work.
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) { y.at(ds(i * 2, 2)).store(x.at(ds(i * 2, 2)).load() * 2.0f + 1.0f); });
  });
  Buffer bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return i; }), by = filled<float>(Shape{8}, 0.0f);
  interpret(g, bx, by);
  std::vector<float> want;
  for (int i = 0; i < 8; ++i) want.push_back(2.0f * static_cast<float>(i) + 1.0f);
  EXPECT_TRUE(elements_match(contents<float>(by), want));
}

TEST(Views, SmemScalarsAndViews) {
  Graph g = trace([](SmemRef<std::int32_t, 4> s, SmemRef<std::int32_t> total) {
    total.store(s.at(0).load() + s.at(3).load());
    s.at(ds(1, 2)).store(s.at(ds<2>(2)).load() * 10);
  });
  Buffer bs = refx::testing::make_buffer<std::int32_t>(Shape{4}, {1, 2, 3, 4}), bt(DType::i32, Shape{});
  interpret(g, bs, bt);
  EXPECT_EQ(contents<std::int32_t>(bt)[0], 5);
  EXPECT_EQ(contents<std::int32_t>(bs), (std::vector<std::int32_t>{1, 30, 40, 4}));
}

// ---------------------------------------------------------------- traced starts

TEST(TracedStarts, LoopIndexInDs) {
  // y[2i : 2i+2] = 2 * x[2i : 2i+2] for i in [0, 4).
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 8> y) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) { y.at(ds(i * 2, 2)).store(x.at(ds<2>(i * 2)).load() * 2.0f); });
  });
  Buffer bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return i + 1; }), by = filled<float>(Shape{8}, 0.0f);
  interpret(g, bx, by);
  std::vector<float> want;
  for (int i = 0; i < 8; ++i) want.push_back(2.0f * static_cast<float>(i + 1));
  EXPECT_TRUE(elements_match(contents<float>(by), want));
}

TEST(TracedStarts, LoopIndexAsIntegerIndexAndFixedSlice) {
  // Row i of y gets columns [i, i+4) of x's row i; and y's column 7 gets x[i, 0].
  Graph g = trace([](VmemRef<const std::int32_t, 4, 8> x, VmemRef<std::int32_t, 4, 8> y) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) {
      auto window = x.at(i, ds<4>(i));
      static_assert(std::is_same_v<decltype(window.load()), Value<std::int32_t, extents<4>>>);
      y.at(i, ds<4>(0)).store(window.load());
      y.at(i, 7).store(x.at(i, 0).load());
    });
  });
  const auto xs = iota_data<std::int32_t>(32);
  Buffer bx = make_buffer_fn<std::int32_t>(base48, [](std::int64_t i) { return i; }), by = filled<std::int32_t>(base48, -1);
  interpret(g, bx, by);
  std::vector<std::int32_t> want(32, -1);
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 4; ++k) want[static_cast<std::size_t>(i * 8 + k)] = xs[static_cast<std::size_t>(i * 8 + i + k)];
    want[static_cast<std::size_t>(i * 8 + 7)] = xs[static_cast<std::size_t>(i * 8)];
  }
  EXPECT_EQ(contents<std::int32_t>(by), want);
}

TEST(TracedStarts, StridedSliceWithTracedStart) {
  // Even elements from offset 2i: x[2i], x[2i+2], x[2i+4].
  Graph g = trace([](VmemRef<const float, 16> x, VmemRef<float, 3, 3> y) {
    fori_loop(0, 3, [&](Scalar<std::int32_t> i) { y.at(i).store(x.at(ds(i * 2, 3, 2)).load()); });
  });
  Buffer bx = make_buffer_fn<float>(Shape{16}, [](std::int64_t i) { return i; }), by(DType::f32, Shape{3, 3});
  interpret(g, bx, by);
  std::vector<float> want;
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) want.push_back(static_cast<float>(2 * i + 2 * k));
  EXPECT_TRUE(elements_match(contents<float>(by), want));
}

TEST(TracedStarts, FromAScalarReadFromARef) {
  // The offset comes from memory, not from a loop.
  Graph g = trace([](SmemRef<const std::int32_t> off, VmemRef<const float, 8> x, VmemRef<float, 3> y) {
    Scalar<std::int32_t> o = off.load();
    y.store(x.at(ds(o + 1, 3)).load());
  });
  for (std::int32_t o : {0, 2, 4}) {
    Buffer bo = Buffer::scalar<std::int32_t>(o), bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return 10 * i; }),
           by(DType::f32, Shape{3});
    interpret(g, bo, bx, by);
    EXPECT_TRUE(elements_match(contents<float>(by), std::vector<float>{10.0f * static_cast<float>(o + 1),
                                                                        10.0f * static_cast<float>(o + 2),
                                                                        10.0f * static_cast<float>(o + 3)}))
        << "offset " << o;
  }
}

TEST(TracedStarts, Int64Starts) {
  Graph g = trace([](VmemRef<const double, 8> x, VmemRef<double, 4, 2> y) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) {
      Scalar<std::int64_t> j = cast<std::int64_t>(i);
      y.at(j).store(x.at(ds(j * 2, 2)).load());
    });
  });
  Buffer bx = make_buffer_fn<double>(Shape{8}, [](std::int64_t i) { return i * 1.5; }), by(DType::f64, Shape{4, 2});
  interpret(g, bx, by);
  std::vector<double> want;
  for (int i = 0; i < 8; ++i) want.push_back(i * 1.5);
  EXPECT_TRUE(elements_match(contents<double>(by), want));
}

TEST(TracedStarts, NestedViewsWithTracedStarts) {
  Graph g = trace([](VmemRef<const std::int32_t, 32> x, VmemRef<std::int32_t, 4, 2> a, VmemRef<std::int32_t, 4, 2> b,
                     VmemRef<std::int32_t, 4, 2> c) {
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) {
      // static outer (stride 2), traced inner: x[1 + 2 * (i + k)]
      a.at(i).store(x.at(ds(1, 15, 2)).at(ds(i, 2)).load());
      // traced outer, static strided inner: x[3i + 2 + 3k]
      b.at(i).store(x.at(ds(i * 3, 9)).at(ds(2, 2, 3)).load());
      // traced outer and traced inner: x.at(ds(i, 16, 2)).at(ds(i, 2)) = x[i + 2 * (i + k)]
      c.at(i).store(x.at(ds(i, 16, 2)).at(ds(i, 2)).load());
    });
  });
  Buffer bx = make_buffer_fn<std::int32_t>(Shape{32}, [](std::int64_t i) { return i; });
  Buffer ba(DType::i32, Shape{4, 2}), bb(DType::i32, Shape{4, 2}), bc(DType::i32, Shape{4, 2});
  interpret(g, bx, ba, bb, bc);
  std::vector<std::int32_t> wa, wb, wc;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 2; ++k) {
      wa.push_back(1 + 2 * (i + k));
      wb.push_back(3 * i + 2 + 3 * k);
      wc.push_back(i + 2 * (i + k));
    }
  EXPECT_EQ(contents<std::int32_t>(ba), wa);
  EXPECT_EQ(contents<std::int32_t>(bb), wb);
  EXPECT_EQ(contents<std::int32_t>(bc), wc);
}

TEST(TracedStarts, MixedIndexTypesInNestedViews) {
  // Parent start a (i32) = 3, child start b (i64) = 2: base elements 5 and 6.
  Graph g = trace([](VmemRef<float, 16> x, SmemRef<const std::int32_t> a, SmemRef<const std::int64_t> b) {
    x.at(ds(a.load(), 8)).at(ds(b.load(), 2)).store(1.0f);
  });
  Buffer bx = filled<float>(Shape{16}, 0.0f), ba = Buffer::scalar<std::int32_t>(3), bb = Buffer::scalar<std::int64_t>(2);
  interpret(g, bx, ba, bb);
  std::vector<float> want(16, 0.0f);
  want[5] = want[6] = 1.0f;
  EXPECT_EQ(contents<float>(bx), want);
}

TEST(TracedStarts, Int64StartInsideAStaticStridedView) {
  // Row 1 of rows 1..2 is row 2; columns {1, 3, ..., 15}[b .. b+1] with b = 2 are 5 and 7.
  Graph g = trace([](VmemRef<float, 4, 16> x, SmemRef<const std::int64_t> b) {
    x.at(ds(1, 2), ds(1, 8, 2)).at(1, ds(b.load(), 2)).store(1.0f);
  });
  Buffer bx = filled<float>(Shape{4, 16}, 0.0f), bb = Buffer::scalar<std::int64_t>(2);
  interpret(g, bx, bb);
  std::vector<float> want(64, 0.0f);
  want[2 * 16 + 5] = want[2 * 16 + 7] = 1.0f;
  EXPECT_EQ(contents<float>(bx), want);
}

TEST(TracedStarts, AccumThroughTracedViews) {
  // A sliding-window sum: y[k] = sum_{i<4} x[i + k].
  Graph g = trace([](VmemRef<const float, 8> x, VmemRef<float, 5> y) {
    y.store(0.0f);
    fori_loop(0, 4, [&](Scalar<std::int32_t> i) { y += x.at(ds<5>(i)).load(); });
  });
  Buffer bx = make_buffer_fn<float>(Shape{8}, [](std::int64_t i) { return i * i; }), by(DType::f32, Shape{5});
  interpret(g, bx, by);
  std::vector<float> want(5, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 5; ++k) want[static_cast<std::size_t>(k)] += static_cast<float>((i + k) * (i + k));
  EXPECT_TRUE(elements_match(contents<float>(by), want));
}

// ---------------------------------------------------------------- bounds

TEST(Bounds, DynamicOutOfBoundsStartIsARuntimeError) {
  int line = 0;
  Graph g = trace([&](VmemRef<const float, 8> x, VmemRef<float, 4> y) {
    fori_loop(0, 3, [&](Scalar<std::int32_t> i) {
      line = __LINE__; y.store(x.at(ds(i * 3, 4)).load());  // i = 2: 6..9
    });
  });
  Buffer bx = filled<float>(Shape{8}, 1.0f), by(DType::f32, Shape{4});
  EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(g, bx, by); },
                                        {"out of bounds", "index 6", "size 8", at_line("views_test.cpp", line)}));
}

TEST(Bounds, DynamicOutOfBoundsIntegerIndexAndNegativeStart) {
  Graph g = trace([](SmemRef<const std::int32_t> k, VmemRef<float, 4, 8> y) { y.at(k.load()).store(1.0f); });
  Graph h = trace([](SmemRef<const std::int32_t> k, VmemRef<float, 4, 8> y) { y.at(all, ds(k.load(), 2)).store(1.0f); });
  Buffer by(DType::f32, base48);
  for (std::int32_t bad : {4, 100, -1}) {
    Buffer bk = Buffer::scalar<std::int32_t>(bad);
    EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(g, bk, by); }, {"out of bounds"})) << bad;
  }
  for (std::int32_t bad : {7, -1, -2}) {
    Buffer bk = Buffer::scalar<std::int32_t>(bad);
    EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(h, bk, by); }, {"out of bounds"})) << bad;
  }
  // In-bounds edges run.
  Buffer b3 = Buffer::scalar<std::int32_t>(3), b6 = Buffer::scalar<std::int32_t>(6);
  EXPECT_NO_THROW(interpret(g, b3, by));
  EXPECT_NO_THROW(interpret(h, b6, by));
}

TEST(Bounds, StaticOutOfBoundsSlicesAreTraceErrors) {
  auto use = [](auto make) {
    return [make] { trace([&](VmemRef<float, 8> x) { make(x).store(0.0f); }); };
  };
  EXPECT_TRUE(throws_with<TraceError>(use([](auto x) { return x.at(ds(6, 4)); }), {"out of bounds", "6..9", "size 8"}));
  EXPECT_TRUE(throws_with<TraceError>(use([](auto x) { return x.at(ds(2, 4, 2)); }), {"out of bounds", "2..8"}));
  EXPECT_TRUE(throws_with<TraceError>(use([](auto x) { return x.at(ds(-1, 2)); }), {"out of bounds"}));
  EXPECT_TRUE(throws_with<TraceError>(use([](auto x) { return x.at(ds(9, 0)); }), {"out of bounds"}));
  EXPECT_TRUE(throws_with<TraceError>(use([](auto x) { return x.at(ds<2>(7)); }), {"out of bounds"}));
  // The last in-bounds positions are fine.
  EXPECT_NO_THROW(use([](auto x) { return x.at(ds(4, 4)); })());
  EXPECT_NO_THROW(use([](auto x) { return x.at(ds(1, 4, 2)); })());
  EXPECT_NO_THROW(use([](auto x) { return x.at(ds(7, 1, 5)); })());
}

TEST(Bounds, StaticIntegerIndexOutOfBounds) {
  auto f = [] { trace([](VmemRef<float, 4, 8> x) { (void)x.at(1, 8).load(); }); };
  EXPECT_TRUE(throws_with<TraceError>(f, {"out of bounds", "dimension 1", "size 8"}));
  auto g = [] { trace([](VmemRef<float, 4, 8> x) { (void)x.at(4).load(); }); };
  EXPECT_TRUE(throws_with<TraceError>(g, {"out of bounds", "dimension 0", "size 4"}));
}

TEST(Bounds, DynamicStartEscapingItsParentViewIsARuntimeError) {
  // `first` is x[0..4); first.at(ds(i, 2)) with i = 3 covers first[3..4], and
  // first[4] is outside `first` (it is x[4], still inside x).
  Graph g = trace([](SmemRef<const std::int32_t> k, VmemRef<float, 8> x) {
    auto first = x.at(ds(0, 4));
    first.at(ds(k.load(), 2)).store(1.0f);
  });
  Buffer bk = Buffer::scalar<std::int32_t>(3), bx = filled<float>(Shape{8}, 0.0f);
  EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(g, bk, bx); }, {"out of bounds"}));
  // x[4] must not have been written.
  EXPECT_EQ(contents<float>(bx)[4], 0.0f);
}

TEST(Bounds, DynamicStartInsideItsParentViewWritesThere) {
  // first = x[0..4), i = 2: first[2..3] = x[2..3]. A strided parent: every
  // second element of y from 0, three of them (y[0], y[2], y[4]); i - 1 = 1
  // writes its [1..2] = y[2], y[4].
  Graph g = trace([](SmemRef<const std::int32_t> k, VmemRef<float, 8> x, VmemRef<float, 8> y) {
    x.at(ds(0, 4)).at(ds(k.load(), 2)).store(1.0f);
    y.at(ds(0, 3, 2)).at(ds(k.load() - 1, 2)).store(2.0f);
  });
  Buffer bk = Buffer::scalar<std::int32_t>(2), bx = filled<float>(Shape{8}, 0.0f), by = filled<float>(Shape{8}, 0.0f);
  interpret(g, bk, bx, by);
  EXPECT_EQ(contents<float>(bx), (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(contents<float>(by), (std::vector<float>{0, 0, 2, 0, 2, 0, 0, 0}));
}

TEST(Bounds, DynamicStartEscapingAStridedParentIsARuntimeError) {
  // The strided parent y[0], y[2], y[4]; i = 2 covers its [2..3], and [3]
  // would be y[6]: inside y, outside the parent.
  Graph g = trace([](SmemRef<const std::int32_t> k, VmemRef<float, 8> y) {
    y.at(ds(0, 3, 2)).at(ds(k.load(), 2)).store(2.0f);
  });
  Buffer bk = Buffer::scalar<std::int32_t>(2), by = filled<float>(Shape{8}, 0.0f);
  EXPECT_TRUE(throws_with<RuntimeError>([&] { interpret(g, bk, by); }, {"out of bounds", "size 3"}));
  EXPECT_EQ(contents<float>(by), std::vector<float>(8, 0.0f));
}

}  // namespace
