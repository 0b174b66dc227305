#pragma once
// refx::MapTile<T>: a tile of up to 512 elements that a generic map function
// is called with (map.hpp). `map([](auto x) { return exp(x) * tanh(x); }, v)`
// over f32 calls the function once per tile: arithmetic on tiles is a SIMD
// loop (GCC / clang vector extensions), and exp, tanh ... are the compiled,
// vectorised kernels of the exp, tanh ... primitives (ir/vector_math.hpp),
// so the map computes bit for bit what `exp(v) * tanh(v)` computes.
//
// Also the refx math functions on plain floats (`refx::exp(1.0f)`: the C++
// library's), so one function body reads the same over scalars and tiles.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include <refx/core/dtype.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/builtins.hpp>

namespace refx {

/// Elements per MapTile (and per call of a generic map function).
inline constexpr std::int64_t map_tile_size = 512;

namespace detail {
// 64-byte vectors (GCC and clang vector extensions): one AVX-512 register,
// two AVX or four SSE ones.
template <class T>
struct tile_vector {
  using type = T;  // bool: one element
};
template <>
struct tile_vector<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct tile_vector<double> {
  typedef double type __attribute__((vector_size(64)));
};
}  // namespace detail

/// A run of up to map_tile_size elements of a map operand (T: float, double
/// or, for comparisons' results, bool). Operators and the refx math
/// functions apply elementwise; scalars (literals) are converted to T.
template <class T>
class MapTile {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, bool>,
                "refx: MapTile holds float, double or bool elements");

 public:
  using element_type = T;
  static constexpr int lanes = std::is_same_v<T, bool> ? 1 : 64 / static_cast<int>(sizeof(T));

  MapTile() = default;
  /// A tile of n elements whose values the caller writes (data()).
  static MapTile of_size(std::int64_t n) {
    MapTile t;
    t.n_ = n;
    return t;
  }
  /// A tile of n elements, each converted from src[i].
  template <class U>
  static MapTile load(const U* src, std::int64_t n) {
    MapTile t;
    t.n_ = n;
    for (std::int64_t i = 0; i < n; ++i) t.data()[i] = static_cast<T>(static_cast<compute_t<U>>(src[i]));
    std::fill(t.data() + n, t.data() + t.padded(), T{});  // the last vector's spare lanes
    return t;
  }
  /// Writes the n elements to dst, each converted to U.
  template <class U>
  void store(U* dst) const {
    for (std::int64_t i = 0; i < n_; ++i) dst[i] = static_cast<U>(data()[i]);
  }

  std::int64_t size() const { return n_; }
  T* data() { return reinterpret_cast<T*>(v_); }
  const T* data() const { return reinterpret_cast<const T*>(v_); }
  T operator[](std::int64_t i) const { return data()[i]; }

  /// The elements in whole vectors of `lanes` (the spare lanes of the last
  /// one are initialised and ignored).
  std::int64_t padded() const { return (n_ + lanes - 1) / lanes * lanes; }
  std::int64_t vectors() const { return padded() / lanes; }

  /// f(r[i], a[i]) (or f(r[i], a[i], b[i])) over whole vectors, setting r.
  /// (f takes the vectors by reference: passing a 64-byte vector by value
  /// has another ABI with AVX-512 than without.)
  template <class F>
  static MapTile apply(const MapTile& a, F f) {
    MapTile r = of_size(a.n_);
    for (std::int64_t i = 0; i < a.vectors(); ++i) f(r.v_[i], a.v_[i]);
    return r;
  }
  template <class F>
  static MapTile apply(const MapTile& a, const MapTile& b, F f) {
    MapTile r = of_size(a.n_);
    for (std::int64_t i = 0; i < a.vectors(); ++i) f(r.v_[i], a.v_[i], b.v_[i]);
    return r;
  }

 private:
  using Vector = typename detail::tile_vector<T>::type;
  template <class>
  friend class MapTile;
  alignas(64) Vector v_[map_tile_size / lanes];
  std::int64_t n_ = 0;
};

template <class T>
inline constexpr bool is_map_tile_v = false;
template <class T>
inline constexpr bool is_map_tile_v<MapTile<T>> = true;

