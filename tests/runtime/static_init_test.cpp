// A kernel traced, compiled and run from a static initializer, before main.
// With refx::compiled the built-in primitives are defined in librefx's
// translation unit, whose dynamic initialisation may come after this file's
// (it does here: the test's object precedes the library on the link line).
// They are constant-initialised, so the order does not matter
// (docs/compile-time.md).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <refx/kernel.hpp>
#include <refx/refx.hpp>

namespace {

struct BeforeMain {
  std::vector<float> out;
  std::string error;
};

BeforeMain run_before_main() {
  BeforeMain r;
  try {
    using namespace refx;
    const auto exe = kernel([](VmemRef<const float, 8> x, VmemRef<float, 8> y) { y.store(x.load() * 2.0f + 1.0f); })
                         .compile(Mesh{{"x", 1}});
    const auto out = exe(Array::from_shards<float>({{0, 1, 2, 3, 4, 5, 6, 7}}, Shape{8}));
    r.out = out.at(0).to_host<float>(0);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

const BeforeMain before_main = run_before_main();

TEST(StaticInit, KernelTracedAndRunBeforeMain) {
  EXPECT_EQ(before_main.error, "");
  EXPECT_EQ(before_main.out, (std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15}));
}

TEST(StaticInit, BuiltinPrimitivesAreRegisteredByName) {
  EXPECT_EQ(refx::find_primitive("add"), &refx::prim::add);
  EXPECT_EQ(refx::find_primitive("allocate"), &refx::prim::allocate);
  EXPECT_THROW(refx::define_primitive(refx::Primitive{"add"}), refx::Error);
}

}  // namespace
