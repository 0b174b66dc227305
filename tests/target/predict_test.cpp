// predict.hpp: the modelled time of refx's ring collectives against the
// closed forms of a ring on a torus (N - 1 steps, each a chunk over one link
// plus one hop's latency), on 1-D and 2-D tori; determinism; the call's
// results; what the target has no figure for (docs/targets.md, "Predicted
// time").

#include <gtest/gtest.h>

#include <cstdio>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>

namespace {
using namespace refx;
using collectives::Algorithm;
using collectives::Direction;
using collectives::ProgramOptions;

Array iota_shards(std::int32_t devices, Shape shape) {
  return Array::generate<float>(devices, shape,
                                [](std::int32_t d, std::int64_t i) { return float(d * 1000 + i % 997); });
}

/// The closed form of a ring collective of `steps` steps, each moving
/// `chunk_bytes` over one link of `t` and crossing one hop.
/// `hops_per_step` is 2 for refx's combining rings: before each combining
/// copy the receiver's "free" signal crosses the hop the other way.
double ring_seconds(const Target& t, std::int64_t steps, double chunk_bytes, int hops_per_step = 1) {
  return double(steps) * (chunk_bytes / t.ici.link_rate() + hops_per_step * t.ici.hop_latency_seconds);
}

void expect_within_5_percent(const Prediction& p, double closed_form) {
  // The figures for docs/predict-validation.md's table.
  std::printf("%-24s on %s: closed form %10.3f us  predicted %10.3f us  %+.2f %%\n", p.kernel.c_str(), p.mesh.c_str(),
              closed_form * 1e6, p.seconds() * 1e6, (p.seconds() / closed_form - 1) * 100);
  for (std::size_t d = 0; d < p.devices.size(); ++d)
    EXPECT_NEAR(p.devices[d].seconds / closed_form, 1.0, 0.05) << "device " << d << "\n" << p.to_string();
}

Prediction all_gather(const Mesh& mesh, const std::string& axis, std::int64_t block, const Target& t) {
  const std::int32_t n = mesh.axis_size(axis);
  const Executable exe =
      collectives::all_gather_program<float>(mesh, block, {.axis = axis, .algorithm = Algorithm::ring});
  Array x = iota_shards(mesh.size(), Shape{block});
  Array out = Array::empty(mesh.size(), DType::f32, Shape{n, block});
  return predict(exe, t, x, out);
}

// v5p rings close on an axis of a multiple of 4 chips: 8 chips, 256 KiB blocks.
TEST(PredictClosedForm, RingAllGatherOn1DTorus) {
  const std::int64_t block = 1 << 16;
  const Prediction p = all_gather(Mesh{{"x", 8}}, "x", block, targets::v5p());
  expect_within_5_percent(p, ring_seconds(targets::v5p(), 7, 4.0 * block));
  for (const DevicePrediction& d : p.devices) {
    EXPECT_EQ(d.bytes_sent, 7 * 4 * block);
    EXPECT_NEAR(d.exposed_communication_seconds / d.seconds, 1.0, 0.05);  // nothing to hide it behind
  }
}

// A 2-D torus: the gather runs along one axis, the other axis' rings beside it.
TEST(PredictClosedForm, RingAllGatherAlongEitherAxisOf2DTorus) {
  const std::int64_t block = 1 << 15;
  const Mesh mesh{{"x", 4}, {"y", 8}};
  expect_within_5_percent(all_gather(mesh, "x", block, targets::v5p()), ring_seconds(targets::v5p(), 3, 4.0 * block));
  expect_within_5_percent(all_gather(mesh, "y", block, targets::v5p()), ring_seconds(targets::v5p(), 7, 4.0 * block));
}

// v5e closes a ring only on a full axis of 16 chips.
TEST(PredictClosedForm, RingAllGatherOnV5eAxisOf16) {
  const std::int64_t block = 1 << 14;
  const Mesh mesh{{"x", 2}, {"y", 16}};
  expect_within_5_percent(all_gather(mesh, "y", block, targets::v5e()), ring_seconds(targets::v5e(), 15, 4.0 * block));
}

TEST(PredictClosedForm, RingReduceScatterOn1DTorus) {
  const std::int64_t elements = 1 << 18, n = 8;
  const Mesh mesh{{"x", 8}};
  const Executable exe = collectives::reduce_scatter_program<float>(mesh, elements, {.algorithm = Algorithm::ring});
  Array x = iota_shards(8, Shape{elements});
  Array out = Array::empty(8, DType::f32, Shape{elements / n});
  const Prediction p = predict(exe, targets::v5p(), x, out);
  expect_within_5_percent(p, ring_seconds(targets::v5p(), n - 1, 4.0 * elements / n, 2));
}

// All-reduce = reduce-scatter + all-gather: 2 (N - 1) combining steps of a
// chunk, each with its handshake.
TEST(PredictClosedForm, RingAllReduceUnidirectional) {
  const std::int64_t elements = 1 << 18, n = 8;
  const Mesh mesh{{"x", 8}};
  const Executable exe = collectives::all_reduce_program<float>(mesh, elements, {.algorithm = Algorithm::ring});
  Array x = iota_shards(8, Shape{elements});
  Array out = Array::empty(8, DType::f32, Shape{elements});
  const Prediction p = predict(exe, targets::v5p(), x, out);
  expect_within_5_percent(p, ring_seconds(targets::v5p(), 2 * (n - 1), 4.0 * elements / n, 2));
}

// The bidirectional ring sends half of each chunk each way round at once:
// where bandwidth dominates (2 MiB chunks) it takes about half the time.
TEST(PredictClosedForm, BidirectionalAllReduceUsesBothDirectionsOfTheLinks) {
  const std::int64_t elements = 1 << 22;
  const Mesh mesh{{"x", 8}};
  double seconds[2];
  for (const Direction dir : {Direction::unidirectional, Direction::bidirectional}) {
    const Executable exe =
        collectives::all_reduce_program<float>(mesh, elements, {.direction = dir, .algorithm = Algorithm::ring});
    Array x = iota_shards(8, Shape{elements});
    Array out = Array::empty(8, DType::f32, Shape{elements});
    seconds[dir == Direction::bidirectional] = predict(exe, targets::v5p(), x, out).seconds();
  }
  EXPECT_GT(seconds[0] / seconds[1], 1.8);
  EXPECT_LT(seconds[0] / seconds[1], 2.0);
}

// Both lanes of the bidirectional ring signal their senders before either
// waits, so a step costs one half-chunk transfer and the two hops of a
// combining step, as the unidirectional ring's: 14 x (C/2W + 2L). Issuing
// lane B's handshake after lane A's wait cost a third hop a step (+30 % here).
TEST(PredictClosedForm, BidirectionalAllReduceOverlapsItsLanesHandshakes) {
  const std::int64_t elements = 1 << 18, n = 8;
  const Mesh mesh{{"x", 8}};
  const Executable exe = collectives::all_reduce_program<float>(
      mesh, elements, {.direction = Direction::bidirectional, .algorithm = Algorithm::ring});
  Array x = iota_shards(8, Shape{elements});
  Array out = Array::empty(8, DType::f32, Shape{elements});
  const Prediction p = predict(exe, targets::v5p(), x, out);
  expect_within_5_percent(p, ring_seconds(targets::v5p(), 2 * (n - 1), 4.0 * elements / n / 2, 2));
}

// The model runs the call: its results are the runtime's.
TEST(Predict, ComputesTheCallsResults) {
  const std::int64_t elements = 4096;
  const Mesh mesh{{"x", 4}};
  const Executable exe = collectives::all_reduce_program<float>(mesh, elements);
  Array x = iota_shards(4, Shape{elements});
  Array expected = exe(x)[0];
  Array out = Array::empty(4, DType::f32, Shape{elements});
  predict(exe, targets::v5p(), x, out);
  for (std::int32_t d = 0; d < 4; ++d) EXPECT_EQ(out.to_host<float>(d), expected.to_host<float>(d)) << "device " << d;
}

// The same prediction whatever runtime (worker count) compiled the program.
TEST(Predict, IsDeterministic) {
  const Mesh mesh{{"x", 4}, {"y", 4}};
  std::vector<std::string> timelines;
  for (unsigned workers : {1u, 3u, 8u}) {
    Runtime rt(RuntimeOptions{.workers = workers});
    const Executable exe = collectives::all_reduce_program<float>(
        mesh, 1 << 12, {.direction = Direction::bidirectional, .algorithm = Algorithm::ring}, rt);
    Array x = Array::generate<float>(
        16, Shape{1 << 12}, [](std::int32_t d, std::int64_t i) { return float(d + i); }, rt);
    Array out = Array::empty(16, DType::f32, Shape{1 << 12}, rt);
    for (int run = 0; run < 2; ++run) timelines.push_back(predict(exe, targets::v5p(), x, out).timeline_json());
  }
  for (const std::string& t : timelines) EXPECT_EQ(t, timelines[0]);
  EXPECT_NE(timelines[0].find("\"cat\":\"copy\""), std::string::npos);
}

// Copies above RuntimeOptions::inline_copy_bytes move on the runtime's
// workers (in chunks, as the runtime moves them) while the model runs on: the results are still the runtime's, and
// the prediction the same with one worker (every copy on the model's
// thread) or three.
TEST(Predict, MovesLargeCopiesOnTheWorkersWithTheSameResultsAndTimes) {
  const std::int64_t elements = 1 << 20;  // 1 MiB chunks: two 512 KiB pieces each
  const Mesh mesh{{"x", 4}};
  std::vector<std::string> timelines;
  for (unsigned workers : {1u, 3u}) {
    Runtime rt(RuntimeOptions{.workers = workers});
    const Executable exe = collectives::all_reduce_program<float>(
        mesh, elements, {.direction = Direction::bidirectional, .algorithm = Algorithm::ring}, rt);
    Array x = Array::generate<float>(
        4, Shape{elements}, [](std::int32_t d, std::int64_t i) { return float((d * 7 + i) % 13); }, rt);
    Array expected = exe(x)[0];
    Array out = Array::empty(4, DType::f32, Shape{elements}, rt);
    timelines.push_back(predict(exe, targets::v5p(), x, out).timeline_json());
    for (std::int32_t d = 0; d < 4; ++d)
      ASSERT_EQ(out.to_host<float>(d), expected.to_host<float>(d)) << workers << " workers, device " << d;
  }
  EXPECT_EQ(timelines[0], timelines[1]);
}

// A vector op on a target without a vector rate is listed, not guessed; with
// one, it takes its elements at that rate.
TEST(Predict, SaysWhatTheTargetHasNoFigureFor) {
  const auto k = [](VmemRef<const float, 64, 128> x, VmemRef<float, 64, 128> y) { y.store(exp(x.load())); };
  const Executable exe = kernel(k).passes({.fuse = false}).compile(Mesh{{"x", 1}});  // exp as one op
  Array x = iota_shards(1, Shape{64, 128});
  Array y = Array::empty(1, DType::f32, Shape{64, 128});
  const Prediction unknown = predict(exe, targets::v5e(), x, y);
  ASSERT_EQ(unknown.unknown.size(), 1u) << unknown.to_string();
  EXPECT_EQ(unknown.unknown[0].op, "exp");
  EXPECT_NE(unknown.unknown[0].reason.find("vector_ops_per_second"), std::string::npos);
  EXPECT_NE(unknown.to_string().find("not modelled"), std::string::npos);
  Target t = targets::v5e();
  t.vector_ops_per_second = 1e12;
  const Prediction known = predict(exe, t, x, y);
  EXPECT_TRUE(known.unknown.empty()) << known.to_string();
  EXPECT_DOUBLE_EQ(known.devices[0].busy_seconds, 64.0 * 128 / 1e12);
}

TEST(Predict, RefusesAMeshThatDoesNotLayOutOnTheTorus) {
  const Mesh mesh{{"x", 17}};
  const Executable exe = collectives::all_reduce_program<float>(mesh, 64);
  Array x = iota_shards(17, Shape{64});
  Array out = Array::empty(17, DType::f32, Shape{64});
  try {
    predict(exe, targets::v5e(), x, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "refx: predict: the mesh {x=17} does not lay out on v5e's torus (16x16) one mesh axis per torus "
                 "axis: axis 'x' has 17 devices and torus axis 0 has 16 chips");
  }
}

}  // namespace

