#pragma once
// Host-effect primitives: debug_print and io_callback. Each is ordered or
// unordered. Abstract evaluation records the effect (effect_ordered with the
// kind as its token, or effect_io); the implementation builds a HostEffect
// and hands it to the ExecEnv, which performs it (the reference interpreter:
// at once; the threaded runtime: unordered at once, ordered in a
// deterministic cross-device order, see docs/effects.md).
//
//   debug_print  inputs [values...]  attrs [format (graph string), ordered]
//   io_callback  inputs [values...]  attrs [callback (registry entry), ordered]
//   delay        attrs [nanoseconds]: the device is busy that long (Pallas'
//                pl.delay); ExecEnv::delay spends it, a visible effect that
//                passes keep
//   trace_value  inputs [scalar]  attrs [label (graph string)]: the value on
//                the device's lane of the runtime's timeline (Pallas'
//                pltpu.trace_value); the timeline's observer records it, the
//                op itself does nothing

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <fmt/args.h>
#include <fmt/format.h>

#include <refx/ir/eval.hpp>
#include <refx/ir/host_effects.hpp>
#include <refx/ir/primitive.hpp>
#include <refx/ir/primitives/handles.hpp>

namespace refx {

namespace detail {

class PrintEffect final : public HostEffect {
 public:
  explicit PrintEffect(std::string text) : text_(std::move(text)) {}
  void perform(const PrintSink& print) override { print(text_); }

 private:
  std::string text_;
};

/// An io_callback reached by a device. Unordered: refers to the device's
/// values (performed at once). Ordered: owns copies of them.
class CallbackEffect final : public HostEffect {
 public:
  CallbackEffect(HostCallback* fn, std::vector<const Buffer*> args) : fn_(fn), args_(std::move(args)) {}
  void own_copies() {
    owned_.reserve(args_.size());
    for (const Buffer*& a : args_) {
      owned_.push_back(a->clone());
      a = &owned_.back();
    }
  }
  void perform(const PrintSink&) override { fn_->call(args_); }

 private:
  HostCallback* fn_;
  std::vector<const Buffer*> args_;
  std::vector<Buffer> owned_;  // reserved up front: addresses stay valid
};

inline void effect_abstract(AbstractContext& c, OrderedEffect kind) {
  for (std::size_t i = 0; i < c.num_inputs(); ++i)
    if (c.input(i).is_ref()) c.fail("argument {} is a Ref; load() it into a Value first", i);
  if (c.attr(1) != 0) c.add_effect(effect_ordered, no_id, static_cast<std::uint8_t>(kind));
  else c.add_effect(effect_io);
}
inline void print_abstract(AbstractContext& c) { effect_abstract(c, OrderedEffect::debug_print); }
inline void callback_abstract(AbstractContext& c) { effect_abstract(c, OrderedEffect::io_callback); }

/// Formats `fmt` with the op's inputs: scalars as their value, blocks as
/// PrintedBlock (nested lists).
inline std::string format_values(ExecContext& ctx, const Op& op, std::string_view f) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  const auto ins = ctx.graph().inputs(op);
  args.reserve(ins.size(), 0);
  for (std::size_t i = 0; i < ins.size(); ++i) {
    const Buffer& b = ctx.in(op, i);
    visit_dtype(b.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (b.shape().rank() == 0) args.push_back(*b.data<T>());
      else args.push_back(PrintedBlock<T>{b.data<T>(), b.shape()});
    });
  }
  return fmt::vformat(f, args);
}

inline ExecStatus print_impl(ExecContext& ctx, const Op& op) {
  std::string text;
  try {
    text = format_values(ctx, op, ctx.graph().string(prim::host_effect_attrs(ctx.graph(), op).payload));
  } catch (const fmt::format_error& e) {  // only with fmt::runtime(...): literals are checked at compile time
    throw RuntimeError(
        fmt::format("refx: debug_print at {}: the format does not fit the values: {}", op.loc, e.what()));
  }
  auto e = std::make_unique<PrintEffect>(std::move(text));
  e->ordered = prim::host_effect_attrs(ctx.graph(), op).ordered;
  e->token = static_cast<std::uint8_t>(OrderedEffect::debug_print);
  ctx.env().host_effect(ctx, op, std::move(e));
  return ExecStatus::done;
}