namespace detail {
template <class T>
concept tile_float = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class S>
concept tile_scalar = std::is_arithmetic_v<S>;

/// Runs a primitive's element function (its vectorised kernel) over a tile.
template <class T>
MapTile<T> tile_math(const Primitive& p, const MapTile<T>& a, const MapTile<T>* b = nullptr) {
  MapTile<T> r = MapTile<T>::of_size(a.size());
  const void* ins[] = {a.data(), b != nullptr ? b->data() : a.data()};
  p.elementwise(dtype_v<T>, ins, r.data(), a.padded());
  return r;
}
template <class T>
MapTile<bool> tile_compare(const MapTile<T>& a, const MapTile<T>& b, auto cmp) {
  MapTile<bool> r = MapTile<bool>::of_size(a.size());
  for (std::int64_t i = 0; i < a.size(); ++i) r.data()[i] = cmp(a[i], b[i]);
  return r;
}
/// A tile of like's size with every element s.
template <class T, class S>
MapTile<T> tile_fill(const MapTile<T>& like, S s) {
  MapTile<T> r = MapTile<T>::of_size(like.size());
  std::fill_n(r.data(), like.padded(), static_cast<T>(s));
  return r;
}
}  // namespace detail

// Arithmetic: tile op tile, tile op scalar, scalar op tile.
#define REFX_TILE_ARITHMETIC(op)                                                               \
  template <detail::tile_float T>                                                              \
  MapTile<T> operator op(const MapTile<T>& a, const MapTile<T>& b) {                           \
    return MapTile<T>::apply(a, b, [](auto& r, const auto& x, const auto& y) { r = x op y; }); \
  }                                                                                            \
  template <detail::tile_float T, detail::tile_scalar S>                                       \
  MapTile<T> operator op(const MapTile<T>& a, S s) {                                           \
    const T c = static_cast<T>(s);                                                             \
    return MapTile<T>::apply(a, [c](auto& r, const auto& x) { r = x op c; });                  \
  }                                                                                            \
  template <detail::tile_float T, detail::tile_scalar S>                                       \
  MapTile<T> operator op(S s, const MapTile<T>& b) {                                           \
    const T c = static_cast<T>(s);                                                             \
    return MapTile<T>::apply(b, [c](auto& r, const auto& y) { r = c op y; });                  \
  }                                                                                            \
  template <detail::tile_float T, class B>                                                     \
  MapTile<T>& operator op##=(MapTile<T>& a, const B& b) {                                      \
    return a = a op b;                                                                         \
  }
REFX_TILE_ARITHMETIC(+)
REFX_TILE_ARITHMETIC(-)
REFX_TILE_ARITHMETIC(*)
REFX_TILE_ARITHMETIC(/)
#undef REFX_TILE_ARITHMETIC

template <detail::tile_float T>
MapTile<T> operator-(const MapTile<T>& a) {
  return MapTile<T>::apply(a, [](auto& r, const auto& x) { r = -x; });
}

// Comparisons give bool tiles (map's result is then bool).
#define REFX_TILE_COMPARISON(op)                                        \
  template <detail::tile_float T>                                       \
  MapTile<bool> operator op(const MapTile<T>& a, const MapTile<T>& b) { \
    return detail::tile_compare(a, b, [](T x, T y) { return x op y; }); \
  }                                                                     \
  template <detail::tile_float T, detail::tile_scalar S>                \
  MapTile<bool> operator op(const MapTile<T>& a, S s) {                 \
    return a op detail::tile_fill(a, s);                                \
  }                                                                     \
  template <detail::tile_float T, detail::tile_scalar S>                \
  MapTile<bool> operator op(S s, const MapTile<T>& b) {                 \
    return detail::tile_fill(b, s) op b;                                \
  }
REFX_TILE_COMPARISON(<)
REFX_TILE_COMPARISON(<=)
REFX_TILE_COMPARISON(>)
REFX_TILE_COMPARISON(>=)
REFX_TILE_COMPARISON(==)
REFX_TILE_COMPARISON(!=)
#undef REFX_TILE_COMPARISON

