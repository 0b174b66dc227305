// Built against an installed refx by the consumer.installed_package test, and
// expected NOT to link: a header-only program without the one source file
// that defines REFX_IMPLEMENTATION (include/refx/config.hpp). Its kernel's
// code makes a hundred undefined references to refx's definitions;
// RefxConsumerCheck.cmake checks that the one naming the fix,
// header_only_refx_needs_REFX_IMPLEMENTATION_defined_in_one_source_file, is
// among the first lines the linker prints.
#include <refx/refx.hpp>

using namespace refx;

int main() {
  auto twice = kernel([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { y.store(x.load() * 2.0f); })
                   .compile(Mesh{{"x", 1}});
  auto x = Array::generate<float>(1, Shape{8}, [](int, std::int64_t i) { return static_cast<float>(i); });
  return twice(x)[0].to_host<float>(0)[1] == 2.0f ? 0 : 1;
}
