#pragma once
// Three Pallas calls that move no data (docs/pallas-to-refx.md):
//
//   delay(2000);             // pl.delay(2000): this device is busy for 2 us here
//   touch(o_ref);            // pltpu.touch(o_ref): o_ref counts as read and written here
//   trace_value("m", m_max); // pltpu.trace_value: a scalar on the timeline
//
// delay widens a race window: the threaded runtime spins for that long on
// the device's thread (copies in flight land meanwhile), predict adds the
// time to the device's modelled clock, and refx::explore makes it a
// scheduling point (every order is tried there anyway). touch records a read
// and a write of the Ref's view and changes nothing: ops after it stay after
// it, and the race detector counts it as a write. (Pallas needs touch for
// pl.kernel to alias an output the kernel never writes; in refx every
// writable Ref parameter is an output.) trace_value puts a scalar Value (or
// number) on the device's lane of the runtime's timeline, a counter track
// per label (docs/runtime.md, "Timeline"); elsewhere it does nothing.

#include <cstdint>
#include <string>
#include <string_view>

#include <refx/core/source_location.hpp>
#include <refx/ir/primitives/builtins.hpp>
#include <refx/trace/detail/tracer.hpp>
#include <refx/trace/effects.hpp>
#include <refx/trace/ref.hpp>
#include <refx/trace/semaphore.hpp>

namespace refx {

/// The device is busy for `ns` nanoseconds (>= 0) when it reaches this line.
inline void delay(std::int64_t ns, refx::source_location loc = refx::source_location::current()) {
  auto& t = detail::Tracer::current(loc);
  t.note(loc);
  const std::int64_t attrs[] = {ns};
  t.bind(prim::delay, {}, {}, attrs, loc);
}

/// `value` (a scalar Value or a number) on the timeline under `label`.
template <class V>
void trace_value(std::string_view label, const V& value, refx::source_location loc = refx::source_location::current()) {
  static_assert(detail::effect_arg<V>::supported,
                "refx: trace_value takes a traced scalar Value (load() a Ref first) or a number of an element type");
  auto& t = detail::Tracer::current(loc);
  t.note(loc);
  const ValueId ins[] = {detail::effect_arg<V>::id(value)};
  const std::int64_t attrs[] = {t.graph().add_string(std::string(label))};
  t.bind(prim::trace_value, ins, {}, attrs, loc);
}

/// Records a read and a write of all of `ref`'s view, changing nothing.
template <class R>
  requires(is_ref_v<R> && !is_semaphore_v<R>)
void touch(const R& ref, refx::source_location loc = refx::source_location::current()) {
  auto& t = detail::Tracer::current(loc);
  t.note(loc);
  const ViewId views[] = {ref.view()};
  t.bind(prim::touch, {}, views, {}, loc);
}
template <class R>
  requires(!is_ref_v<R> || is_semaphore_v<R>)
void touch(const R&) {
  static_assert(detail::dependent_false<R>,
                "refx: touch takes a Ref (a kernel parameter, a run_scoped buffer or a view of one), not a Value, "
                "a semaphore or a number");
}

}  // namespace refx
