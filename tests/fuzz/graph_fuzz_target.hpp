#pragma once
// The graph-builder fuzz target (docs/reliability.md): arbitrary bytes become
// a sequence of trace-time operations -- every registered primitive bound
// through refx::extend's record path with arbitrary operands and attributes,
// views made with arbitrary indices (static, traced, out of bounds), copy
// descriptors over arbitrary Refs started and waited, barrier semaphores,
// and nested fori_loops, `when`s and run_scoped scopes -- and the graph that
// comes out is verified, run through the whole pass pipeline, printed and
// exported to DOT. Nothing is executed.
//
// The contract: no crash, no undefined behaviour (sanitizers), and every
// rejection is a refx::Error (the slice/shape helpers throw its
// refx::ArgumentError). Anything else
// escapes run_one as the exception itself.
//
// Used by tests/fuzz/graph_fuzzer.cpp (libFuzzer, clang) and by
// tests/reliability/graph_fuzz_test.cpp (random inputs, every compiler).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/passes/pipeline.hpp>

namespace refx::fuzz {

/// What one input did.
struct Stats {
  std::int64_t binds = 0, bind_errors = 0, views = 0, scopes = 0, graphs = 0, trace_errors = 0, verified = 0,
               verify_errors = 0, compiled = 0, compile_errors = 0;
  Stats& operator+=(const Stats& o) {
    binds += o.binds;
    bind_errors += o.bind_errors;
    views += o.views;
    scopes += o.scopes;
    graphs += o.graphs;
    trace_errors += o.trace_errors;
    verified += o.verified;
    verify_errors += o.verify_errors;
    compiled += o.compiled;
    compile_errors += o.compile_errors;
    return *this;
  }
};

namespace detail {

/// True for the exceptions the contract allows.
inline bool acceptable(const std::exception& e) {
  return dynamic_cast<const Error*>(&e) != nullptr;
}

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::int64_t small() { return static_cast<std::int64_t>(byte() % 12) - 2; }  // -2 .. 9
  /// An attribute: mostly small, sometimes a boundary value.
  std::int64_t attr() {
    const std::uint8_t k = byte();
    switch (k % 16) {
      case 0: return -1;
      case 1: return std::numeric_limits<std::int64_t>::max();
      case 2: return std::numeric_limits<std::int64_t>::min();
      case 3: return 1 << 20;
      case 4: return static_cast<std::int64_t>(byte()) << 24;
      default: return small();
    }
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_, pos_ = 0;
};

inline const std::vector<const Primitive*>& primitives() {
  static const std::vector<const Primitive*> prims = [] {
    std::vector<const Primitive*> v;
    for (const char* name :
         {"semaphore_signal", "semaphore_wait", "semaphore_read", "barrier_semaphore", "dma_start", "dma_wait", "scope",
          "fori_loop", "when", "allocate", "debug_print", "io_callback", "neg", "abs", "exp", "log", "sqrt",
          "logical_not", "add", "sub", "mul", "div", "rem", "min", "max", "logical_and", "logical_or", "eq", "ne", "lt",
          "le", "gt", "ge", "select", "fused", "load", "store", "accum", "constant", "iota", "broadcast", "convert",
          "reduce_sum", "reduce_max", "dot", "axis_index", "axis_size"})
      if (const Primitive* p = find_primitive(name)) v.push_back(p);
    return v;
  }();
  return prims;
}

using AnyValue = Value<float, extents<>>;                 // only the id matters to record()
using AnyRef = Ref<float, extents<>, Vmem>;               // only the view matters to record()

class Builder {
 public:
  Builder(Input& in, Stats& s) : in_(in), s_(s) {}

  /// The kernel body: consumes the input.
  void body(std::vector<ValueId> values, std::vector<ViewId> views) {
    values_ = std::move(values);
    views_ = std::move(views);
    block(0);
  }

 private:
  template <class T>
  T pick(const std::vector<T>& pool) {
    if (pool.empty()) return no_id;
    return pool[in_.byte() % pool.size()];
  }
  ValueId value() { return pick(values_); }
  ViewId view() { return pick(views_); }
  ValueId scalar_of(DType t) {
    std::vector<ValueId> c;
    const Graph& g = refx::detail::Tracer::current().graph();
    for (ValueId v : values_)
      if (v >= 0 && static_cast<std::size_t>(v) < g.num_values() && !g.type(v).is_ref() && g.type(v).dtype == t &&
          g.type(v).shape.rank() == 0)
        c.push_back(v);
    return c.empty() ? no_id : c[in_.byte() % c.size()];
  }

  void add_outputs(std::span<const ValueId> outs) {
    Graph& g = refx::detail::Tracer::current().graph();
    for (ValueId v : outs) {
      values_.push_back(v);
      if (g.type(v).is_ref()) views_.push_back(whole_view(g, v));
    }
  }

