// predict.hpp against closed forms beyond predict_test.cpp's 1-D and 2-D
// rings: ring collectives along each axis of a 3-D torus (v5p 4x4x4), the
// collective matmul's communication hidden or not across widths of b, and
// TorusLayout (a mesh placed on other torus axes, folded over a slice, and
// the layouts that cannot be) (docs/targets.md, "Validation").

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;
using collectives::Algorithm;
using collectives::Direction;

Array iota_shards(std::int32_t devices, Shape shape) {
  return Array::generate<float>(devices, shape,
                                [](std::int32_t d, std::int64_t i) { return float(d * 1000 + i % 997); });
}

/// `steps` ring steps, each a chunk over one link plus `hops` hops' latency.
double ring_seconds(const Target& t, std::int64_t steps, double chunk_bytes, double hops) {
  return double(steps) * (chunk_bytes / t.ici.link_rate() + hops * t.ici.hop_latency_seconds);
}

void expect_within_5_percent(const Prediction& p, double closed_form, const std::string& what) {
  // The figures for docs/targets.md's validation table.
  std::printf("%-36s closed form %10.3f us  predicted %10.3f us  %+.2f %%\n", what.c_str(), closed_form * 1e6,
              p.seconds() * 1e6, (p.seconds() / closed_form - 1) * 100);
  for (std::size_t d = 0; d < p.devices.size(); ++d)
    ASSERT_NEAR(p.devices[d].seconds / closed_form, 1.0, 0.05) << what << ", device " << d << "\n" << p.to_string();
}

const Mesh cube{{"x", 4}, {"y", 4}, {"z", 4}};  // a v5p cube: every axis a ring of 4

Prediction gather(const Mesh& mesh, const std::string& axis, std::int64_t block, const Target& t,
                  const TorusLayout& layout = {}) {
  const Executable exe =
      collectives::all_gather_program<float>(mesh, block, {.axis = axis, .algorithm = Algorithm::ring});
  Array x = iota_shards(mesh.size(), Shape{block});
  Array out = Array::empty(mesh.size(), DType::f32, Shape{mesh.axis_size(axis), block});
  return predict(exe, t, layout, x, out);
}

// Along each axis of the cube: 3 steps of one block over one link, one hop
// each; the 16 rings of the other two axes run beside it on their own links.
TEST(PredictClosedForm3D, RingAllGatherAlongEachAxisOfA3DTorus) {
  const std::int64_t block = 1 << 14;  // 64 KiB
  for (const char* axis : {"x", "y", "z"})
    expect_within_5_percent(gather(cube, axis, block, targets::v5p()), ring_seconds(targets::v5p(), 3, 4.0 * block, 1),
                            std::string("all-gather, 64 KiB, along ") + axis);
}

// Combining rings: N - 1 steps of a chunk, each with the receiver's "free"
// signal crossing the hop back first (2 hops a step).
TEST(PredictClosedForm3D, RingReduceScatterAndAllReduceOnA3DTorus) {
  const std::int64_t elements = 1 << 18, n = 4;  // 1 MiB per device: 256 KiB chunks
  const Target& t = targets::v5p();
  {
    const Executable exe =
        collectives::reduce_scatter_program<float>(cube, elements, {.axis = "z", .algorithm = Algorithm::ring});
    Array x = iota_shards(64, Shape{elements});
    Array out = Array::empty(64, DType::f32, Shape{elements / n});
    expect_within_5_percent(predict(exe, t, x, out), ring_seconds(t, n - 1, 4.0 * elements / n, 2),
                            "reduce-scatter along z");
  }
  {
    const Executable exe =
        collectives::all_reduce_program<float>(cube, elements, {.axis = "y", .algorithm = Algorithm::ring});
    Array x = iota_shards(64, Shape{elements});
    Array out = Array::empty(64, DType::f32, Shape{elements});
    expect_within_5_percent(predict(exe, t, x, out), ring_seconds(t, 2 * (n - 1), 4.0 * elements / n, 2),
                            "all-reduce along y");
  }
  {
    // Bidirectional: half of each chunk each way round at once; the two
    // lanes' handshakes overlap (2 hops a step).
    const Executable exe = collectives::all_reduce_program<float>(
        cube, elements, {.axis = "x", .direction = Direction::bidirectional, .algorithm = Algorithm::ring});
    Array x = iota_shards(64, Shape{elements});
    Array out = Array::empty(64, DType::f32, Shape{elements});
    expect_within_5_percent(predict(exe, t, x, out), ring_seconds(t, 2 * (n - 1), 2.0 * elements / n, 2),
                            "bidirectional all-reduce along x");
  }
}

