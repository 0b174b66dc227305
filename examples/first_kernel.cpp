// The README's first kernel: every device sends its block to its right
// neighbour on a ring, after a neighbour handshake. README.md quotes the
// region between the [snippet:...] markers (docs.Docs.FragmentsQuoteACompiledSourceVerbatim
// checks that the quote stays identical).
// [snippet:implementation]
#define REFX_IMPLEMENTATION  // this file compiles refx's definitions (header-only)
#include <refx/refx.hpp>
// [/snippet]

using namespace refx;

int main() {
  // [snippet:first-kernel]
  auto right_permute = kernel([](HbmRef<const float, 1024> x, HbmRef<float, 1024> y) {
    auto me = axis_index("x"), n = axis_size("x");
    run_scoped([&](RegularSemaphore ready, DmaSemaphore send, DmaSemaphore recv) {
      semaphore_signal(ready, 1, (me + n - 1) % n);  // tell my left neighbour I can receive
      semaphore_wait(ready, 1);                      // my right neighbour can receive
      auto copy = make_async_remote_copy(x, y, send, recv, (me + 1) % n);
      copy.start();
      copy.wait();  // my block has left x, and my left neighbour's has arrived in y
    });
  }).compile(Mesh{{"x", 4}});

  auto x = Array::generate<float>(4, Shape{1024}, [](int device, std::int64_t i) { return device * 10000 + i; });
  std::vector<Array> y = right_permute(x);  // returns at once; reading waits
  // [/snippet]

  for (int d = 0; d < 4; ++d)
    if (y[0].to_host<float>(d)[7] != static_cast<float>(((d + 3) % 4) * 10000 + 7)) {
      fmt::print("first_kernel: WRONG on device {}\n", d);
      return 1;
    }
  fmt::print("{}first_kernel: ok\n", to_text(right_permute.graph()));
  return 0;
}
