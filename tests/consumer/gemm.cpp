// Built against an installed refx::gemm by the consumer.installed_package
// test: a kernel's dot runs on the GEMM compiled into the installed
// librefx_gemm.a (REFX_EXTERNAL_GEMM: the headers only declare it); the
// rest of refx's definitions are compiled here (REFX_IMPLEMENTATION).
#define REFX_IMPLEMENTATION
#include <refx/refx.hpp>

#include <cstdio>

using namespace refx;

int main() {
  // [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
  auto mm = kernel([](VmemRef<const float, 2, 2> a, VmemRef<const float, 2, 2> b, VmemRef<float, 2, 2> c) {
              c.store(dot(a.load(), b.load()));
            }).compile(Mesh{{"x", 1}});
  auto a = Array::generate<float>(1, Shape{2, 2}, [](int, std::int64_t i) { return static_cast<float>(i + 1); });
  auto b = Array::generate<float>(1, Shape{2, 2}, [](int, std::int64_t i) { return static_cast<float>(i + 5); });
  const float v = mm(a, b)[0].to_host<float>(0)[3];
  std::printf("refx %s gemm: %g\n", version_string, static_cast<double>(v));
  return v == 50.0f ? 0 : 1;
}