// The collective matmul's step: the block goes on to the right neighbour
// (its bytes over one link and one hop) while this device multiplies the
// block it has (2 m k cols at the matrix unit's peak). The copy's wait
// exposes max(0, copy - product) in each of the N - 1 steps that send.
// A matrix unit 16 times slower than v5p's puts the crossover at widths that
// are quick to compute here. Compiled without the schedule pass: it runs
// every copy start (and the waits later starts depend on) before the
// products, which serves the threaded runtime but leaves nothing to overlap
// the ring with; predicted as scheduled, the whole ring is exposed.
Prediction collective_matmul(const Target& t, std::int64_t m, std::int64_t k, std::int64_t cols, bool schedule) {
  constexpr std::int32_t n = 4;
  using M = Ref<bf16, extents<dyn, dyn>, Vmem>;
  using CM = Ref<const bf16, extents<dyn, dyn>, Vmem>;
  const Executable exe = kernel([](CM a, CM b, M out) { collectives::collective_matmul(a, b, out, "x"); })
                             .passes({.schedule = schedule})
                             .compile(Mesh{{"x", n}}, {Shape{m, k}, Shape{k, cols}, Shape{n * m, cols}});
  Array a = Array::generate<bf16>(n, Shape{m, k}, [](std::int32_t d, std::int64_t i) { return float((d + i) % 3); });
  Array b = Array::generate<bf16>(n, Shape{k, cols}, [](std::int32_t, std::int64_t i) { return float(i % 2); });
  Array out = Array::empty(n, DType::bf16, Shape{n * m, cols});
  return predict(exe, t, a, b, out);
}

TEST(PredictCollectiveMatmul, HidesTheRingWhereTheProductOutlastsTheCopy) {
  constexpr std::int64_t m = 128, k = 256, n = 4;
  Target t = targets::v5p();
  t.name = "v5p with a matrix unit 16x slower";
  for (MatmulRate& r : t.matmul) r.ops_per_second /= 16;
  const double peak = t.matmul_rate(DType::bf16)->ops_per_second;
  const double copy = m * k * 2.0 / t.ici.link_rate() + t.ici.hop_latency_seconds;
  int hidden = 0, exposed = 0;
  for (const std::int64_t cols : {128, 256, 1024, 2048}) {
    const Prediction p = collective_matmul(t, m, k, cols, false);
    const double product = 2.0 * m * k * std::max<std::int64_t>(cols, 128) / peak;  // n padded to 128
    const double expected = (n - 1) * std::max(0.0, copy - product);
    std::printf("cols %4lld: product %.3f us, copy %.3f us: exposed %.3f us, predicted %.3f us\n",
                static_cast<long long>(cols), product * 1e6, copy * 1e6, expected * 1e6,
                p.devices[0].exposed_communication_seconds * 1e6);
    for (const DevicePrediction& d : p.devices) {
      EXPECT_NEAR(d.busy_seconds, n * product, 1e-3 * n * product) << cols << "\n" << p.to_string();
      EXPECT_NEAR(d.exposed_communication_seconds, expected, 0.05 * (n - 1) * copy) << cols << "\n" << p.to_string();
    }
    (expected == 0 ? hidden : exposed) += 1;
    // As scheduled: the ring's copies and the waits later starts need
    // first, the products after them: at least the waits of all but the
    // last copy exposed, and never faster.
    const Prediction scheduled = collective_matmul(t, m, k, cols, true);
    EXPECT_GE(scheduled.devices[0].exposed_communication_seconds, 0.95 * (n - 2) * copy) << scheduled.to_string();
    if (expected == 0) {
      EXPECT_GT(scheduled.seconds(), p.seconds()) << cols;
    } else {
      EXPECT_GE(scheduled.seconds(), p.seconds()) << cols;
    }
  }
  EXPECT_EQ(hidden, 2);  // 1024 and 2048 columns
  EXPECT_EQ(exposed, 2);
}

// [snippet:torus-layouts]
const TorusLayout x_on_axis_2{.axes = {{2}, {0}, {1}}};              // {x=24, y=2, z=2}: x on v5p's 24-chip torus axis
const TorusLayout folded_2x2{.slice = {2, 2, 1}, .axes = {{0, 1}}};  // {x=4} over a 2x2 slice, row by row
// [/snippet]

