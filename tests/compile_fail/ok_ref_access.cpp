// Positive control: the legitimate counterparts of the negative tests in this
// folder compile (reads of read-only Refs, the widening Ref<T> -> Ref<const T>
// conversion, stores of matching Values and literals, every kind of .at index,
// compute on Vmem and Smem, and the free-function spellings).
#include <cstdint>
#include <type_traits>

#include <refx/refx.hpp>

using namespace refx;

// A helper kernel that only reads its input: callers may pass a Ref<float>.
inline void copy_row(VmemRef<const float, 128> src, VmemRef<float, 128> dst) { dst.store(src.load()); }

// The widening conversion exists (and is implicit).
static_assert(std::is_convertible_v<VmemRef<float, 128>, VmemRef<const float, 128>>);
static_assert(std::is_convertible_v<SmemRef<std::int32_t>, SmemRef<const std::int32_t>>);
static_assert(std::is_convertible_v<HbmRef<float, 8, 128>, HbmRef<const float, 8, 128>>);

void legitimate_ref_access() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 8, 128> y, VmemRef<float, 128> row,
           SmemRef<const std::int32_t> idx, SmemRef<std::int32_t> count, HbmRef<float, 8, 128> out_hbm) {
    // Read-only load, matching store, literal store (broadcast), accumulate.
    auto v = x.load();
    y.store(v * 2.0f + 1.0f);
    row.store(0.0f);
    row += x.at(0, all).load();
    row.accum(x.at(1, all).load());
    y.at(0, all).store(1);  // an integer literal is converted to the Ref's element type

    // Ref<float> passed where Ref<const float> is expected (widening).
    copy_row(row, row);  // would be caught as aliasing only through refx::call
    VmemRef<const float, 128> ro = row;
    copy_row(ro, y.at(2, all));

    // .at with integers, integer Scalars, ds, ds<N>, all; fewer indices than the rank.
    Value<float, extents<128>> r0 = x.at(3, all).load();
    Value<float, extents<dyn, 128>> r1 = x.at(ds(0, 4)).load();  // a run-time size is dyn in the type
    Value<float, extents<dyn, 128>> r2 = x.at(ds(0, 4, 2), all).load();
    Value<float, extents<8, 16>> r3 = x.at(all, ds<16>(32)).load();
    Value<float, extents<2, 16>> r4 = x.at(ds<2>(0, 4), ds<16>(0, 8)).load();
    Value<float> r5 = x.at(7, 127).load();
    Scalar<std::int32_t> i = idx.load();
    Value<float, extents<128>> r6 = x.at(i, all).load();
    Value<float, extents<8>> r7 = x.at(all, i % 128).load();
    Value<float, extents<16>> r8 = x.at(i, ds<16>(i * 16)).load();
    Value<float, extents<dyn>> r9 = x.at(0, ds(i, 8)).load();
    y.at(1).store(r0 + r6);
    y.at(ds(0, 4)).store(r1);
    y.at(ds<8>(0), ds<16>(0)).store(r3);
    y.at(ds<2>(0, 4), ds<16>(0, 8)).store(r4);
    y.at(0, 0).store(r5);
    y.at(all, 1).store(r7);
    y.at(3, ds<16>(16)).store(r8);
    (void)r2;
    (void)r9;

    // Smem compute: scalar reads and writes.
    count.store(idx.load() + 1);
    count += 2;

    // Hbm Refs are fine as parameters and views (compute goes through copies).
    auto tile = out_hbm.at(ds<4>(0), all);
    (void)tile;

    // Free-function spellings on Refs.
    auto w = load(x);
    store(y, w);
    accum(y, w);
    store(row, 3.0f);
  });
}

// call(...) accepts a Ref<float> for a Ref<const float> parameter too.
void call_with_widening() {
  trace([](VmemRef<float, 128> a, VmemRef<float, 128> b) { call(copy_row)(a, b); });
}
