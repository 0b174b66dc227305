// Misuse: run_state given the output Ref itself (a port of
// pl.run_state(f)(x) with x already a ref); it takes initial Values.
// refx-expect: refx: run_state takes initial Values, not a Ref: run_state(x.load(), body) gives the body a fresh Vmem
// Ref holding them; to update a Ref in place, write it directly
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void running_max() {
  trace([](VmemRef<const float, 4, 128> x, VmemRef<float, 128> m) {
    run_state(m, [&](VmemRef<float, 128> acc) {
      for (int r = 0; r < 4; ++r) acc.store(max(acc.load(), x.at(r, all).load()));
    });
  });
}
