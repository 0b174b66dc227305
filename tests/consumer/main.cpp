// Built against an installed refx by the consumer.installed_package test.
#define REFX_IMPLEMENTATION  // header-only: this one-file program compiles refx's definitions
#include <refx/refx.hpp>

#include <cstdio>

static_assert(REFX_VERSION_MAJOR >= 0, "refx/version.hpp must be installed");

int main() {
  std::printf("refx %s\n", refx::version_string);
  return 0;
}
