#pragma once
// Helpers for the collectives tests (tests/collectives/*_test.cpp): the
// device counts and sizes every collective is checked on, deterministic
// per-device inputs for every element type, host reference computations
// (reduce, chunking, gather, all-to-all, matmul, permute), and comparisons
// (exact for integers and max, a summation-error bound for float sums, and
// bitwise identity across devices).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <refx/collectives.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>

#include "support/runtime_testing.hpp"

namespace refx::testing {

using collectives::Algorithm;
using collectives::Direction;

/// The ring sizes every collective is checked on (non-powers of two included).
inline const std::vector<int> kRingSizes{1, 2, 3, 4, 5, 8, 16};

/// Sizes per device: smaller than N, not divisible by N, and larger ones.
/// N = 16 keeps to small sizes so the whole binary stays quick.
inline std::vector<std::int64_t> sizes_for(int n) {
  if (n >= 16) return {1, 3, 7, 17, 100};
  return {1, 3, 7, 1000, 1001, 4096, 9000};  // 9000: past one_shot_max_bytes for every type
}

// ---------------------------------------------------------------- element types

enum class Elem { f32, f64, i32, i64 };
inline const std::vector<Elem> kElems{Elem::f32, Elem::f64, Elem::i32, Elem::i64};

inline const char* name_of(Elem e) {
  switch (e) {
    case Elem::f32: return "f32";
    case Elem::f64: return "f64";
    case Elem::i32: return "i32";
    case Elem::i64: return "i64";
  }
  return "?";
}
inline const char* name_of(ReduceOp op) { return op == ReduceOp::sum ? "sum" : "max"; }
inline const char* name_of(Direction d) { return d == Direction::unidirectional ? "uni" : "bi"; }
inline const char* name_of(Algorithm a) {
  switch (a) {
    case Algorithm::automatic: return "auto";
    case Algorithm::ring: return "ring";
    case Algorithm::direct: return "direct";
    case Algorithm::one_shot: return "oneshot";
    case Algorithm::ring_direct: return "ringdirect";
  }
  return "?";
}

/// A collective over blocks (all_gather, all_to_all): N devices, `block`
/// elements each, one element type; and its test name.
struct BlockCase {
  int n;
  std::int64_t block;
  Elem elem;
};
inline std::string block_case_name(const ::testing::TestParamInfo<BlockCase>& info) {
  const BlockCase& c = info.param;
  return "N" + std::to_string(c.n) + "_block" + std::to_string(c.block) + "_" + name_of(c.elem);
}

/// Calls f(std::type_identity<T>{}) with the C++ type of `e`.
template <class F>
decltype(auto) with_elem(Elem e, F&& f) {
  switch (e) {
    case Elem::f32: return f(std::type_identity<float>{});
    case Elem::f64: return f(std::type_identity<double>{});
    case Elem::i32: return f(std::type_identity<std::int32_t>{});
    case Elem::i64: break;
  }
  return f(std::type_identity<std::int64_t>{});
}

// ---------------------------------------------------------------- inputs


/// Element i of device d's input (salt tells different inputs apart).
/// Floats are decimal fractions in [-4, 4], so the order of a float sum
/// changes its rounding (which is what the bitwise check is about); int64
/// values need more than 32 bits; integer sums over 16 devices never overflow.
template <class T>
T input(int d, std::int64_t i, int salt = 0) {
  const std::uint64_t h = mix(static_cast<std::uint64_t>(d) * 0x9e3779b97f4a7c15ULL ^
                              static_cast<std::uint64_t>(i) * 0x632be59bd9b4e019ULL ^
                              static_cast<std::uint64_t>(salt) * 0x8cb92ba72f3d8dd7ULL);
  const auto v = static_cast<std::int64_t>(h % 8001) - 4000;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<double>(v) / 1000.0);
  } else if constexpr (sizeof(T) == 8) {
    return static_cast<T>(v * (std::int64_t{1} << 33) + static_cast<std::int64_t>((h >> 20) % 1000));
  } else {
    return static_cast<T>(v);
  }
}

/// Every device's input as host data, `elements` each.
template <class T>
std::vector<std::vector<T>> inputs(int n, std::int64_t elements, int salt = 0) {
  std::vector<std::vector<T>> out(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < elements; ++i) out[static_cast<std::size_t>(d)].push_back(input<T>(d, i, salt));
  return out;
}

/// The host data as an Array with one shard per device.
template <class T>
Array array_of(const std::vector<std::vector<T>>& shards, Shape shape, Runtime& rt = Runtime::global()) {
  return Array::from_shards<T>(shards, shape, rt);
}

/// Every device's shard of `a` as host data (waits for it).
template <class T>
std::vector<std::vector<T>> shards_of(const Array& a) {
  std::vector<std::vector<T>> out;
  for (int d = 0; d < a.num_devices(); ++d) out.push_back(a.to_host<T>(d));
  return out;
}

// ---------------------------------------------------------------- references

