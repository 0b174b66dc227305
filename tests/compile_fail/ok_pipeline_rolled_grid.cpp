// Positive control for pipeline_rolled_grid_typed_index_map: the same
// pipeline with `auto` indices rolls, and with std::int64_t ones it stays
// unrolled (grid(...).unrolled(), or an automatic grid).
#include <refx/refx.hpp>

using namespace refx;

void rows() {
  trace([](HbmRef<const float, 4096, 128> x, HbmRef<float, 4096, 128> z) {
    const auto body = [](VmemRef<const float, 1, 128> a, VmemRef<float, 1, 128> b) {
      when(traced_program_id(0) == 0, [&] { b.store(a.load()); });
    };
    emit_pipeline(grid(4096).rolled(), body)(in(x, block<1, 128>([](auto i) { return std::tuple{i, 0}; })),
                                             out(z, block<1, 128>([](auto i) { return std::tuple{i, 0}; })));
    emit_pipeline(grid(4096), body)(in(x, block<1, 128>([](std::int64_t i) { return std::tuple{i, 0}; })),
                                    out(z, block<1, 128>([](std::int64_t i) { return std::tuple{i, 0}; })));
  });
}
