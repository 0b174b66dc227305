#pragma once
// Host effects inside kernels: printing and calling back into the host.
//
//   debug_print("step {}: x = {:.3f}", i, x);           // unordered
//   debug_print(ordered, "device {} done", me);         // ordered
//   io_callback([&](std::int32_t step, std::span<const float> x) { log(step, x); }, i, x);
//   io_callback(ordered, [&] { progress.tick(); });
//
// Arguments are traced Values (or C++ numbers, recorded as constants).
// debug_print uses fmt syntax, checked at compile time: a scalar Value<T>
// formats as a T, a block as nested lists ([[1, 2], [3, 4]]; a format spec
// applies to each element). The text goes to the runtime's print sink
// (stdout unless Runtime::set_print_sink replaced it), one call per print.
// io_callback's function takes one argument per value: T for a scalar
// Value<T>, std::span<const T> for a block (or `const refx::Buffer&` for
// each, which also carries the shape); it runs on the host with copies of the
// values and returns nothing.
//
// Unordered effects run when a device reaches them (possibly concurrently on
// several devices). Ordered ones run in a deterministic order: within a
// program by (sequence, device) -- the device's n-th ordered effect of that
// kind, then the device id -- and all of program k's before program k+1's;
// fori_loop iterations keep their order. See docs/effects.md.

#include <memory>
#include <refx/core/source_location.hpp>
#include <span>
#include <string_view>
#include <type_traits>

#include <refx/ir/host_effects.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/value.hpp>

namespace refx {

/// Tag: the effect is ordered (`debug_print(ordered, ...)`).
struct ordered_t {
  explicit constexpr ordered_t() = default;
};
inline constexpr ordered_t ordered{};

namespace detail {

/// What an unsupported argument formats as in the compile-time format check
/// (so that the error is refx's static_assert, not fmt's).
struct unsupported_effect_arg {};

template <class V>
struct effect_arg {
  static constexpr bool supported = false;
  using print_type = unsupported_effect_arg;
  using callback_type = unsupported_effect_arg;
};
template <class T, class E>
struct effect_arg<Value<T, E>> {
  static constexpr bool supported = true;
  using print_type = std::conditional_t<E::rank == 0, T, PrintedBlock<T>>;
  using callback_type = std::conditional_t<E::rank == 0, T, std::span<const T>>;
  static ValueId id(const Value<T, E>& v) { return v.id(); }
  static callback_type from(const Buffer& b) {
    if constexpr (E::rank == 0) return *b.data<T>();
    else return callback_type(b.data<T>(), static_cast<std::size_t>(b.size()));
  }
};
template <class T>
  requires(is_number_v<T> && Element<T>)
struct effect_arg<T> {
  static constexpr bool supported = true;
  using print_type = T;
  using callback_type = T;
  static ValueId id(const T& v) { return constant<T>(v, Shape{}); }
  static T from(const Buffer& b) { return *b.data<T>(); }
};

template <class V>
using print_arg_t = typename effect_arg<V>::print_type;
template <class V>
using callback_arg_t = typename effect_arg<V>::callback_type;
template <class>
using as_buffer = const Buffer&;

template <class... V>
constexpr void check_effect_args() {
  static_assert(
      (effect_arg<V>::supported && ...),
      "refx: debug_print / io_callback take traced Values (load() a Ref first) or numbers of an element "
      "type (bool, int8_t, uint8_t, int32_t, uint32_t, int64_t, f8e4m3fn, f8e5m2, bf16, f16, float, double); put "
      "text in the "
      "format string");
}

template <class... V>
void record_effect(const Primitive& p, std::int64_t payload_is_string, std::string_view text, std::int64_t callback,
                   bool ordered, const V&... values, SourceLoc loc) {
  auto& t = Tracer::current(loc);
  t.note(loc);
  const ValueId ins[] = {effect_arg<V>::id(values)..., no_id};
  const std::int64_t payload = payload_is_string ? t.graph().add_string(std::string(text)) : callback;
  const std::int64_t attrs[] = {payload, ordered ? 1 : 0};
  t.bind(p, std::span<const ValueId>(ins, sizeof...(V)), {}, attrs, loc);
}

template <class F, class... V>
class TypedCallback final : public HostCallback {
 public:
  explicit TypedCallback(F f) : f_(std::move(f)) {}
  void call(std::span<const Buffer* const> args) override {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      if constexpr (std::is_invocable_v<F&, callback_arg_t<V>...>) f_(effect_arg<V>::from(*args[I])...);
      else f_(*args[I]...);
    }
    (std::index_sequence_for<V...>{});
  }

