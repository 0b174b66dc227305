// collective_matmul inside a kernel on Vmem Refs: a (m, k) and b (k, n) per
// device, out (N*m, n) = all_gather(a) @ b, compared with a host matmul of
// the gathered a (each device has its own b). Every ring size, several
// shapes, every element type.

#include <gtest/gtest.h>

#include <array>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

template <class T>
using Mat = Ref<T, extents<dyn, dyn>, Vmem>;

struct Case {
  int n;
  std::int64_t m, k, cols;
  Elem elem;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return "N" + std::to_string(c.n) + "_a" + std::to_string(c.m) + "x" + std::to_string(c.k) + "_b" + std::to_string(c.k) +
         "x" + std::to_string(c.cols) + "_" + name_of(c.elem);
}

/// Matmul inputs: the usual ones for floats; for integers the int32 range,
/// so that products of int64 inputs cannot overflow.
template <class T>
std::vector<std::vector<T>> matmul_inputs(int n, std::int64_t elements, int salt) {
  if constexpr (std::is_floating_point_v<T>) {
    return inputs<T>(n, elements, salt);
  } else {
    std::vector<std::vector<T>> out(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d)
      for (std::int64_t i = 0; i < elements; ++i) out[static_cast<std::size_t>(d)].push_back(static_cast<T>(input<std::int32_t>(d, i, salt)));
    return out;
  }
}

class CollectiveMatmul : public ::testing::TestWithParam<Case> {};

TEST_P(CollectiveMatmul, EqualsTheGatheredMatmul) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  with_elem(c.elem, [&]<class T>(std::type_identity<T>) {
    auto exe = kernel([](Mat<const T> a, Mat<const T> b, Mat<T> out) { collectives::collective_matmul(a, b, out, "x"); })
                   .compile(Mesh{{"x", c.n}}, {Shape{c.m, c.k}, Shape{c.k, c.cols}, Shape{c.n * c.m, c.cols}});
    const auto a = matmul_inputs<T>(c.n, c.m * c.k, 1);
    const auto b = matmul_inputs<T>(c.n, c.k * c.cols, 2);
    std::vector<T> gathered;
    for (const auto& ad : a) gathered.insert(gathered.end(), ad.begin(), ad.end());
    const Array out = exe(array_of(a, Shape{c.m, c.k}), array_of(b, Shape{c.k, c.cols}))[0];
    const std::int64_t rows = c.n * c.m;
    for (int d = 0; d < c.n; ++d) {
      const auto& bd = b[static_cast<std::size_t>(d)];
      Expected<T> want{matmul(gathered, bd, rows, c.k, c.cols), {}};
      if constexpr (std::is_floating_point_v<T>) {  // (k + 1) eps sum |a_ip b_pj|
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < c.cols; ++j) {
            double abs = 0;
            for (std::int64_t p = 0; p < c.k; ++p)
              abs += std::fabs(static_cast<double>(gathered[static_cast<std::size_t>(i * c.k + p)]) *
                               static_cast<double>(bd[static_cast<std::size_t>(p * c.cols + j)]));
            want.tolerance.push_back(static_cast<double>(c.k + 1) * std::numeric_limits<T>::epsilon() * abs);
          }
      }
      ASSERT_TRUE(matches(out.to_host<T>(d), want, "device " + std::to_string(d)));
    }
  });
}

std::vector<Case> cases() {
  std::vector<Case> out;
  int i = 0;
  for (int n : kRingSizes)
    for (const auto& s : std::vector<std::array<std::int64_t, 3>>{{1, 1, 1}, {3, 5, 2}, {8, 16, 4}})
      out.push_back({n, s[0], s[1], s[2], kElems[static_cast<std::size_t>(i++ % 4)]});
  for (Elem e : kElems) out.push_back({3, 2, 7, 3, e});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, CollectiveMatmul, ::testing::ValuesIn(cases()), case_name);

// bf16 a and b, f32 out (dot<float> per block): products of bf16 are exact
// in f32 and the sums stay f32. The inputs are multiples of 1/128 below 2
// (exact in bf16), so with k = 8 every sum is exact in f32 and out equals
// the double-precision product of the gathered a exactly; a bf16 result
// would have been rounded to 8 significant bits, which the check below sees.
TEST(CollectiveMatmulMixed, Bf16InputsIntoF32Out) {
  constexpr std::int64_t m = 3, k = 8, cols = 5;
  for (int n : {1, 2, 4}) {
    Watchdog dog(kTestLimit, "bf16 -> f32, N" + std::to_string(n));
    auto exe = kernel([](Mat<const bf16> a, Mat<const bf16> b, Mat<float> out) { collectives::collective_matmul(a, b, out, "x"); })
                   .compile(Mesh{{"x", n}}, {Shape{m, k}, Shape{k, cols}, Shape{n * m, cols}});
    auto value = [](int d, std::int64_t i, int salt) {
      return static_cast<double>((d * 53 + i * 37 + salt * 11) % 255 - 127) / 128.0 + 0.0078125 * static_cast<double>(i % 2);
    };
    std::vector<std::vector<bf16>> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) {
      for (std::int64_t i = 0; i < m * k; ++i) a[static_cast<std::size_t>(d)].push_back(bf16(value(d, i, 1)));
      for (std::int64_t i = 0; i < k * cols; ++i) b[static_cast<std::size_t>(d)].push_back(bf16(value(d, i, 2)));
    }
    const Array out = exe(array_of(a, Shape{m, k}), array_of(b, Shape{k, cols}))[0];
    bool any_not_bf16 = false;
    for (int d = 0; d < n; ++d) {
      const std::vector<float> got = out.to_host<float>(d);
      ASSERT_EQ(got.size(), static_cast<std::size_t>(n * m * cols));
      for (std::int64_t i = 0; i < n * m; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          const auto& ad = a[static_cast<std::size_t>(i / m)];
          double want = 0;
          for (std::int64_t p = 0; p < k; ++p)
            want += static_cast<double>(static_cast<float>(ad[static_cast<std::size_t>((i % m) * k + p)])) *
                    static_cast<double>(static_cast<float>(b[static_cast<std::size_t>(d)][static_cast<std::size_t>(p * cols + j)]));
          const float g = got[static_cast<std::size_t>(i * cols + j)];
          EXPECT_EQ(static_cast<double>(g), want) << "device " << d << ", out[" << i << "][" << j << "]";
          any_not_bf16 = any_not_bf16 || static_cast<float>(bf16(g)) != g;
        }
    }
    EXPECT_TRUE(any_not_bf16) << "some sums should need more than bf16's 8 significant bits";
  }
}

}  // namespace
