#pragma once
// A primitive is defined once: name, abstract evaluation (output types and
// effects from input types), implementation on concrete buffers, and
// optionally a printer and a cost hint. Built-in ops use this same API.

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <refx/ir/graph.hpp>

namespace refx {

class ExecContext;

enum class ExecStatus : std::uint8_t { done, blocked };

/// How the evaluator runs an op's nested blocks.
enum class ControlKind : std::uint8_t { none, scope, loop, cond };

/// What abstract evaluation sees of an op being traced, and where it puts the
/// op's output types and effects.
class AbstractContext {
 public:
  AbstractContext(const Graph& g, const Primitive& p, std::span<const ValueId> inputs, std::span<const ViewId> views,
                  std::span<const std::int64_t> attrs, SourceLoc loc)
      : graph_(g), prim_(p), inputs_(inputs), views_(views), attrs_(attrs), loc_(loc) {}

  // The accessors check their index: an op bound (through refx::extend) with
  // fewer operands or attributes than its primitive reads is a TraceError.
  std::size_t num_inputs() const noexcept { return inputs_.size(); }
  const ValueType& input(std::size_t i) const { return graph_.type(inputs_[checked(i, inputs_.size(), "operand")]); }
  std::size_t num_views() const noexcept { return views_.size(); }
  ViewId view(std::size_t i) const { return views_[checked(i, views_.size(), "Ref operand")]; }
  /// The Ref a view is into.
  const ValueType& view_ref(std::size_t i) const { return graph_.type(graph_.view(view(i)).ref); }
  Shape view_shape(std::size_t i) const { return graph_.view_shape(view(i)); }
  /// The element type view i presents (its Ref's, unless the view is a bitcast).
  DType view_dtype(std::size_t i) const { return graph_.view_dtype(view(i)); }
  std::size_t num_attrs() const noexcept { return attrs_.size(); }
  std::int64_t attr(std::size_t i) const { return attrs_[checked(i, attrs_.size(), "attribute")]; }
  /// Attribute i as an element type (a TraceError if it names none).
  DType dtype_attr(std::size_t i) const {
    const std::int64_t a = attr(i);
    if (a < 0 || a > static_cast<std::int64_t>(last_dtype))
      fail("attribute {} is {}, which is not an element type", i, a);
    return static_cast<DType>(a);
  }
  /// A shape stored as attributes: the rank at attribute i, then the extents
  /// (a TraceError for a rank above 6 or a negative extent).
  Shape shape_attrs(std::size_t i) const {
    const std::int64_t rank = attr(i);
    if (rank < 0 || rank > static_cast<std::int64_t>(max_rank))
      fail("attribute {} is a rank of {}; ranks go from 0 to {}", i, rank, max_rank);
    Shape s;
    for (std::size_t d = 0; d < static_cast<std::size_t>(rank); ++d) {
      const std::int64_t e = attr(i + 1 + d);
      if (e < 0) fail("extent {} of the shape in its attributes is {}; extents must be >= 0", d, e);
      s.push_back(e);
    }
    return s;
  }
  const Graph& graph() const noexcept { return graph_; }
  SourceLoc loc() const noexcept { return loc_; }

  void add_output(ValueType t) { outputs_.push_back(std::move(t)); }
  void add_effect(std::uint8_t bits, ViewId view = no_id, std::uint8_t token = 0) {
    effects_.push_back(Effect{bits, token, view});
  }

  /// Raises a TraceError naming the primitive and the user's source line.
  template <class... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const;

  std::vector<ValueType>& outputs() noexcept { return outputs_; }
  std::vector<Effect>& effects() noexcept { return effects_; }

 private:
  std::size_t checked(std::size_t i, std::size_t n, const char* what) const {
    if (i >= n) fail("expects at least {} {}{}, got {}", i + 1, what, i == 0 ? "" : "s", n);
    return i;
  }