inline ExecStatus callback_impl(ExecContext& ctx, const Op& op) {
  std::vector<const Buffer*> args;
  args.reserve(op.in_count);
  for (std::size_t i = 0; i < op.in_count; ++i) args.push_back(&ctx.in(op, i));
  const prim::HostEffectAttrs a = prim::host_effect_attrs(ctx.graph(), op);
  auto e = std::make_unique<CallbackEffect>(callback_of(a.payload), std::move(args));
  e->ordered = a.ordered;
  e->token = static_cast<std::uint8_t>(OrderedEffect::io_callback);
  if (e->ordered) e->own_copies();  // the env may perform it after the values change
  ctx.env().host_effect(ctx, op, std::move(e));
  return ExecStatus::done;
}

inline void delay_abstract(AbstractContext& c) {
  if (c.attr(0) < 0) c.fail("{} ns: give a non-negative number of nanoseconds", c.attr(0));
  c.add_effect(effect_io);
}
inline ExecStatus delay_impl(ExecContext& ctx, const Op& op) {
  ctx.env().delay(ctx, ctx.attr(op, 0));
  return ExecStatus::done;
}
inline void delay_print(const Graph& g, const Op& op, std::string& s) {
  s += fmt::format("delay[{}ns]", g.attrs(op)[0]);
}

inline void trace_value_abstract(AbstractContext& c) {
  const ValueType& v = c.input(0);
  if (v.is_ref()) c.fail("takes a scalar Value; load() the Ref first");
  if (v.shape.rank() != 0) c.fail("takes a scalar, got a {}{} value", v.dtype, v.shape);
  c.add_effect(effect_io);
}
inline ExecStatus trace_value_impl(ExecContext&, const Op&) { return ExecStatus::done; }

inline std::string quote_text(std::string_view s) {
  std::string r = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') r += '\\';
    if (ch == '\n') r += "\\n";
    else r += ch;
  }
  return r + "\"";
}

inline void print_print(const Graph& g, const Op& op, std::string& s) {
  const prim::HostEffectAttrs a = prim::host_effect_attrs(g, op);
  s += fmt::format("debug_print[{}{}]", a.ordered ? "ordered " : "", quote_text(g.string(a.payload)));
}
inline void trace_value_print(const Graph& g, const Op& op, std::string& s) {
  s += fmt::format("trace_value[{}]", quote_text(g.string(g.attrs(op)[0])));
}
inline void callback_print(const Graph& g, const Op& op, std::string& s) {
  s += prim::host_effect_attrs(g, op).ordered ? "io_callback[ordered]" : "io_callback";
}

}  // namespace detail

namespace prim {
#if REFX_DEFINITIONS
// Constant-initialised (no dynamic initialisation): usable from any static
// initializer, whatever the order of translation units.
namespace defs {
inline constexpr Primitive debug_print =
    Primitive{"debug_print", refx::detail::print_abstract, refx::detail::print_impl, refx::detail::print_print};
inline constexpr Primitive io_callback = Primitive{"io_callback", refx::detail::callback_abstract,
                                                   refx::detail::callback_impl, refx::detail::callback_print};
inline constexpr Primitive delay =
    Primitive{"delay", refx::detail::delay_abstract, refx::detail::delay_impl, refx::detail::delay_print};
inline constexpr Primitive trace_value = Primitive{"trace_value", refx::detail::trace_value_abstract,
                                                   refx::detail::trace_value_impl, refx::detail::trace_value_print};
}  // namespace defs
REFX_DECL constinit const Primitive& debug_print = defs::debug_print;
REFX_DECL constinit const Primitive& io_callback = defs::io_callback;
REFX_DECL constinit const Primitive& delay = defs::delay;
REFX_DECL constinit const Primitive& trace_value = defs::trace_value;
#endif  // REFX_DEFINITIONS
}  // namespace prim

}  // namespace refx

// The list of built-in primitives is defined once every one of them is.
#define REFX_BUILTINS_EFFECTS_DEFINED
#include <refx/ir/primitives/detail/builtin_list.hpp>
