// Misuse: dimension_semantics with fewer entries than the grid has dimensions.
// refx-expect: refx: dimension_semantics takes one of refx::parallel / refx::arbitrary per grid dimension
#include <refx/refx.hpp>

using namespace refx;

// grid(4, 4, 2) has three dimensions: (parallel, parallel, arbitrary) was meant.
const auto g = grid(4, 4, 2).dimension_semantics(parallel, arbitrary);
