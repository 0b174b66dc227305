// Targets as data (target/target.hpp): the shipped generations are valid
// and hold what docs/targets.md states about them; validate() names the
// first missing or impossible figure of a user-described one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <refx/target/target.hpp>

namespace {
using namespace refx;
using ::testing::HasSubstr;

std::string validation_error(const Target& t) {
  try {
    validate(t);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Targets, ShippedGenerationsAreValid) {
  ASSERT_EQ(targets::all().size(), 5u);
  for (const Target* t : targets::all()) EXPECT_EQ(validation_error(*t), "") << t->name;
}

// The facts docs/targets.md builds its rules on, one per generation.
TEST(Targets, ShippedFactsTheChecksRelyOn) {
  EXPECT_EQ(targets::v4().cores_per_chip, 2);
  EXPECT_EQ(targets::v5p().cores_per_chip, 2);
  EXPECT_EQ(targets::v5e().cores_per_chip, 1);
  EXPECT_EQ(targets::v6e().cores_per_chip, 1);
  EXPECT_EQ(targets::v4().ici.dims.size(), 3u);  // 3D tori
  EXPECT_EQ(targets::v5p().ici.dims.size(), 3u);
  EXPECT_EQ(targets::v5e().ici.dims.size(), 2u);  // 2D tori
  EXPECT_EQ(targets::v5e().max_chips(), 256);
  // jax's is_matmul_supported: e5m2 from v5e on, e4m3fn on TPU7x only; no int8 on TPU7x.
  EXPECT_NE(targets::tpu7x().matmul_rate(DType::f8e4m3fn), nullptr);
  EXPECT_EQ(targets::tpu7x().matmul_rate(DType::i8), nullptr);
  EXPECT_EQ(targets::v4().matmul_rate(DType::f8e5m2), nullptr);
  for (const Target* t : {&targets::v4(), &targets::v5e(), &targets::v5p(), &targets::v6e()}) {
    EXPECT_EQ(t->matmul_rate(DType::f8e4m3fn), nullptr) << t->name;
    EXPECT_NE(t->matmul_rate(DType::i8), nullptr) << t->name;
    EXPECT_FALSE(t->supports(DType::f64)) << t->name;
  }
  for (const Target* t : {&targets::v5e(), &targets::v5p(), &targets::v6e(), &targets::tpu7x()})
    EXPECT_NE(t->matmul_rate(DType::f8e5m2), nullptr) << t->name;
  // TPU7x: each TensorCore a device, no megacore; large second-minor tiles for 16- and 8-bit.
  EXPECT_EQ(targets::tpu7x().devices_per_chip, 2);
  EXPECT_EQ(targets::tpu7x().cores_per_device(), 1);
  EXPECT_EQ(targets::v5p().cores_per_device(), 2);
  EXPECT_EQ(targets::tpu7x().vmem_bytes, 64 << 20);
  EXPECT_EQ(targets::tpu7x().tile(DType::bf16)->second_minor, 16);
  EXPECT_EQ(targets::tpu7x().tile(DType::f8e4m3fn)->second_minor, 32);
  EXPECT_EQ(targets::tpu7x().tile(DType::f32)->second_minor, 8);
  // The compiler's default scoped Vmem limit: what a kernel may use unless it raises it.
  EXPECT_EQ(targets::v5e().vmem_limit(), 16 << 20);
  EXPECT_EQ(targets::v6e().vmem_limit(), 32 << 20);
  Target raised = targets::v6e();
  raised.vmem_limit_bytes = 100 << 20;
  EXPECT_EQ(raised.vmem_limit(), 100 << 20);
  // Peak and working link figures (docs/targets.md): the model moves bytes at the working one.
  for (const Target* t : targets::all()) {
    EXPECT_LE(t->ici.link_rate(), t->ici.link_bytes_per_second) << t->name;
    EXPECT_DOUBLE_EQ(t->ici.hop_latency_seconds, 1e-6) << t->name;
  }
  EXPECT_DOUBLE_EQ(targets::v5e().ici.link_rate(), 45e9);
  EXPECT_DOUBLE_EQ(targets::v5e().ici.link_bytes_per_second, 50e9);
  // Pallas' block rule: (8, 128) whatever the element width.
  EXPECT_EQ(targets::v5e().tile(DType::bf16)->second_minor, 8);
  EXPECT_EQ(targets::v5e().tile(DType::i8)->minor, 128);
  EXPECT_EQ(targets::v5e().tile(DType::f64), nullptr);
}

struct Broken {
  const char* what;
  std::function<void(Target&)> edit;
  const char* message;
};

TEST(Targets, ValidateNamesTheBrokenFigure) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Broken cases[] = {
      {"no name", [](Target& t) { t.name.clear(); }, "refx: invalid Target \"\": name is empty"},
      {"no Vmem", [](Target& t) { t.vmem_bytes = 0; },
       "refx: invalid Target \"mine\": vmem_bytes is 0; it must be a positive number"},
      {"negative Smem", [](Target& t) { t.smem_bytes = -1; }, "smem_bytes is -1"},
      {"zero tile", [](Target& t) { t.tile_16bit.second_minor = 0; }, "tile_16bit.second_minor is 0"},
      {"no element types", [](Target& t) { t.element_types.clear(); }, "element_types is empty"},
      {"NaN rate", [nan](Target& t) { t.matmul[0].ops_per_second = nan; }, "matmul[bf16].ops_per_second is nan"},
      {"matmul type no buffer holds",
       [](Target& t) {
         t.matmul.push_back({DType::f64, 1e12});
       },
       "matmul[f64] is an element type missing from element_types"},
      {"no matrix unit size", [](Target& t) { t.mxu_dim = 0; }, "mxu_dim is 0"},
      {"no cores", [](Target& t) { t.cores_per_chip = 0; }, "cores_per_chip is 0"},
      {"Vmem above HBM", [](Target& t) { t.hbm_bytes = t.vmem_bytes / 2; },
       "vmem_bytes is 134217728 (more than hbm_bytes, 67108864); it must be at most hbm_bytes"},
      {"infinite bandwidth", [](Target& t) { t.hbm_bytes_per_second = INFINITY; }, "hbm_bytes_per_second is inf"},
      {"no torus", [](Target& t) { t.ici.dims.clear(); }, "ici.dims is empty"},
      {"empty torus axis", [](Target& t) { t.ici.dims[1] = 0; }, "ici.dims[1] is 0"},
      {"no link bandwidth", [](Target& t) { t.ici.link_bytes_per_second = 0; }, "ici.link_bytes_per_second is 0"},
      {"negative latency", [](Target& t) { t.ici.hop_latency_seconds = -1e-6; }, "ici.hop_latency_seconds is -1e-06"},
      {"working above peak", [](Target& t) { t.ici.working_link_bytes_per_second = 60e9; },
       "ici.working_link_bytes_per_second is 60000000000 (more than the peak link_bytes_per_second, 50000000000)"},
      {"negative issue cost", [](Target& t) { t.dma_issue_seconds = -1; }, "dma_issue_seconds is -1"},
      {"limit above Vmem", [](Target& t) { t.vmem_limit_bytes = t.vmem_bytes + 1; },
       "vmem_limit_bytes is 134217729 (more than the 134217728 bytes of vmem_bytes); it must be at most the "
       "TensorCore's Vmem"},
      {"three devices a chip", [](Target& t) { t.devices_per_chip = 3; }, "devices_per_chip is 3 (with 1 cores_per_chip)"},
  };
  for (const Broken& c : cases) {
    Target t = targets::v5e();
    t.name = "mine";
    c.edit(t);
    EXPECT_THAT(validation_error(t), HasSubstr(c.message)) << c.what;
  }
}

}  // namespace