  const Graph& graph_;
  const Primitive& prim_;
  std::span<const ValueId> inputs_;
  std::span<const ViewId> views_;
  std::span<const std::int64_t> attrs_;
  SourceLoc loc_;
  std::vector<ValueType> outputs_;
  std::vector<Effect> effects_;
};

/// Elementwise kernel over contiguous arrays: out[i] = f(in0[i], in1[i], ...).
using ElementwiseFn = void (*)(DType in_type, const void* const* ins, void* out, std::int64_t n);

struct Primitive {
  std::string_view name;
  void (*abstract_eval)(AbstractContext&) = nullptr;
  ExecStatus (*impl)(ExecContext&, const Op&) = nullptr;
  /// Optional: the op's body when printed (after "outs = "); default prints `name[attrs] inputs`.
  void (*print)(const Graph&, const Op&, std::string& out) = nullptr;
  /// Optional: relative cost hint for passes that estimate work (default 1);
  /// refx's scheduler orders by op kind and program order and does not read it.
  double (*cost)(const Graph&, const Op&) = nullptr;
  ControlKind control = ControlKind::none;
  /// Set for elementwise ops over equal shapes: the fusion pass may chain them.
  ElementwiseFn elementwise = nullptr;
  /// The op's outputs are Refs whose storage the executor allocates
  /// statically for the whole kernel (see prim::allocate).
  bool allocates = false;
  /// The outputs depend on the inputs, the attributes and the device's place
  /// in the mesh alone: no Ref is read or written, no semaphore, no effect.
  /// A device's reused state (the threaded runtime's, between launches of a
  /// program) keeps the results of a pure op whose inputs are all kept too,
  /// instead of computing them again: index arithmetic on constants and
  /// axis_index runs once per device, not once per call (ExecContext::run).
  bool pure = false;
};

namespace detail {
/// `p`, marked pure (Primitive::pure).
constexpr Primitive as_pure(Primitive p) {
  p.pure = true;
  return p;
}
}  // namespace detail

template <class... Args>
[[noreturn]] void AbstractContext::fail(fmt::format_string<Args...> f, Args&&... args) const {
  trace_error(loc_, "{}: {}", prim_.name, fmt::format(f, std::forward<Args>(args)...));
}

namespace detail {
/// The built-in primitives (ir/primitives/detail/builtin_list.hpp): constant
/// initialised, so the registry can list them whenever it is first used.
extern const std::span<const Primitive* const> builtin_primitives;

class PrimitiveRegistry {
 public:
  PrimitiveRegistry() {
    for (const Primitive* p : builtin_primitives) by_name_.emplace(p->name, p);
  }
  /// Stores `p` and a copy of its name (the stored definition's name views it).
  const Primitive& add(const Primitive& p) {
    std::lock_guard lock(mutex_);
    if (by_name_.contains(p.name)) throw Error(fmt::format("refx: a primitive named '{}' is already defined", p.name));
    Primitive& stored = store_.emplace_back(p);
    stored.name = names_.emplace_back(p.name);
    by_name_.emplace(stored.name, &stored);
    return stored;
  }
  const Primitive* find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<Primitive> store_;    // stable addresses
  std::deque<std::string> names_;  // the stored primitives' names
  std::unordered_map<std::string_view, const Primitive*> by_name_;
};

/// Never destroyed: graphs point at the registered primitives and print their
/// names until the process ends, the REFX_TRACE_FILE timeline among them (its
/// static destructor may run after any other's).
inline PrimitiveRegistry& primitive_registry() {
  static PrimitiveRegistry& r = *new PrimitiveRegistry;
  return r;
}
}  // namespace detail

/// Registers a primitive and returns the stored definition (its address is
/// the primitive's identity), which keeps a copy of `name` until the process
/// ends. Names are unique.
inline const Primitive& define_primitive(const Primitive& p) { return detail::primitive_registry().add(p); }

/// The primitive registered under `name`, or nullptr.
inline const Primitive* find_primitive(std::string_view name) { return detail::primitive_registry().find(name); }

}  // namespace refx
