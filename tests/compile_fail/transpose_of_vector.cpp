// Misuse: transpose of a rank-1 Value (transpose takes a matrix).
// refx-expect: refx: transpose takes a matrix (a rank-2 Value)
#include <refx/refx.hpp>

using namespace refx;

void flip() {
  trace([](VmemRef<const float, 128> x) { (void)transpose(x.load()); });
}