  template <std::size_t NI, std::size_t NV>
  std::span<const ValueId> record_n(const Primitive& p, const ValueId* ins, const ViewId* vs, const extend::Attrs& a) {
    return [&]<std::size_t... I, std::size_t... J>(std::index_sequence<I...>, std::index_sequence<J...>) {
      return refx::detail::record(p, refx::detail::wrap<float, extents<>>(ins[I])..., AnyRef::from_view(vs[J])..., a)
          .first;
    }(std::make_index_sequence<NI>{}, std::make_index_sequence<NV>{});
  }
  template <std::size_t NI>
  std::span<const ValueId> record_views(const Primitive& p, const ValueId* ins, std::size_t nv, const ViewId* vs,
                                        const extend::Attrs& a) {
    switch (nv) {
      case 0: return record_n<NI, 0>(p, ins, vs, a);
      case 1: return record_n<NI, 1>(p, ins, vs, a);
      case 2: return record_n<NI, 2>(p, ins, vs, a);
      case 3: return record_n<NI, 3>(p, ins, vs, a);
      default: return record_n<NI, 4>(p, ins, vs, a);
    }
  }

  void bind() {
    const auto& prims = primitives();
    const Primitive& p = *prims[in_.byte() % prims.size()];
    const std::size_t ni = in_.byte() % 4, nv = in_.byte() % 5, na = in_.byte() % 6;
    ValueId ins[4];
    ViewId vs[4];
    for (std::size_t i = 0; i < ni; ++i) ins[i] = value();
    for (std::size_t i = 0; i < nv; ++i) vs[i] = view();
    std::vector<std::int64_t> attrs;
    for (std::size_t i = 0; i < na; ++i) attrs.push_back(in_.attr());
    // A string attribute must be one the graph holds: Graph offers no way to
    // check an index (a known limit, docs/reliability.md), so these stay valid
    // (the kernel's axis names are strings 0 and 1).
    if (!attrs.empty() && (p.name == "debug_print" || p.name == "axis_index" || p.name == "axis_size"))
      attrs[0] = in_.byte() % 2;
    const extend::Attrs a(std::move(attrs));
    ++s_.binds;
    std::span<const ValueId> outs;
    switch (ni) {
      case 0: outs = record_views<0>(p, ins, nv, vs, a); break;
      case 1: outs = record_views<1>(p, ins, nv, vs, a); break;
      case 2: outs = record_views<2>(p, ins, nv, vs, a); break;
      default: outs = record_views<3>(p, ins, nv, vs, a); break;
    }
    add_outputs(outs);
  }

  refx::detail::IndexEntry entry() {
    const std::uint8_t k = in_.byte() % 5;
    if (k == 0) return {refx::detail::squeeze_dim, DynIndex{in_.small(), -1}, 1, 1};
    if (k == 1) return {refx::detail::keep_dim, {}, 0, 1};
    if (k == 2) {
      const ValueId s = scalar_of(DType::i32);
      if (s != no_id) return {refx::detail::squeeze_dim, DynIndex{0, s}, 1, 1};
    }
    // A slice as ds() makes it: size >= 0, stride >= 1, any start.
    const std::int64_t size = in_.byte() % 6, stride = 1 + in_.byte() % 3;
    DynIndex start{in_.small(), -1};
    if (k == 3) {
      const ValueId s = scalar_of(DType::i32);
      if (s != no_id) start = DynIndex{0, s};
    }
    return {refx::dyn, start, size, stride};
  }
  void make_view() {
    const ViewId parent = view();
    if (parent == no_id) return;
    ++s_.views;
    ViewId v = no_id;
    switch (in_.byte() % 4) {
      case 0: v = refx::detail::make_view(parent, {}); break;
      case 1: v = refx::detail::make_view(parent, {entry()}); break;
      case 2: v = refx::detail::make_view(parent, {entry(), entry()}); break;
      default: v = refx::detail::make_view(parent, {entry(), entry(), entry()}); break;
    }
    views_.push_back(v);
  }

  /// Pools as they were before a nested body (its values end with it; using
  /// them later must be a TraceError, so they are kept now and then).
  struct Saved {
    std::size_t values, views;
  };
  Saved save() const { return {values_.size(), views_.size()}; }
  void restore(Saved s) {
    if (in_.byte() % 4 == 0) return;  // keep the body's handles: later uses must be rejected
    values_.resize(s.values);
    views_.resize(s.views);
  }

