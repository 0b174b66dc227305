#include <gtest/gtest.h>

#include <refx/refx.hpp>
#include <refx/ir/interpret.hpp>

using namespace refx;

TEST(Smoke, TraceAndInterpret) {
  auto g = trace([](VmemRef<const float, 4, 8> x, VmemRef<float, 4, 8> y) {
    auto v = x.load();
    y.store(v * v + 1.0f);
    y.at(0, ds(0, 4)) += full<float, 4>(10.0f);
  });
  fmt::print("{}", g);
  std::vector<float> xs(32);
  for (int i = 0; i < 32; ++i) xs[static_cast<std::size_t>(i)] = static_cast<float>(i);
  Buffer x = Buffer::from<float>(Shape{4, 8}, xs), y(DType::f32, Shape{4, 8});
  interpret(g, x, y);
  auto out = y.to_vector<float>();
  EXPECT_FLOAT_EQ(out[0], 11.0f);
  EXPECT_FLOAT_EQ(out[3], 20.0f);
  EXPECT_FLOAT_EQ(out[4], 17.0f);
  EXPECT_FLOAT_EQ(out[31], 31.0f * 31.0f + 1.0f);
}