 private:
  F f_;
};

/// io_callback's function for values of types V..., and the caller's line
/// (taken where the function converts to this type: the call's first line).
template <class... V>
class CallbackArg {
 public:
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, ordered_t>)
  CallbackArg(F&& f, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit on purpose
      : loc_(loc) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&, callback_arg_t<V>...> || std::is_invocable_v<Fn&, as_buffer<V>...>,
                  "refx: io_callback's function must take one argument per value: T for a scalar Value<T>, "
                  "std::span<const T> for a block Value<T, ...> (or const refx::Buffer& for each value)");
    fn_ = std::make_unique<TypedCallback<Fn, V...>>(std::forward<F>(f));
  }
  std::unique_ptr<HostCallback> take() && { return std::move(fn_); }
  SourceLoc loc() const noexcept { return loc_; }

 private:
  std::unique_ptr<HostCallback> fn_;
  SourceLoc loc_;
};

/// debug_print's format, checked at compile time against the host types of
/// the values, and the caller's line.
template <class... A>
class FormatArg {
 public:
  template <class S>
    requires std::is_convertible_v<const S&, std::string_view>
  consteval FormatArg(const S& s, refx::source_location loc = refx::source_location::current())  // NOLINT: implicit
      : format_(s), loc_(loc) {}
  /// A format known only at run time: `debug_print(fmt::runtime(text), ...)`.
  FormatArg(fmt::basic_runtime<char> r, refx::source_location loc = refx::source_location::current())  // NOLINT
      : format_(r), loc_(loc) {}
  std::string_view text() const {
    const fmt::string_view v = format_;
    return {v.data(), v.size()};
  }
  SourceLoc loc() const noexcept { return loc_; }

 private:
  fmt::format_string<A...> format_;
  refx::source_location loc_;
};

template <class... V>
void print(bool ordered, const FormatArg<print_arg_t<V>...>& format, const V&... values) {
  check_effect_args<V...>();
  record_effect<V...>(prim::debug_print, 1, format.text(), 0, ordered, values..., format.loc());
}

template <class... V>
void callback(bool ordered, CallbackArg<V...>&& fn, const V&... values) {
  check_effect_args<V...>();
  const SourceLoc loc = fn.loc();
  HostCallback* cb = host_callbacks().add(std::move(fn).take());
  record_effect<V...>(prim::io_callback, 0, {}, callback_attr(cb), ordered, values..., loc);
}

}  // namespace detail

/// Prints `format` with `values` (fmt syntax, checked at compile time) when
/// the device reaches it.
template <class... V>
void debug_print(detail::FormatArg<detail::print_arg_t<V>...> format, const V&... values) {
  detail::print<V...>(false, format, values...);
}
/// Prints in the deterministic order of ordered effects (docs/effects.md).
template <class... V>
void debug_print(ordered_t, detail::FormatArg<detail::print_arg_t<V>...> format, const V&... values) {
  detail::print<V...>(true, format, values...);
}

/// Calls `fn` on the host with copies of `values` when the device reaches it.
/// `fn` returns nothing; an exception from it fails the program (reported at
/// block_until_ready / effects_barrier with the device and this line).
template <class... V>
void io_callback(detail::CallbackArg<std::type_identity_t<V>...> fn, const V&... values) {
  detail::callback<V...>(false, std::move(fn), values...);
}
/// Calls `fn` in the deterministic order of ordered effects (docs/effects.md).
template <class... V>
void io_callback(ordered_t, detail::CallbackArg<std::type_identity_t<V>...> fn, const V&... values) {
  detail::callback<V...>(true, std::move(fn), values...);
}

}  // namespace refx

template <>
struct fmt::formatter<refx::detail::unsupported_effect_arg> : fmt::formatter<int> {
  auto format(refx::detail::unsupported_effect_arg, format_context& ctx) const { return ctx.out(); }
};