inline MapTile<bool> operator!(const MapTile<bool>& a) {
  MapTile<bool> r = MapTile<bool>::of_size(a.size());
  for (std::int64_t i = 0; i < a.size(); ++i) r.data()[i] = !a[i];
  return r;
}
inline MapTile<bool> operator&(const MapTile<bool>& a, const MapTile<bool>& b) {
  MapTile<bool> r = MapTile<bool>::of_size(a.size());
  for (std::int64_t i = 0; i < a.size(); ++i) r.data()[i] = a[i] && b[i];
  return r;
}
inline MapTile<bool> operator|(const MapTile<bool>& a, const MapTile<bool>& b) {
  MapTile<bool> r = MapTile<bool>::of_size(a.size());
  for (std::int64_t i = 0; i < a.size(); ++i) r.data()[i] = a[i] || b[i];
  return r;
}

/// `c ? a : b` elementwise; a scalar branch is broadcast.
template <detail::tile_float T>
MapTile<T> select(const MapTile<bool>& c, const MapTile<T>& a, const MapTile<T>& b) {
  MapTile<T> r = b;
  for (std::int64_t i = 0; i < c.size(); ++i)
    if (c[i]) r.data()[i] = a[i];
  return r;
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> select(const MapTile<bool>& c, const MapTile<T>& a, S b) {
  return select(c, a, detail::tile_fill(a, b));
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> select(const MapTile<bool>& c, S a, const MapTile<T>& b) {
  return select(c, detail::tile_fill(b, a), b);
}

/// Minimum / maximum; a NaN on either side propagates (as refx::min / max
/// on Values, XLA's).
template <detail::tile_float T>
MapTile<T> min(const MapTile<T>& a, const MapTile<T>& b) {
  return MapTile<T>::apply(a, b, [](auto& r, const auto& x, const auto& y) { r = (y < x) | (y != y) ? y : x; });
}
template <detail::tile_float T>
MapTile<T> max(const MapTile<T>& a, const MapTile<T>& b) {
  return MapTile<T>::apply(a, b, [](auto& r, const auto& x, const auto& y) { r = (x < y) | (y != y) ? y : x; });
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> min(const MapTile<T>& a, S s) {
  return min(a, detail::tile_fill(a, s));
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> max(const MapTile<T>& a, S s) {
  return max(a, detail::tile_fill(a, s));
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> min(S s, const MapTile<T>& b) {
  return min(detail::tile_fill(b, s), b);
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> max(S s, const MapTile<T>& b) {
  return max(detail::tile_fill(b, s), b);
}
template <detail::tile_float T>
MapTile<T> abs(const MapTile<T>& a) {
  return detail::tile_math(prim::abs, a);
}

// The math functions: on tiles, the primitives' vectorised kernels; on
// floating-point scalars, the C++ library's functions.
#define REFX_TILE_MATH(name, scalar_expr)    \
  template <detail::tile_float T>            \
  MapTile<T> name(const MapTile<T>& a) {     \
    return detail::tile_math(prim::name, a); \
  }                                          \
  template <std::floating_point T>           \
  T name(T x) {                              \
    return scalar_expr;                      \
  }
REFX_TILE_MATH(exp, std::exp(x))
REFX_TILE_MATH(log, std::log(x))
REFX_TILE_MATH(log1p, std::log1p(x))
REFX_TILE_MATH(expm1, std::expm1(x))
REFX_TILE_MATH(tanh, std::tanh(x))
REFX_TILE_MATH(logistic, T{1} / (T{1} + std::exp(-x)))
REFX_TILE_MATH(erf, std::erf(x))
REFX_TILE_MATH(sqrt, std::sqrt(x))
REFX_TILE_MATH(rsqrt, T{1} / std::sqrt(x))
REFX_TILE_MATH(sin, std::sin(x))
REFX_TILE_MATH(cos, std::cos(x))
#undef REFX_TILE_MATH

template <detail::tile_float T>
MapTile<T> pow(const MapTile<T>& a, const MapTile<T>& b) {
  return detail::tile_math(prim::pow, a, &b);
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> pow(const MapTile<T>& a, S s) {
  return pow(a, detail::tile_fill(a, s));
}
template <detail::tile_float T, detail::tile_scalar S>
MapTile<T> pow(S s, const MapTile<T>& b) {
  return pow(detail::tile_fill(b, s), b);
}
template <std::floating_point T>
T pow(T x, T y) {
  return std::pow(x, y);
}

}  // namespace refx
