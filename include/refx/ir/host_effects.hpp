#pragma once
// What traced code needs of the host-effect primitives (debug_print,
// io_callback; ir/primitives/effects.hpp): the ordered effect kinds, how a
// block Value prints, and the registry of io_callback functions.

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include <refx/core/shape.hpp>
#include <refx/ir/buffer.hpp>

namespace refx {

/// The kinds of ordered effect. Each has its own chain (compiler token inside
/// a program, runtime token across programs); kinds do not order each other.
enum class OrderedEffect : std::uint8_t { debug_print = 1, io_callback = 2 };
inline constexpr std::size_t num_ordered_effects = 2;
/// All kinds, in token order.
inline constexpr OrderedEffect ordered_effects[] = {OrderedEffect::debug_print, OrderedEffect::io_callback};

inline constexpr std::string_view to_string(OrderedEffect k) {
  return k == OrderedEffect::debug_print ? "debug_print" : "io_callback";
}

/// A block Value's data as debug_print shows it: nested lists in row-major
/// order, `[[1, 2], [3, 4]]`. A format spec applies to every element, so
/// `{:.2f}` prints each float with two decimals.
template <class T>
struct PrintedBlock {
  const T* data = nullptr;
  Shape shape;
};

namespace detail {

/// A user callback with its argument adapter: takes host copies of the values.
class HostCallback {
 public:
  virtual ~HostCallback() = default;
  virtual void call(std::span<const Buffer* const> args) = 0;
};

/// Owns the callbacks of traced io_callback ops; a graph refers to an entry by
/// its address (stable: entries are never moved or freed). Every trace of an
/// io_callback adds one entry that lives until the process exits.
class HostCallbackRegistry {
 public:
  HostCallback* add(std::unique_ptr<HostCallback> cb) {
    std::lock_guard lock(mutex_);
    return entries_.emplace_back(std::move(cb)).get();
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<HostCallback>> entries_;
};

inline HostCallbackRegistry& host_callbacks() {
  static HostCallbackRegistry r;
  return r;
}

inline std::int64_t callback_attr(HostCallback* cb) {
  return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(cb));
}
inline HostCallback* callback_of(std::int64_t attr) {
  return reinterpret_cast<HostCallback*>(static_cast<std::intptr_t>(attr));
}

}  // namespace detail
}  // namespace refx

template <class T>
struct fmt::formatter<refx::PrintedBlock<T>> : fmt::formatter<T> {
  template <class Ctx>
  auto format(const refx::PrintedBlock<T>& b, Ctx& ctx) const {
    std::int64_t offset = 0;
    write(b, 0, offset, ctx);
    return ctx.out();
  }

 private:
  template <class Ctx>
  void write(const refx::PrintedBlock<T>& b, std::size_t dim, std::int64_t& offset, Ctx& ctx) const {
    auto out = ctx.out();
    *out++ = '[';
    for (std::int64_t i = 0; i < b.shape[dim]; ++i) {
      if (i > 0) {
        *out++ = ',';
        *out++ = ' ';
      }
      ctx.advance_to(out);
      if (dim + 1 < b.shape.rank()) write(b, dim + 1, offset, ctx);
      else ctx.advance_to(fmt::formatter<T>::format(b.data[offset++], ctx));
      out = ctx.out();
    }
    *out++ = ']';
    ctx.advance_to(out);
  }
};
