#pragma once
// Shared helpers for refx's unit tests: building buffers (including bool ones,
// which std::vector<bool> cannot give a span for), reading them back, and
// checking exception types and messages.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <refx/refx.hpp>

namespace refx::testing {

/// A buffer of shape `s` holding `data` (row-major). Works for bool too.
template <class T>
Buffer make_buffer(const Shape& s, const std::vector<T>& data) {
  Buffer b(dtype_v<T>, s);
  EXPECT_EQ(static_cast<std::int64_t>(data.size()), s.num_elements()) << "make_buffer: wrong element count";
  T* p = b.data<T>();
  for (std::size_t i = 0; i < data.size() && static_cast<std::int64_t>(i) < s.num_elements(); ++i) p[i] = data[i];
  return b;
}

/// A buffer of shape `s` whose element i is f(i).
template <class T, class F>
Buffer make_buffer_fn(const Shape& s, F f) {
  std::vector<T> v(static_cast<std::size_t>(s.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(f(static_cast<std::int64_t>(i)));
  return make_buffer<T>(s, v);
}

/// A buffer of shape `s` filled with `v`.
template <class T>
Buffer filled(const Shape& s, T v) {
  return make_buffer<T>(s, std::vector<T>(static_cast<std::size_t>(s.num_elements()), v));
}

/// The buffer's elements as T (the dtype must match).
template <class T>
std::vector<T> contents(const Buffer& b) {
  EXPECT_EQ(b.dtype(), dtype_v<T>) << "contents: wrong dtype";
  std::vector<T> out(static_cast<std::size_t>(b.size()));
  const T* p = b.data<T>();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  return out;
}

/// Element-by-element comparison: exact for integers and bool, a relative
/// tolerance for floating point (`ulps` of slack scaled by magnitude).
template <class T>
::testing::AssertionResult elements_match(const std::vector<T>& got, const std::vector<T>& want, double rel = 0.0) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != expected " << want.size();
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok;
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(want[i])) {
        ok = std::isnan(got[i]);
      } else {
        const double tol = rel * std::max(1.0, std::fabs(static_cast<double>(want[i])));
        ok = rel == 0.0 ? got[i] == want[i] : std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i])) <= tol;
      }
    } else {
      ok = got[i] == want[i];
    }
    if (!ok) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << +got[i] << ", expected " << +want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

/// Runs `f` and reports whether it threw exactly an `E` (or subclass) whose
/// what() contains every string in `needles`.
template <class E, class F>
::testing::AssertionResult throws_with(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& n : needles)
      if (what.find(n) == std::string::npos)
        return ::testing::AssertionFailure() << "message lacks \"" << n << "\": " << what;
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a different exception type: " << e.what();
  } catch (...) {
    return ::testing::AssertionFailure() << "threw a non-std exception";
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// What `f` threw: the message of an `E` (or subclass), or a description of
/// what happened instead. Run `f` before computing needles that depend on
/// state `f` sets (such as a line number captured inside it).
struct Thrown {
  bool ok = false;      ///< an E was thrown
  std::string message;  ///< its what(), or what happened instead
};
template <class E, class F>
Thrown thrown(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return {true, e.what()};
  } catch (const std::exception& e) {
    return {false, std::string("threw a different exception type: ") + e.what()};
  } catch (...) {
    return {false, "threw a non-std exception"};
  }
  return {false, "did not throw"};
}
/// Whether `t` is a caught E whose message contains every needle.
inline ::testing::AssertionResult has_all(const Thrown& t, std::initializer_list<std::string> needles) {
  if (!t.ok) return ::testing::AssertionFailure() << t.message;
  for (const std::string& n : needles)
    if (t.message.find(n) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << n << "\": " << t.message;
  return ::testing::AssertionSuccess() << t.message;
}
/// As above, with the needles computed after `t` (so they may use state the
/// throwing code set, such as a captured __LINE__).
template <class Needles>
  requires(std::is_invocable_v<Needles>)
::testing::AssertionResult has_all(const Thrown& t, Needles needles) {
  if (!t.ok) return ::testing::AssertionFailure() << t.message;
  for (const std::string& n : needles())
    if (t.message.find(n) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << n << "\": " << t.message;
  return ::testing::AssertionSuccess() << t.message;
}

/// "file.cpp:LINE", as refx prints a source location (last path components).
inline std::string at_line(const char* file_stem, int line) { return std::string(file_stem) + ":" + std::to_string(line); }

/// A 64-bit finalizer (MurmurHash3's fmix64): deterministic pseudo-random
/// test inputs from (device, index, salt).
inline std::uint64_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

/// Counts occurrences of `needle` in `hay`.
inline std::size_t count_of(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

/// Counts the ops of the graph whose primitive is `name` (in every block).
inline std::size_t count_ops(const Graph& g, std::string_view name) {
  std::size_t n = 0;
  for (std::size_t o = 0; o < g.num_ops(); ++o)
    if (g.op(static_cast<OpId>(o)).prim->name == name) ++n;
  return n;
}

}  // namespace refx::testing
