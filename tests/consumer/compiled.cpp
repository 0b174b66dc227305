// Built against an installed refx::compiled (separate compilation) by the
// consumer.installed_package test: traces, compiles and runs a kernel, so
// the installed library must define what the headers declare.
#include <refx/refx.hpp>

#include <cstdio>

using namespace refx;

int main() {
  auto twice = kernel([](HbmRef<const float, 8> x, HbmRef<float, 8> y) {
                 run_scoped([&](VmemRef<float, 8> buf) {
                   sync_copy(x, buf);
                   buf.store(buf.load() * 2.0f);
                   sync_copy(buf, y);
                 });
               }).compile(Mesh{{"x", 2}});
  auto x = Array::generate<float>(2, Shape{8}, [](int d, std::int64_t i) { return 10 * d + i; });
  const float v = twice(x)[0].to_host<float>(1)[3];
  std::printf("refx %s compiled: %g\n", version_string, static_cast<double>(v));
  return v == 26.0f ? 0 : 1;
}