  void nested(int depth) {
    ++s_.scopes;
    const Saved saved = save();
    switch (in_.byte() % 4) {
      case 0: {
        const ValueId lo = scalar_of(DType::i32), hi = scalar_of(DType::i32);
        const Scalar<std::int32_t> l = lo != no_id ? refx::detail::wrap<std::int32_t, extents<>>(lo) : Scalar<std::int32_t>(static_cast<std::int32_t>(in_.small()));
        const Scalar<std::int32_t> h = hi != no_id ? refx::detail::wrap<std::int32_t, extents<>>(hi) : Scalar<std::int32_t>(static_cast<std::int32_t>(in_.small()));
        fori_loop(l, h, [&](Scalar<std::int32_t> i) {
          values_.push_back(i.id());
          block(depth + 1);
        });
        break;
      }
      case 1: {
        const ValueId c = scalar_of(DType::pred);
        const Scalar<bool> cond = c != no_id ? refx::detail::wrap<bool, extents<>>(c)
                                             : Scalar<std::int32_t>(static_cast<std::int32_t>(in_.small())) == 1;
        when(cond, [&] { block(depth + 1); });
        break;
      }
      case 2:
        run_scoped([&](VmemRef<float, 4, 8> a, VmemRef<std::int32_t, 8> b, DmaSemaphore d, RegularSemaphore r,
                       DmaSemaphores<2> ds2) {
          for (ValueId v : {a.base(), b.base()}) values_.push_back(v);
          for (ViewId v : {a.view(), b.view(), d.view(), r.view(), ds2.view()}) views_.push_back(v);
          block(depth + 1);
        });
        break;
      default: {
        const auto carry = run_state(full<float, 4>(1.0f), [&](VmemRef<float, 4> s) {
          views_.push_back(s.view());
          block(depth + 1);
        });
        values_.push_back(carry.id());
        break;
      }
    }
    restore(saved);
  }

  void copy(bool remote) {
    const ViewId src = view(), dst = view(), recv = view();
    if (src == no_id) return;
    const SourceLoc loc = std::source_location::current();
    if (!remote) {
      const AsyncCopy c(src, dst, recv, loc);
      if (in_.byte() % 4 != 0) c.start(Accumulate{static_cast<CopyReduce>(in_.byte() % 3)});
      if (in_.byte() % 4 != 0) c.wait();
      return;
    }
    const ViewId send = view();
    const ValueId device = in_.byte() % 2 ? scalar_of(DType::i32) : value();
    if (device == no_id) return;
    const AsyncRemoteCopy c(src, dst, send, recv, device, loc);
    if (in_.byte() % 4 != 0) c.start();
    switch (in_.byte() % 4) {
      case 0: c.wait(); break;
      case 1: c.wait_send(); break;
      case 2: c.wait_recv(); break;
      default: break;
    }
  }

  void step(int depth) {
    const std::uint8_t op = in_.byte() % 16;
    try {
      if (op < 8) bind();
      else if (op < 11) make_view();
      else if (op < 13 && depth < 3) nested(depth);
      else if (op == 13) copy(false);
      else if (op == 14) copy(true);
      else views_.push_back(get_barrier_semaphore(in_.small()).view());
    } catch (const std::exception& e) {
      if (!acceptable(e)) throw;
      ++s_.bind_errors;
    }
  }
  void block(int depth) {
    const int n = 1 + in_.byte() % 12;
    for (int k = 0; k < n && !in_.done(); ++k) step(depth);
  }

  Input& in_;
  Stats& s_;
  std::vector<ValueId> values_;
  std::vector<ViewId> views_;
};

}  // namespace detail

/// Runs one input (see the top of this file). Unacceptable exceptions escape.
inline Stats run_one(const std::uint8_t* data, std::size_t size) {
  Stats s;
  detail::Input in(data, size);
  static const Mesh mesh{{"y", 2}, {"x", 2}};
  Graph g;
  try {
    g = trace(
        [&](VmemRef<float, 4, 8> a, VmemRef<const float, 8> b, HbmRef<float, 8> c, SmemRef<std::int32_t> d,
            VmemRef<bool, 4> e, VmemRef<double, 2, 2> f) {
          detail::Builder builder(in, s);
          std::vector<ValueId> values{a.base(), b.base(), c.base(), d.base(), e.base(), f.base(), axis_index("x").id(),
                                      axis_size("y").id(), Scalar<std::int32_t>(1).id(), (axis_index("y") > 0).id(),
                                      b.load().id(), Scalar<float>(0.5f).id()};
          std::vector<ViewId> views{a.view(), b.view(), c.view(), d.view(), e.view(), f.view()};
          run_scoped([&](DmaSemaphore dma, RegularSemaphore reg, DmaSemaphores<2> dmas, VmemRef<float, 8> scratch) {
            for (ViewId v : {dma.view(), reg.view(), dmas.view(), scratch.view()}) views.push_back(v);
            values.push_back(scratch.base());
            builder.body(std::move(values), std::move(views));
          });
        },
        TraceOptions{{}, &mesh, static_cast<std::int64_t>(in.byte() % 3) - 1});
  } catch (const std::exception& e) {
    if (!detail::acceptable(e)) throw;
    ++s.trace_errors;
    return s;
  }
  ++s.graphs;
  (void)to_text(g);
  (void)to_dot(g);
  try {
    (void)passes::verify(g);
    ++s.verified;
  } catch (const std::exception& e) {
    if (!detail::acceptable(e)) throw;
    ++s.verify_errors;
  }
  try {
    passes::Options o;
    o.verify = false;  // the rest of the pipeline must cope with unverified graphs too
    passes::run_pipeline(g, o);
    (void)to_text(g);
    ++s.compiled;
  } catch (const std::exception& e) {
    if (!detail::acceptable(e)) throw;
    ++s.compile_errors;
  }
  return s;
}

}  // namespace refx::fuzz