// TorusLayout: mesh {x=24, y=2, z=2} does not fit v5p's 16x16x24 with mesh
// axis i on torus axis i; placed with x on the torus' 24-chip axis it does,
// and its 24 closes a ring (a multiple of 4).
TEST(PredictLayout, PlacesMeshAxesOnOtherTorusAxes) {
  const Mesh mesh{{"x", 24}, {"y", 2}, {"z", 2}};
  const std::int64_t block = 1 << 10;
  EXPECT_THROW(gather(mesh, "x", block, targets::v5p()), Error);
  const Prediction p = gather(mesh, "x", block, targets::v5p(), x_on_axis_2);
  EXPECT_EQ(p.slice, "2x2x24");
  expect_within_5_percent(p, ring_seconds(targets::v5p(), 23, 4.0 * block, 1), "x along torus axis 2");
  for (const PredictedCopy& c : p.copies)
    if (c.from != c.to) {
      EXPECT_EQ(c.hops, 1) << c.from << "->" << c.to;
    }
}

// A mesh axis folded over two torus axes: {x=4} on a 2x2 slice of v5p,
// device d on chip (d / 2, d % 2). 2 is no multiple of 4: no wraparound, so
// a copy crosses |row difference| + |column difference| links.
TEST(PredictLayout, FoldsAMeshAxisOverASlice) {
  const Mesh mesh{{"x", 4}};
  const std::int64_t block = 1 << 12;
  const Prediction folded = gather(mesh, "x", block, targets::v5p(), folded_2x2);
  EXPECT_EQ(folded.slice, "2x2x1");
  int remote = 0;
  for (const PredictedCopy& c : folded.copies) {
    if (c.from == c.to) continue;
    ++remote;
    EXPECT_EQ(c.hops, std::abs(c.from / 2 - c.to / 2) + std::abs(c.from % 2 - c.to % 2)) << c.from << "->" << c.to;
  }
  EXPECT_EQ(remote, 4 * 3);
  // The ring's steps 1 -> 2 and 3 -> 0 cross two links: slower than the
  // ring of 4 on one torus axis.
  const Prediction ring = gather(mesh, "x", block, targets::v5p());
  EXPECT_EQ(ring.slice, "4x1x1");
  EXPECT_GT(folded.seconds(), ring.seconds() + 2 * targets::v5p().ici.hop_latency_seconds);
}

std::string layout_error(const Mesh& mesh, const Target& t, const TorusLayout& layout) {
  const Executable exe = collectives::all_reduce_program<float>(mesh, 8);
  Array x = iota_shards(mesh.size(), Shape{8});
  Array out = Array::empty(mesh.size(), DType::f32, Shape{8});
  try {
    predict(exe, t, layout, x, out);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PredictLayout, NamesWhatMakesALayoutImpossible) {
  const Mesh mesh{{"x", 4}, {"y", 4}};
  EXPECT_EQ(layout_error(mesh, targets::v5e(), TorusLayout{.axes = {{0}, {0}}}),
            "refx: predict: the layout of mesh {x=4, y=4} on v5e's torus (16x16) is impossible: torus axis 0 is "
            "named by mesh axes 'x' and 'y'");
  const auto says = [&](const TorusLayout& l, const Target& t, const char* why) {
    const std::string e = layout_error(mesh, t, l);
    EXPECT_EQ(e.rfind("refx: predict: the layout of mesh {x=4, y=4} on ", 0), 0u) << e;
    EXPECT_NE(e.find(why), std::string::npos) << e;
  };
  says(TorusLayout{.axes = {{0}}}, targets::v5e(), "it places 1 mesh axes and the mesh has 2");
  says(TorusLayout{.axes = {{0}, {2}}}, targets::v5e(),
       "mesh axis 'y' names torus axis 2, and the torus has axes 0 to 1");
  says(TorusLayout{.axes = {{0, 1}, {2}}}, targets::v5p(),
       "mesh axis 'x' runs along torus axes 0, 1: give the slice's");
  says(TorusLayout{.slice = {4, 4}, .axes = {{0}, {1}}}, targets::v5p(), "the slice has 2 axes and the torus 3");
  says(TorusLayout{.slice = {2, 4, 1}, .axes = {{0}, {1}}}, targets::v5p(),
       "mesh axis 'x' has 4 devices and the slice 2 chips along torus axes 0");
  says(TorusLayout{.slice = {4, 4, 2}, .axes = {{0}, {1}}}, targets::v5p(),
       "the slice has 2 chips on torus axis 2, which no mesh axis runs along");
  says(TorusLayout{.slice = {32, 1, 1}, .axes = {{0}, {1}}}, targets::v5p(),
       "the slice has 32 chips on torus axis 0, which has 16");
  // A mesh larger than the torus, however it is laid out.
  const Mesh big{{"x", 32}, {"y", 16}};
  EXPECT_NE(
      layout_error(big, targets::v5e(), TorusLayout{.axes = {{1}, {0}}}).find("32 chips on torus axis 1, which has 16"),
      std::string::npos);
}

}  // namespace