namespace {
using namespace refx;

TEST(Predict, NamesADeadlockInModelledTime) {
  const auto k = [](HbmRef<float, 8> x) {
    run_scoped([&](RegularSemaphore never) { semaphore_wait(never, 1); });
    (void)x;
  };
  const Executable exe = kernel(k).passes({.verify = false}).compile(Mesh{{"x", 2}});
  Array x = Array::empty(2, DType::f32, Shape{8});
  try {
    predict(exe, targets::v5p(), x);
    FAIL() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("refx: predict: deadlock in modelled time: device 0 waits at"),
              std::string::npos)
        << e.what();
  }
}

// A prediction names its ops and their source lines (the timeline's), also
// after its Executable is gone; an id that is not one of its ops is refused.
TEST(Predict, NamesItsOpsAfterTheExecutableIsGone) {
  const auto k = [](VmemRef<const float, 64, 128> x, VmemRef<float, 64, 128> y) { y.store(exp(x.load())); };
  const int line = __LINE__ - 1;
  Array x = iota_shards(1, Shape{64, 128});
  Array y = Array::empty(1, DType::f32, Shape{64, 128});
  Prediction p;
  {
    const Executable exe = kernel(k).passes({.fuse = false}).compile(Mesh{{"x", 1}});
    p = predict(exe, targets::v5e(), x, y);
  }
  ASSERT_EQ(p.ops.size(), 1u);
  bool saw_exp = false;
  for (const PredictedOp& o : p.ops[0]) {
    if (p.op_name(o.op) != "exp") continue;
    saw_exp = true;
    EXPECT_NE(p.op_source(o.op).find(fmt::format("predict_test.cpp:{}", line)), std::string::npos) << p.op_source(o.op);
    EXPECT_NE(p.timeline_json().find(p.op_source(o.op)), std::string::npos);
  }
  EXPECT_TRUE(saw_exp);
  EXPECT_THROW((void)p.op_name(-1), Error);
  EXPECT_THROW((void)p.op_source(1 << 20), Error);
  EXPECT_THROW((void)Prediction{}.op_name(0), Error);
}

