// The baseline translation unit of issue 7: only {fmt} and range-v3's views.
#include <fmt/format.h>
#include <range/v3/view.hpp>

int main() {
  fmt::print("{}\n", 42);
  return 0;
}
