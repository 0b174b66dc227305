// Positive control: run_state / run_scoped / fori_loop / when bodies with the
// result types they accept (void, a Value, a std::tuple of Values), and
// kernels and bodies with explicit parameter types.
#include <cstdint>
#include <tuple>
#include <type_traits>

#include <refx/refx.hpp>

using namespace refx;

void legitimate_scopes() {
  trace([](VmemRef<const float, 8, 128> x, VmemRef<float, 128> y, SmemRef<const std::int32_t> flag) {
    // run_state: body returns nothing; run_state returns the final contents.
    Value<float, extents<128>> sum = run_state(zeros<float, 128>(), [&](VmemRef<float, 128> acc) {
      for (int r = 0; r < 8; ++r) acc += x.at(r, all).load();
    });
    std::tuple<Value<float, extents<128>>, Scalar<std::int32_t>> both =
        run_state(std::tuple{sum, Scalar<std::int32_t>(0)}, [&](VmemRef<float, 128> a, VmemRef<std::int32_t> n) {
          a.store(a.load() * 0.5f);
          n += 1;
        });

    // run_scoped: void, one Value, a tuple of Values.
    run_scoped([&](VmemRef<float, 8, 128> tmp) { tmp.store(x.load()); });
    Value<float, extents<128>> m = run_scoped([&](VmemRef<float, 8, 128> tmp) {
      tmp.store(x.load() * x.load());
      return reduce_max<0>(tmp.load());
    });
    auto [s, t] = run_scoped([&](VmemRef<float, 128> a, SmemRef<float> b) {
      a.store(m);
      b.store(1.0f);
      return std::tuple{a.load(), b.load()};
    });
    static_assert(std::is_same_v<decltype(s), Value<float, extents<128>>>);
    static_assert(std::is_same_v<decltype(t), Scalar<float>>);

    // fori_loop: no carry (void body), one Value carry, a tuple carry.
    fori_loop(0, 8, [&](Scalar<std::int32_t> i) { y += x.at(i, all).load(); });
    Value<float, extents<128>> acc = fori_loop(0, 8, [&](Scalar<std::int32_t> i, Value<float, extents<128>> a) {
      return a + x.at(i, all).load();
    }, zeros<float, 128>());
    auto [mx, cnt] = fori_loop(0, 8, [&](Scalar<std::int32_t> i, std::tuple<Value<float, extents<128>>, Scalar<std::int32_t>> c) {
      return std::tuple{max(std::get<0>(c), x.at(i, all).load()), std::get<1>(c) + 1};
    }, std::tuple{x.at(0, all).load(), Scalar<std::int32_t>(0)});

    // when: void body writing a Ref. (Structured bindings are named again
    // first: clang before 16 cannot capture them in a lambda.)
    const auto mx_value = mx;
    const auto s_value = s;
    when(flag.load() != 0, [&] { y.store(acc + mx_value + s_value + std::get<0>(both)); });
    (void)cnt;
    (void)t;
  });
}

// Function pointers work as kernels (explicit parameter types).
void kernel_fn(VmemRef<const float, 16> x, VmemRef<float, 16> y) { y.store(exp(x.load())); }
void legitimate_kernel_kinds() {
  trace(&kernel_fn);
  trace([](VmemRef<const double, 4, 4> a, VmemRef<double, 4, 4> c) {
    auto v = a.load();
    c.store(dot(v, v) + sqrt(abs(v)) + log(v + 1.0));
  });
  trace([](VmemRef<const std::int32_t, 16> k, VmemRef<std::int32_t, 16> r, VmemRef<float, 16> f) {
    auto v = k.load();
    r.store(select((v % 3 == 0) & (v > 0) | !(v < 10), v, -v));
    f.store(cast<float>(v) / 2.0f);
  });
}
