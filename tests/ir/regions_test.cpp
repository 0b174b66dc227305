// may_overlap: exact for static (possibly strided) slices, conservative
// for traced starts, and never true across different Refs.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include <refx/refx.hpp>

#include "support/testing.hpp"

using namespace refx;

namespace {

using I32 = std::int32_t;

/// Traces `body` over two 1-D Refs of 64 elements and one (6, 10) Ref; the
/// body appends the views it makes to `ids`.
template <class F>
Graph views_of(std::vector<ViewId>& ids, F body) {
  return trace([&](VmemRef<float, 64> x, VmemRef<float, 64> y, VmemRef<float, 6, 10> m) { body(x, y, m, ids); });
}

bool overlap(const Graph& g, ViewId a, ViewId b) {
  const bool ab = may_overlap(g, a, b), ba = may_overlap(g, b, a);
  EXPECT_EQ(ab, ba) << "may_overlap is not symmetric for views " << a << " and " << b;
  return ab;
}

// ---------------------------------------------------------------- static slices

TEST(Regions, DisjointAndOverlappingStaticSlices) {
  std::vector<ViewId> v;
  Graph g = views_of(v, [](auto x, auto, auto, auto& ids) {
    ids = {x.at(ds(0, 4)).view(),  x.at(ds(4, 4)).view(),  x.at(ds(3, 4)).view(), x.at(ds(0, 64)).view(),
           x.at(ds(10, 2)).view(), x.at(ds(11, 1)).view(), x.at(ds(12, 5)).view(), x.view()};
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));  // [0,4) vs [4,8): adjacent
  EXPECT_TRUE(overlap(g, v[0], v[2]));   // [0,4) vs [3,7): element 3
  EXPECT_TRUE(overlap(g, v[1], v[2]));
  EXPECT_TRUE(overlap(g, v[0], v[0]));   // a view overlaps itself
  EXPECT_TRUE(overlap(g, v[3], v[4]));   // containment
  EXPECT_TRUE(overlap(g, v[4], v[5]));   // [10,12) vs [11,12)
  EXPECT_FALSE(overlap(g, v[4], v[6]));  // [10,12) vs [12,17)
  EXPECT_FALSE(overlap(g, v[5], v[6]));
  EXPECT_TRUE(overlap(g, v[7], v[6]));   // the whole Ref
}

TEST(Regions, TwoDimensionalSlices) {
  std::vector<ViewId> v;
  Graph g = views_of(v, [](auto, auto, auto m, auto& ids) {
    ids = {m.at(0).view(),                       // 0: row 0
           m.at(1).view(),                       // 1: row 1
           m.at(ds(0, 2)).view(),                // 2: rows 0..1
           m.at(all, 3).view(),                  // 3: column 3
           m.at(2).view(),                       // 4: row 2
           m.at(ds(0, 3), ds(0, 5)).view(),      // 5: top-left block
           m.at(ds(0, 3), ds(5, 5)).view(),      // 6: top-right block
           m.at(ds(3, 3), ds(0, 5)).view(),      // 7: bottom-left block
           m.at(ds(2, 3), ds(4, 3)).view(),      // 8: rows 2..4, columns 4..6: touches all three blocks
           m.at(4, ds(1, 2)).view()};            // 9: row 4, columns 1..2
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));
  EXPECT_TRUE(overlap(g, v[0], v[2]));
  EXPECT_TRUE(overlap(g, v[3], v[4]));  // a column and a row cross at (2, 3)
  EXPECT_FALSE(overlap(g, v[5], v[6]));  // same rows, disjoint columns
  EXPECT_FALSE(overlap(g, v[5], v[7]));  // same columns, disjoint rows
  EXPECT_FALSE(overlap(g, v[6], v[7]));  // disjoint in both
  EXPECT_TRUE(overlap(g, v[8], v[5]));
  EXPECT_TRUE(overlap(g, v[8], v[6]));
  EXPECT_TRUE(overlap(g, v[8], v[7]));
  EXPECT_TRUE(overlap(g, v[9], v[7]));
  EXPECT_FALSE(overlap(g, v[9], v[8]));  // row 4 columns 1..2 vs columns 4..6
  EXPECT_FALSE(overlap(g, v[9], v[3]));  // column 3 misses columns 1..2
}

TEST(Regions, StridedInterleavedSlices) {
  std::vector<ViewId> v;
  Graph g = views_of(v, [](auto x, auto, auto m, auto& ids) {
    ids = {x.at(ds(0, 32, 2)).view(),   // 0: even
           x.at(ds(1, 32, 2)).view(),   // 1: odd
           x.at(ds(0, 8, 3)).view(),    // 2: 0, 3, ..., 21
           x.at(ds(1, 8, 3)).view(),    // 3: 1, 4, ..., 22
           x.at(ds(1, 10, 5)).view(),   // 4: 1, 6, 11, ..., 46
           x.at(ds(0, 2, 4)).view(),    // 5: 0, 4
           x.at(ds(2, 3, 6)).view(),    // 6: 2, 8, 14
           x.at(ds(0, 4, 4)).view(),    // 7: 0, 4, 8, 12
           x.at(ds(7, 1)).view(),       // 8: 7
           m.at(all, ds(0, 5, 2)).view(),   // 9: even columns
           m.at(all, ds(1, 5, 2)).view()};  // 10: odd columns
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));  // even vs odd
  EXPECT_FALSE(overlap(g, v[2], v[3]));  // same stride, different residues
  EXPECT_TRUE(overlap(g, v[0], v[2]));   // 0, 6, 12 ...
  EXPECT_TRUE(overlap(g, v[3], v[4]));   // 1 is in both
  EXPECT_TRUE(overlap(g, v[1], v[4]));   // 1, 11, 21 ...
  EXPECT_TRUE(overlap(g, v[0], v[4]));   // 6 is even and in v[4]
  EXPECT_FALSE(overlap(g, v[5], v[6]));  // {0, 4} vs {2, 8, 14}: the residues agree mod 2 but the ranges miss
  EXPECT_TRUE(overlap(g, v[7], v[6]));   // 8
  EXPECT_TRUE(overlap(g, v[1], v[8]));   // 7 is odd
  EXPECT_FALSE(overlap(g, v[0], v[8]));
  EXPECT_FALSE(overlap(g, v[9], v[10]));
}

TEST(Regions, LargeStridedSlices) {
  std::vector<ViewId> v;
  Graph g = trace([&](VmemRef<float, 20000> x) {
    v = {x.at(ds(0, 10000, 2)).view(),  // even
         x.at(ds(1, 9999, 2)).view(),   // odd
         x.at(ds(0, 5000)).view(),
         x.at(ds(5000, 6000)).view(),
         x.at(ds(3, 6000, 3)).view()};  // 3, 6, ..., 18000
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));  // exact, whatever the size
  EXPECT_FALSE(overlap(g, v[2], v[3]));  // disjoint ranges
  EXPECT_TRUE(overlap(g, v[0], v[4]));   // 6
  EXPECT_TRUE(overlap(g, v[1], v[4]));   // 3
  EXPECT_TRUE(overlap(g, v[3], v[4]));
}

TEST(Regions, ZeroSizeViewsOverlapNothing) {
  std::vector<ViewId> v;
  Graph g = views_of(v, [](auto x, auto, auto m, auto& ids) {
    ids = {x.at(ds(5, 0)).view(), x.view(), m.at(ds(2, 0), all).view(), m.view()};
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));
  EXPECT_FALSE(overlap(g, v[0], v[0]));
  EXPECT_FALSE(overlap(g, v[2], v[3]));
}

TEST(Regions, NestedViewsAreComparedInBaseCoordinates) {
  std::vector<ViewId> v;
  Graph g = views_of(v, [](auto x, auto, auto m, auto& ids) {
    auto second_half = x.at(ds(32, 32));
    ids = {second_half.at(ds(0, 4)).view(),         // 0: base 32..35
           x.at(ds(0, 4)).view(),                   // 1: base 0..3
           x.at(ds(30, 4)).view(),                  // 2: base 30..33
           x.at(ds(0, 32, 2)).at(ds(1, 8, 2)).view(),  // 3: base 2, 6, 10, ..., 30
           x.at(ds(1, 16, 4)).view(),               // 4: base 1, 5, ... (odd)
           x.at(ds(2, 16, 4)).view(),               // 5: base 2, 6, ... (2 mod 4)
           m.at(ds(1, 4)).at(ds(1, 2), 3).view(),  // 6: rows 2..3, column 3
           m.at(3, ds(2, 4)).view(),                // 7: row 3, columns 2..5
           m.at(1).view()};                         // 8: row 1
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));  // both start at 0 in their parents, but not in the base
  EXPECT_TRUE(overlap(g, v[0], v[2]));
  EXPECT_FALSE(overlap(g, v[3], v[4]));
  EXPECT_TRUE(overlap(g, v[3], v[5]));
  EXPECT_TRUE(overlap(g, v[6], v[7]));   // (3, 3)
  EXPECT_FALSE(overlap(g, v[6], v[8]));  // row 1 is outside rows 2..3
}

TEST(Regions, DifferentRefsNeverOverlap) {
  std::vector<ViewId> v;
  Graph g = views_of(v, [](auto x, auto y, auto m, auto& ids) {
    ids = {x.view(), y.view(), x.at(ds(0, 4)).view(), y.at(ds(0, 4)).view(), m.view()};
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));
  EXPECT_FALSE(overlap(g, v[2], v[3]));
  EXPECT_FALSE(overlap(g, v[0], v[4]));
  EXPECT_TRUE(overlap(g, v[0], v[2]));
}

TEST(Regions, WholeViewCoversEverything) {
  std::vector<ViewId> v;
  ValueId base = no_id;
  Graph g = views_of(v, [&](auto x, auto, auto, auto& ids) {
    base = x.base();
    ids = {x.at(ds(63, 1)).view(), x.at(ds(0, 16, 4)).view()};
  });
  const ViewId whole = whole_view(g, base);
  EXPECT_EQ(g.view_shape(whole), Shape{64});
  EXPECT_TRUE(overlap(g, whole, v[0]));
  EXPECT_TRUE(overlap(g, whole, v[1]));
}

// ---------------------------------------------------------------- traced starts

TEST(Regions, TracedStartsAreConservativelyOverlapping) {
  std::vector<ViewId> v;
  Graph g = trace([&](VmemRef<float, 64> x, VmemRef<float, 8, 8> m, SmemRef<const I32> k) {
    auto i = k.load();
    v = {x.at(ds(i, 4)).view(),          // 0
         x.at(ds(i + 4, 4)).view(),      // 1: disjoint from 0 at run time, but refx cannot tell
         x.at(ds(40, 4)).view(),         // 2
         x.at(ds(i, 4, 2)).view(),       // 3
         x.at(ds(i + 1, 4, 2)).view(),   // 4
         m.at(i, ds(0, 4)).view(),       // 5
         m.at(i, ds(4, 4)).view(),       // 6: disjoint columns: no overlap whatever i is
         m.at(ds(0, 4), i).view(),       // 7
         m.at(ds(4, 4), i + 1).view(),   // 8: disjoint rows
         m.at(i + 1, ds(2, 4)).view()};  // 9
  });
  EXPECT_TRUE(overlap(g, v[0], v[1]));
  EXPECT_TRUE(overlap(g, v[0], v[2]));
  EXPECT_TRUE(overlap(g, v[0], v[0]));
  EXPECT_TRUE(overlap(g, v[3], v[4]));
  EXPECT_FALSE(overlap(g, v[5], v[6]));  // a static dimension still separates them
  EXPECT_FALSE(overlap(g, v[7], v[8]));
  EXPECT_TRUE(overlap(g, v[5], v[9]));   // rows unknown, columns 2..3 shared
  EXPECT_TRUE(overlap(g, v[6], v[9]));   // columns 4..5 shared
}

TEST(Regions, TracedStartInsideALoop) {
  std::vector<ViewId> v;
  Graph g = trace([&](VmemRef<float, 64> x) {
    fori_loop(0, 8, [&](Scalar<I32> i) {
      v.push_back(x.at(ds(i * 8, 8)).view());
      v.push_back(x.at(ds(i * 8 + 8, 8)).view());
    });
  });
  ASSERT_EQ(v.size(), 2u);
  EXPECT_TRUE(overlap(g, v[0], v[1]));
}

TEST(Regions, LargeProgressionsWhoseResiduesAgreeButNeverMeet) {
  // {0, 1000, ..., 99000} and {1, 1002, ..., 49050}: gcd(1000, 1001) = 1, the
  // ranges overlap, but the first common element would be 1,000,000.
  std::vector<ViewId> v;
  Graph g = trace([&](VmemRef<float, 100000> x) {
    v = {x.at(ds(0, 100, 1000)).view(), x.at(ds(1, 50, 1001)).view(), x.at(ds(0, 100, 1001)).view(),
         x.at(ds(12, 3000, 30)).view(), x.at(ds(7, 3000, 45)).view()};
  });
  EXPECT_FALSE(overlap(g, v[0], v[1]));
  EXPECT_FALSE(must_overlap(g, v[0], v[1], true));
  EXPECT_TRUE(overlap(g, v[0], v[2]));  // 0 is in both
  EXPECT_TRUE(must_overlap(g, v[0], v[2], true));
  // 12 + 30i = 7 + 45j needs 5 = 15(3j - 2i): impossible (the gcd rule).
  EXPECT_FALSE(overlap(g, v[3], v[4]));
}

TEST(Regions, SurelyOverlapIsSoundAndExactForStaticViews) {
  std::vector<ViewId> v;
  Graph g = trace([&](VmemRef<float, 64> x, VmemRef<float, 64> y, VmemRef<float, 8, 8> m, SmemRef<const I32> k) {
    auto i = k.load();
    v = {x.at(ds(0, 4)).view(),       // 0
         x.at(ds(3, 4)).view(),       // 1: shares 3 with 0
         x.at(ds(4, 4)).view(),       // 2: disjoint from 0
         y.at(ds(0, 4)).view(),       // 3: another Ref
         x.at(ds(i, 4)).view(),       // 4: traced
         x.at(ds(i, 4)).view(),       // 5: the same traced start again
         x.at(ds(i, 2)).view(),       // 6: same start, different size
         m.at(i, ds(0, 4)).view(),    // 7
         m.at(i, ds(2, 4)).view(),    // 8: same traced row, overlapping columns
         m.at(i, ds(4, 4)).view(),    // 9: same traced row, disjoint columns
         x.at(ds(i, 0)).view()};      // 10: empty
  });
  EXPECT_TRUE(must_overlap(g, v[0], v[1], true));
  EXPECT_FALSE(must_overlap(g, v[0], v[2], true));
  EXPECT_FALSE(must_overlap(g, v[0], v[3], true));
  EXPECT_FALSE(must_overlap(g, v[0], v[4], true));  // unknown counts as no
  EXPECT_TRUE(must_overlap(g, v[4], v[5], true));
  EXPECT_TRUE(must_overlap(g, v[4], v[4], true));
  EXPECT_TRUE(must_overlap(g, v[4], v[6], true));  // both hold element i, whatever their sizes
  EXPECT_TRUE(must_overlap(g, v[7], v[8], true));
  EXPECT_FALSE(must_overlap(g, v[7], v[9], true));
  EXPECT_FALSE(must_overlap(g, v[10], v[10], true));
  // Whatever is surely overlapping may overlap.
  for (ViewId a : v)
    for (ViewId b : v)
      if (must_overlap(g, a, b, true)) {
        EXPECT_TRUE(may_overlap(g, a, b)) << a << " " << b;
      }
}

TEST(Regions, AgreesWithBruteForceOnLargeRandomStrides) {
  // Long progressions with large strides (beyond any enumeration shortcut).
  constexpr std::int64_t n = 1 << 20;
  std::mt19937 rng(4242);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  struct S {
    std::int64_t start, size, stride;
  };
  std::vector<S> slices;
  std::vector<ViewId> ids;
  Graph g = trace([&](VmemRef<float, n> x) {
    for (int k = 0; k < 40; ++k) {
      S s;
      s.stride = pick(100, 5000);
      s.start = pick(0, 20000);
      s.size = pick(60, std::min<std::int64_t>(200, (n - 1 - s.start) / s.stride + 1));
      slices.push_back(s);
      ids.push_back(x.at(ds(s.start, s.size, s.stride)).view());
    }
  });
  std::size_t meets = 0;
  for (std::size_t a = 0; a < ids.size(); ++a)
    for (std::size_t b = 0; b < ids.size(); ++b) {
      std::set<std::int64_t> ea;
      for (std::int64_t k = 0; k < slices[a].size; ++k) ea.insert(slices[a].start + k * slices[a].stride);
      bool truth = false;
      for (std::int64_t k = 0; k < slices[b].size && !truth; ++k) truth = ea.count(slices[b].start + k * slices[b].stride) > 0;
      meets += truth;
      ASSERT_EQ(may_overlap(g, ids[a], ids[b]), truth) << a << " vs " << b;
      ASSERT_EQ(must_overlap(g, ids[a], ids[b], true), truth) << a << " vs " << b;
    }
  EXPECT_GT(meets, ids.size());  // more than the diagonal
}

// ---------------------------------------------------------------- exhaustive check

struct Slice1 {
  std::int64_t start, size, stride;
};

std::set<std::int64_t> elements(const Slice1& s) {
  std::set<std::int64_t> e;
  for (std::int64_t k = 0; k < s.size; ++k) e.insert(s.start + k * s.stride);
  return e;
}

bool intersect(const std::set<std::int64_t>& a, const std::set<std::int64_t>& b) {
  for (auto x : a)
    if (b.count(x)) return true;
  return false;
}

TEST(Regions, AgreesWithBruteForceOnRandomStaticSlices) {
  constexpr std::int64_t n = 24;
  std::mt19937 rng(12345);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  auto random_slice = [&] {
    Slice1 s;
    s.stride = pick(1, 5);
    s.start = pick(0, n - 1);
    s.size = pick(0, (n - 1 - s.start) / s.stride + 1);
    return s;
  };
  // 1-D and nested (a slice of a slice, composed by hand).
  std::vector<Slice1> slices;
  std::vector<ViewId> ids;
  Graph g = trace([&](VmemRef<float, n> x) {
    for (int k = 0; k < 60; ++k) {
      const Slice1 s = random_slice();
      slices.push_back(s);
      ids.push_back(x.at(ds(s.start, s.size, s.stride)).view());
    }
    for (int k = 0; k < 40; ++k) {
      const Slice1 outer = random_slice();
      if (outer.size == 0) continue;
      const std::int64_t istride = pick(1, 3), istart = pick(0, outer.size - 1);
      const std::int64_t isize = pick(0, (outer.size - 1 - istart) / istride + 1);
      slices.push_back({outer.start + istart * outer.stride, isize, outer.stride * istride});
      ids.push_back(x.at(ds(outer.start, outer.size, outer.stride)).at(ds(istart, isize, istride)).view());
    }
  });
  std::size_t overlapping = 0, disjoint = 0;
  for (std::size_t a = 0; a < ids.size(); ++a)
    for (std::size_t b = 0; b < ids.size(); ++b) {
      const bool truth = intersect(elements(slices[a]), elements(slices[b]));
      (truth ? overlapping : disjoint) += 1;
      ASSERT_EQ(may_overlap(g, ids[a], ids[b]), truth)
          << "[" << slices[a].start << " +" << slices[a].size << " :" << slices[a].stride << "] vs [" << slices[b].start
          << " +" << slices[b].size << " :" << slices[b].stride << "]";
    }
  // The sample exercises both outcomes.
  EXPECT_GT(overlapping, 100u);
  EXPECT_GT(disjoint, 100u);
}

TEST(Regions, AgreesWithBruteForceOnRandom2DSlices) {
  std::mt19937 rng(777);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  auto random_slice = [&](std::int64_t n) {
    Slice1 s;
    s.stride = pick(1, 3);
    s.start = pick(0, n - 1);
    s.size = pick(1, (n - 1 - s.start) / s.stride + 1);
    return s;
  };
  std::vector<std::pair<Slice1, Slice1>> slices;
  std::vector<ViewId> ids;
  Graph g = trace([&](VmemRef<float, 6, 10> m) {
    for (int k = 0; k < 80; ++k) {
      const Slice1 r = random_slice(6), c = random_slice(10);
      slices.push_back({r, c});
      ids.push_back(m.at(ds(r.start, r.size, r.stride), ds(c.start, c.size, c.stride)).view());
    }
  });
  for (std::size_t a = 0; a < ids.size(); ++a)
    for (std::size_t b = a; b < ids.size(); ++b) {
      const bool truth = intersect(elements(slices[a].first), elements(slices[b].first)) &&
                         intersect(elements(slices[a].second), elements(slices[b].second));
      ASSERT_EQ(overlap(g, ids[a], ids[b]), truth) << a << " vs " << b;
    }
}

}  // namespace
