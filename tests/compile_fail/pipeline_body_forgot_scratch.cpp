// Misuse: a row-sum pipeline with an accumulator scratch whose body forgot
// the accumulator's parameter (it takes the blocks only).
// refx-expect: refx: the pipeline body takes a different number of parameters than the pipeline has operands; give it
// one per in(...) and out(...) block and one per scratch<H>(), in the operands' order (a scratch forgotten?)
#include <cstdint>

#include <refx/refx.hpp>

using namespace refx;

void row_sums() {
  trace([](HbmRef<const float, 8, 1024> x, HbmRef<float, 8, 128> s) {
    emit_pipeline(grid(8), [](VmemRef<const float, 8, 128> x_blk,
                              VmemRef<float, 8, 128> s_blk) { s_blk.store(s_blk.load() + x_blk.load()); })(
        in(x, block<8, 128>([](std::int64_t k) {
             return std::tuple{0, k};
           })),
        out(s, block<8, 128>([](std::int64_t) {
              return std::tuple{0, 0};
            })),
        scratch<VmemRef<float, 8, 128>>());
  });
}
