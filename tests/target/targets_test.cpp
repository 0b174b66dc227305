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
  for (const Target* t : {&targets::v4(), &targets::v5e(), &targets::v5p(), &targets::v6e()})
    EXPECT_EQ(validation_error(*t), "") << t->name;
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
  // fp8 operands reach the matrix unit of v6e only among the four.
  EXPECT_NE(targets::v6e().matmul_rate(DType::f8e4m3fn), nullptr);
  for (const Target* t : {&targets::v4(), &targets::v5e(), &targets::v5p()}) {
    EXPECT_EQ(t->matmul_rate(DType::f8e4m3fn), nullptr) << t->name;
    EXPECT_FALSE(t->supports(DType::f64)) << t->name;
  }
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
  };
  for (const Broken& c : cases) {
    Target t = targets::v5e();
    t.name = "mine";
    c.edit(t);
    EXPECT_THAT(validation_error(t), HasSubstr(c.message)) << c.what;
  }
}

}  // namespace