TEST(Predict, ChecksItsArguments) {
  const Executable exe = collectives::all_reduce_program<float>(Mesh{{"x", 4}}, 4);
  Array x = Array::empty(4, DType::f32, Shape{4});
  EXPECT_THROW(predict(exe, targets::v5p(), x), Error);
  Array wrong = Array::empty(4, DType::f32, Shape{8});
  EXPECT_THROW(predict(exe, targets::v5p(), x, wrong), Error);
  Target bad = targets::v5p();
  bad.ici.link_bytes_per_second = 0;
  EXPECT_THROW(predict(exe, bad, x, x), Error);
}

// ---- explain(): where a call's time goes.

// A ring of 4 chips in a line on v5e (rings close only over 16): the step
// that closes the ring crosses 3 hops back where a wraparound would cross 1,
// and explain() says so; its totals are the sums over the copies it names.
TEST(PredictExplain, TakesEachStepApartAndNamesAMissingWraparound) {
  const Mesh line{{"y", 4}};
  const std::int64_t block = 1 << 16;  // 256 KiB
  const Executable exe =
      collectives::all_gather_program<float>(line, block, {.axis = "y", .algorithm = collectives::Algorithm::ring});
  Array x = iota_shards(4, Shape{block});
  Array out = Array::empty(4, DType::f32, Shape{4, block});
  const Prediction p = predict(exe, targets::v5e(), TorusLayout{.axes = {{1}}}, x, out);
  const std::string e = p.explain();
  std::printf("%s", e.c_str());
  EXPECT_NE(e.find("(the slowest)"), std::string::npos) << e;
  EXPECT_NE(e.find("links 45 GB/s per direction working (peak 50 GB/s), 1.00 us per hop"), std::string::npos) << e;
  EXPECT_NE(e.find("3 hops where wraparound links would make 1 (rings close at multiples of 16 chips)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("a missing wraparound cost"), std::string::npos) << e;
  // Each copy the slowest device waited for: 256 KiB at 45 GB/s.
  EXPECT_NE(e.find(fmt::format("copy 0->1 of 256.0 KiB")), std::string::npos) << e;
  EXPECT_NE(e.find(fmt::format("{:.2f} us on the links ({:.2f} us at peak)", 262144 / 45e9 * 1e6, 262144 / 50e9 * 1e6)),
            std::string::npos)
      << e;
  // The ring closes on every device: some wait ended by a copy that crossed 3 hops.
  bool three = false;
  for (const PredictedCopy& c : p.copies) three |= c.hops == 3 && c.ring_hops == 1;
  EXPECT_TRUE(three);
  EXPECT_THROW((void)p.explain(4), Error);
}

// Two groups on the two TensorCores of each TPU7x chip gather along the
// same links at once: explain() shows the copies queued behind each other.
TEST(PredictExplain, ShowsCopiesQueuedBehindOthersOnSharedLinks) {
  const Mesh cores{{"x", 4}, {"c", 2}};  // c: the two TensorCores of a chip
  const std::int64_t block = 1 << 18;    // 1 MiB
  const Executable exe =
      collectives::all_gather_program<float>(cores, block, {.axis = "x", .algorithm = collectives::Algorithm::ring});
  Array x = iota_shards(8, Shape{block});
  Array out = Array::empty(8, DType::f32, Shape{4, block});
  const TorusLayout face{.slice = {2, 2, 1}, .axes = {{0, 1}, {}}, .serpentine = true};
  const Prediction p = predict(exe, targets::tpu7x(), face, x, out);
  const std::string e = p.explain();
  std::printf("%s", e.c_str());
  EXPECT_EQ(p.slice, "2x2x1");
  EXPECT_NE(e.find("queued behind other transfers"), std::string::npos) << e;
  for (const PredictedCopy& c : p.copies) EXPECT_LE(c.hops, 1) << "serpentine: every ring step is one hop";
  // Row by row, the ring's second step crosses the face's diagonal: 2 hops.
  const Prediction rows = predict(exe, targets::tpu7x(), TorusLayout{.slice = {2, 2, 1}, .axes = {{0, 1}, {}}}, x, out);
  std::int64_t most = 0;
  for (const PredictedCopy& c : rows.copies) most = std::max(most, c.hops);
  EXPECT_EQ(most, 2);
  EXPECT_GT(rows.seconds(), p.seconds());
}

}  // namespace