/// What the host expects of a reduction: the value, and (for float sums)
/// the error a sum in any order may have.
template <class T>
struct Expected {
  std::vector<T> value;
  std::vector<double> tolerance;  // empty: exact
};

/// The elementwise reduction of every device's data (in double / long double
/// for floats; the bound is (N-1) * eps * sum |x| per element).
template <class T>
Expected<T> reduce(const std::vector<std::vector<T>>& x, ReduceOp op) {
  const std::size_t m = x.empty() ? 0 : x[0].size();
  Expected<T> e;
  e.value.resize(m);
  const bool inexact = std::is_floating_point_v<T> && op == ReduceOp::sum;
  if (inexact) e.tolerance.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    if (op == ReduceOp::max) {
      T v = x[0][i];
      for (const auto& s : x) v = std::max(v, s[i]);
      e.value[i] = v;
    } else if constexpr (std::is_floating_point_v<T>) {
      long double sum = 0, abs = 0;
      for (const auto& s : x) {
        sum += s[i];
        abs += std::fabs(static_cast<long double>(s[i]));
      }
      e.value[i] = static_cast<T>(sum);
      const double n = static_cast<double>(x.size());
      e.tolerance[i] = (n + 1) * static_cast<double>(std::numeric_limits<T>::epsilon()) * static_cast<double>(abs);
    } else {
      T sum = 0;
      for (const auto& s : x) sum = static_cast<T>(sum + s[i]);
      e.value[i] = sum;
    }
  }
  return e;
}

/// Rows [start, start + len) of chunk c when m rows are cut into n chunks
/// (the first m % n chunks are one row longer).
struct Chunk {
  std::int64_t start = 0, len = 0;
};
inline Chunk chunk_of(std::int64_t m, int n, int c) {
  const std::int64_t q = m / n, r = m % n;
  return {c * q + std::min<std::int64_t>(c, r), q + (c < r ? 1 : 0)};
}

/// Source device of device d's data after a permute by `shift`.
inline int permute_source(int d, int shift, int n) { return mod(d - shift, n); }

/// out = a (rows, k) @ b (k, cols), row-major, in long double for floats.
template <class T>
std::vector<T> matmul(const std::vector<T>& a, const std::vector<T>& b, std::int64_t rows, std::int64_t k,
                      std::int64_t cols) {
  std::vector<T> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      std::conditional_t<std::is_floating_point_v<T>, long double, T> acc = 0;
      for (std::int64_t p = 0; p < k; ++p) acc += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(p * cols + j)];
      out[static_cast<std::size_t>(i * cols + j)] = static_cast<T>(acc);
    }
  return out;
}

// ---------------------------------------------------------------- comparisons

/// got[i] == want.value[offset + i] for i in [0, len) (within the tolerance
/// for float sums); `what` names the result in the failure message.
template <class T>
::testing::AssertionResult matches(const std::vector<T>& got, std::int64_t got_offset, const Expected<T>& want,
                                   std::int64_t want_offset, std::int64_t len, const std::string& what) {
  for (std::int64_t i = 0; i < len; ++i) {
    const T g = got[static_cast<std::size_t>(got_offset + i)];
    const T w = want.value[static_cast<std::size_t>(want_offset + i)];
    bool ok = g == w;
    double tol = 0;
    if (!want.tolerance.empty()) {
      tol = want.tolerance[static_cast<std::size_t>(want_offset + i)];
      ok = std::fabs(static_cast<double>(g) - static_cast<double>(w)) <= tol;
    }
    if (!ok)
      return ::testing::AssertionFailure() << what << ", element " << (want_offset + i) << ": got " << +g
                                           << ", expected " << +w << (tol > 0 ? " (tolerance " + std::to_string(tol) + ")" : "");
  }
  return ::testing::AssertionSuccess();
}
template <class T>
::testing::AssertionResult matches(const std::vector<T>& got, const Expected<T>& want, const std::string& what) {
  if (got.size() != want.value.size())
    return ::testing::AssertionFailure() << what << ": " << got.size() << " elements, expected " << want.value.size();
  return matches(got, 0, want, 0, static_cast<std::int64_t>(got.size()), what);
}
/// Exact comparison against plain host data.
template <class T>
::testing::AssertionResult matches(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  return matches(got, Expected<T>{want, {}}, what);
}

/// Every device's shard of `a` holds bitwise the same bytes (an all-reduce
/// must not leave devices with differently rounded results).
inline ::testing::AssertionResult bitwise_identical_across_devices(const Array& a) {
  a.block_until_ready();
  const Buffer& first = a.shard(0);
  for (int d = 1; d < a.num_devices(); ++d) {
    const Buffer& b = a.shard(d);
    if (b.bytes() != first.bytes() || std::memcmp(b.data(), first.data(), first.bytes()) != 0)
      return ::testing::AssertionFailure() << "device " << d << "'s result differs bitwise from device 0's";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace refx::testing
