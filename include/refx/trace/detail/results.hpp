#pragma once
// Body results and loop carries: void, one Value, or a tuple of Values,
// flattened to value ids and rebuilt from them.

#include <tuple>
#include <vector>

#include <refx/trace/value.hpp>

namespace refx::detail {

template <class R>
struct results {
  static constexpr bool supported = false;
};
template <>
struct results<void> {
  static constexpr bool supported = true;
  static constexpr std::size_t size = 0;
};
template <class T, class E>
struct results<Value<T, E>> {
  static constexpr bool supported = true;
  static constexpr std::size_t size = 1;
  static void ids(const Value<T, E>& v, std::vector<ValueId>& out) { out.push_back(v.id()); }
  static Value<T, E> rebuild(std::span<const ValueId> ids) { return wrap<T, E>(ids[0]); }
};
template <class... V>
struct results<std::tuple<V...>> {
  static constexpr bool supported = (results<V>::supported && ...);
  static constexpr std::size_t size = sizeof...(V);
  static void ids(const std::tuple<V...>& t, std::vector<ValueId>& out) {
    std::apply([&](const auto&... v) { (out.push_back(v.id()), ...); }, t);
  }
  static std::tuple<V...> rebuild(std::span<const ValueId> ids) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<V...>{results<V>::rebuild(ids.subspan(I, 1))...};
    }
    (std::index_sequence_for<V...>{});
  }
};

template <class R>
std::vector<ValueType> types_of(const Graph& g, std::span<const ValueId> ids) {
  std::vector<ValueType> out;
  for (ValueId v : ids) out.push_back(g.type(v));
  return out;
}

}  // namespace refx::detail
