#pragma once
// Elementwise kernels over 1-D Refs of N elements, traced and run by the
// reference interpreter on host data (tests/trace/ops_test.cpp,
// value_ops_test.cpp): z = f(x) and z = f(x, y), with z of element type R.

#include <cstdint>
#include <vector>

#include <refx/ir/interpret.hpp>
#include <refx/refx.hpp>

#include "support/testing.hpp"

namespace refx::testing {

/// z = f(x) over 1-D Refs of N elements; returns z.
template <std::int64_t N, class R, class T, class F>
std::vector<R> interpret_unary(const std::vector<T>& a, F f) {
  Graph g = trace([&](VmemRef<const T, N> x, VmemRef<R, N> z) { z.store(f(x.load())); });
  Buffer bx = make_buffer<T>(Shape{N}, a), bz(dtype_v<R>, Shape{N});
  interpret(g, bx, bz);
  return contents<R>(bz);
}

/// z = f(x, y) over 1-D Refs of N elements; returns z.
template <std::int64_t N, class R, class T, class F>
std::vector<R> interpret_binary(const std::vector<T>& a, const std::vector<T>& b, F f) {
  Graph g = trace([&](VmemRef<const T, N> x, VmemRef<const T, N> y, VmemRef<R, N> z) { z.store(f(x.load(), y.load())); });
  Buffer bx = make_buffer<T>(Shape{N}, a), by = make_buffer<T>(Shape{N}, b), bz(dtype_v<R>, Shape{N});
  interpret(g, bx, by, bz);
  return contents<R>(bz);
}

}  // namespace refx::testing
