#pragma once
// The traced program: SSA values, ops with effects and source lines, nested
// blocks for loops, conditionals and scopes. Ops refer into flat pools by
// offset so that graphs of a million ops stay compact and cache-friendly.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/dtype.hpp>
#include <refx/core/error.hpp>
#include <refx/core/memory_space.hpp>
#include <refx/core/shape.hpp>
#include <refx/core/slice.hpp>
#include <refx/ir/buffer.hpp>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace refx {

namespace detail {

/// The allocator of the graph's pools. A pool of a million ops is hundreds of
/// MiB, which fresh from the OS costs more in page faults than tracing the
/// ops. Past 4 MiB, blocks come from the process's cache of freed large
/// blocks (the one that recycles Buffers; `release_cached_memory` empties it)
/// and are advised as huge pages (Linux), so tracing a large kernel again
/// reuses memory that is already mapped, and the passes' scans do not thrash
/// the TLB.
template <class T>
struct PoolAllocator {
  using value_type = T;
  static constexpr std::size_t threshold = std::size_t{4} << 20;

  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < threshold) return std::allocator<T>{}.allocate(n);
    std::byte* p = BlockPool::instance().take(bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t page = 4096;
    const auto first = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
    const auto last = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice: failure changes nothing
#endif
    return reinterpret_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < threshold) std::allocator<T>{}.deallocate(p, n);
    else BlockPool::instance().give(reinterpret_cast<std::byte*>(p), n * sizeof(T));
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using Pool = std::vector<T, PoolAllocator<T>>;

}  // namespace detail

using ValueId = std::int32_t;
using OpId = std::int32_t;
using BlockId = std::int32_t;
using ViewId = std::int32_t;
inline constexpr std::int32_t no_id = -1;

enum class ValueKind : std::uint8_t { array, ref };

/// The abstract type of a value: what abstract evaluation computes.
struct ValueType {
  DType dtype = DType::f32;
  ValueKind kind = ValueKind::array;
  MemorySpace space = MemorySpace::vmem;
  SemaphoreKind semaphore = SemaphoreKind::none;
  Shape shape;

  bool is_ref() const noexcept { return kind == ValueKind::ref; }
  bool is_semaphore() const noexcept { return semaphore != SemaphoreKind::none; }
  friend bool operator==(const ValueType&, const ValueType&) = default;
};

struct ValueInfo {
  ValueType type;
  OpId producer = no_id;   ///< the op that defines it, or no_id for block params
  BlockId block = 0;       ///< the block it is defined in
  std::int32_t scope = 0;  ///< for refs: the scope that owns the storage
};

/// One dimension of a view, in the coordinates of the base Ref.
struct DimIndex {
  DynIndex start;
  std::int64_t size = 0;
  std::int64_t stride = 1;
  bool squeezed = false;  ///< indexed by an integer: the dimension is dropped
};

/// How a view presents a region whose elements it reinterprets
/// (Ref::reshape, Ref::bitcast): another element type and/or other extents
/// over the same bytes, read in row-major order.
struct ViewLayout {
  DType dtype = DType::f32;
  Shape shape;
};

/// A region of a Ref: one DimIndex per dimension of the base Ref. A
/// reinterpreting view (`layout` set) keeps the dims of the view it was made
/// from: they are its footprint, exactly the bytes it reads or writes, so the
/// region analyses (ir/regions.hpp, and the passes built on it) stay
/// exact for it; only its shape and element type come from the layout.
struct View {
  ValueId ref = no_id;
  std::uint32_t dim_begin = 0;
  std::uint8_t rank = 0;
  std::int32_t layout = no_id;  ///< index of its ViewLayout, or no_id
};

/// Effect bits (a bit set, so conflict tests are one AND).
enum EffectBits : std::uint8_t {
  effect_read = 1,
  effect_write = 2,
  effect_accum = 4,
  effect_semaphore = 8,  ///< signal, wait or DMA progress on a semaphore view
  effect_io = 16,        ///< unordered host effect (print, callback)
  effect_ordered = 32,   ///< ordered host effect; `token` names its kind
};

struct Effect {
  std::uint8_t bits = 0;
  std::uint8_t token = 0;  ///< ordered-effect kind when bits has effect_ordered
  ViewId view = no_id;     ///< the region touched, or no_id
};

struct Primitive;

struct Op {
  const Primitive* prim = nullptr;
  std::uint32_t in_begin = 0, out_begin = 0, attr_begin = 0, view_begin = 0, effect_begin = 0, block_begin = 0;
  std::uint16_t in_count = 0, out_count = 0, attr_count = 0, view_count = 0, effect_count = 0, block_count = 0;
  SourceLoc loc;
};

struct Block {
  std::vector<OpId> ops;
  std::vector<ValueId> params;
  std::vector<ValueId> results;
  OpId owner = no_id;  ///< the op whose body this is; no_id for the kernel body
};

/// A traced kernel. Block 0 is the kernel body; its params are the kernel's Refs.
class Graph {
 public:
  Graph();
  Graph(const Graph&);
  Graph(Graph&&) noexcept;
  Graph& operator=(const Graph&);
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // ---- values
  std::size_t num_values() const noexcept { return values_.size(); }
  const ValueInfo& value(ValueId v) const { return values_[static_cast<std::size_t>(v)]; }
  const ValueType& type(ValueId v) const { return value(v).type; }
  ValueId add_value(ValueInfo info) {
    values_.push_back(std::move(info));
    return static_cast<ValueId>(values_.size() - 1);
  }
  ValueInfo& mutable_value(ValueId v) { return values_[static_cast<std::size_t>(v)]; }

  // ---- ops
  std::size_t num_ops() const noexcept { return ops_.size(); }
  const Op& op(OpId o) const { return ops_[static_cast<std::size_t>(o)]; }
  std::span<const ValueId> inputs(const Op& o) const { return {operands_.data() + o.in_begin, o.in_count}; }
  std::span<const ValueId> outputs(const Op& o) const { return {operands_.data() + o.out_begin, o.out_count}; }
  std::span<const std::int64_t> attrs(const Op& o) const { return {attrs_.data() + o.attr_begin, o.attr_count}; }
  std::span<const ViewId> views(const Op& o) const { return {op_views_.data() + o.view_begin, o.view_count}; }
  std::span<const Effect> effects(const Op& o) const { return {effects_.data() + o.effect_begin, o.effect_count}; }
  std::span<const BlockId> bodies(const Op& o) const { return {op_blocks_.data() + o.block_begin, o.block_count}; }

  // ---- views
  const View& view(ViewId v) const { return views_[static_cast<std::size_t>(v)]; }
  std::size_t num_views() const noexcept { return views_.size(); }
  std::span<const DimIndex> dims(const View& v) const { return {dims_.data() + v.dim_begin, v.rank}; }
  ViewId add_view(ValueId ref, std::span<const DimIndex> dims);
  /// A view of `parent`'s region that presents it as `layout` (same bytes).
  ViewId add_reinterpreted_view(ViewId parent, ViewLayout layout);
  /// The layout of a reinterpreting view, or null.
  const ViewLayout* layout(const View& v) const {
    return v.layout == no_id ? nullptr : &layouts_[static_cast<std::size_t>(v.layout)];
  }
  /// The shape of the data a view designates (squeezed dimensions dropped).
  Shape view_shape(ViewId v) const;
  /// The element type a view presents (its Ref's, unless bitcast).
  DType view_dtype(ViewId v) const {
    const View& w = view(v);
    return w.layout == no_id ? type(w.ref).dtype : layouts_[static_cast<std::size_t>(w.layout)].dtype;
  }
  /// The shape of a view's footprint in its Ref (its dims, squeezed ones dropped).
  Shape footprint_shape(ViewId v) const;
  std::int64_t view_elements(ViewId v) const { return view_shape(v).num_elements(); }

  // ---- blocks
  std::size_t num_blocks() const noexcept { return blocks_.size(); }
  const Block& block(BlockId b) const { return blocks_[static_cast<std::size_t>(b)]; }
  Block& mutable_block(BlockId b) { return blocks_[static_cast<std::size_t>(b)]; }
  BlockId add_block() {
    blocks_.emplace_back();
    return static_cast<BlockId>(blocks_.size() - 1);
  }
  const Block& entry() const { return blocks_.front(); }

  // ---- strings (formats, names)
  /// Interns a string (equal strings get one index).
  std::int64_t add_string(std::string s);
  const std::string& string(std::int64_t i) const { return strings_[static_cast<std::size_t>(i)]; }

  /// User-given name of a value (`.name("recv")`), or empty.
  std::string_view name(ValueId v) const {
    auto it = names_.find(v);
    return it == names_.end() ? std::string_view{} : std::string_view{it->second};
  }
  void set_name(ValueId v, std::string n) { names_[v] = std::move(n); }

  /// Appends an op; the caller has already added its outputs' values.
  struct OpSpec {
    const Primitive* prim;
    std::span<const ValueId> inputs, outputs;
    std::span<const std::int64_t> attrs;
    std::span<const ViewId> views;
    std::span<const Effect> effects;
    std::span<const BlockId> bodies;
    SourceLoc loc;
  };
  OpId add_op(const OpSpec& s) {
    Op o;
    o.prim = s.prim;
    o.loc = s.loc;
    o.in_begin = append(operands_, s.inputs, o.in_count);
    o.out_begin = append(operands_, s.outputs, o.out_count);
    o.attr_begin = append(attrs_, s.attrs, o.attr_count);
    o.view_begin = append(op_views_, s.views, o.view_count);
    o.effect_begin = append(effects_, s.effects, o.effect_count);
    o.block_begin = append(op_blocks_, s.bodies, o.block_count);
    ops_.push_back(o);
    return static_cast<OpId>(ops_.size() - 1);
  }

  /// Copy descriptors made while tracing (started or not), by id.
  struct CopyDescriptor {
    SourceLoc loc;
    bool remote = false;
  };
  std::int64_t add_descriptor(CopyDescriptor d) {
    descriptors_.push_back(d);
    return static_cast<std::int64_t>(descriptors_.size() - 1);
  }
  std::span<const CopyDescriptor> descriptors() const { return descriptors_; }

  /// Kernel parameters (Refs), in call order: the entry block's params.
  std::span<const ValueId> params() const { return entry().params; }

  void reserve(std::size_t ops) {
    ops_.reserve(ops);
    values_.reserve(ops);
    operands_.reserve(ops * 3);
  }

 private:
  template <class T>
  static std::uint32_t append(detail::Pool<T>& pool, std::span<const T> items, std::uint16_t& count) {
    auto begin = static_cast<std::uint32_t>(pool.size());
    pool.insert(pool.end(), items.begin(), items.end());
    count = static_cast<std::uint16_t>(items.size());
    return begin;
  }

  detail::Pool<ValueInfo> values_;
  detail::Pool<Op> ops_;
  std::vector<Block> blocks_;
  detail::Pool<ValueId> operands_;
  detail::Pool<std::int64_t> attrs_;
  detail::Pool<ViewId> op_views_;
  detail::Pool<Effect> effects_;
  detail::Pool<BlockId> op_blocks_;
  detail::Pool<View> views_;
  detail::Pool<DimIndex> dims_;
  std::vector<ViewLayout> layouts_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::int64_t> string_index_;
  std::vector<CopyDescriptor> descriptors_;
  std::unordered_map<ValueId, std::string> names_;
};

#if REFX_DEFINITIONS
// Out of line: a graph's many pooled vectors make these long.
REFX_DECL Graph::Graph() { blocks_.emplace_back(); }
REFX_DECL Graph::Graph(const Graph&) = default;
REFX_DECL Graph::Graph(Graph&&) noexcept = default;
REFX_DECL Graph& Graph::operator=(const Graph&) = default;
REFX_DECL Graph& Graph::operator=(Graph&&) noexcept = default;
REFX_DECL Graph::~Graph() = default;

REFX_DECL ViewId Graph::add_view(ValueId ref, std::span<const DimIndex> dims) {
  View v{ref, static_cast<std::uint32_t>(dims_.size()), static_cast<std::uint8_t>(dims.size())};
  dims_.insert(dims_.end(), dims.begin(), dims.end());
  views_.push_back(v);
  return static_cast<ViewId>(views_.size() - 1);
}

REFX_DECL ViewId Graph::add_reinterpreted_view(ViewId parent, ViewLayout layout) {
  const View p = view(parent);
  View v{p.ref, static_cast<std::uint32_t>(dims_.size()), p.rank, static_cast<std::int32_t>(layouts_.size())};
  const auto pd = dims(p);
  const std::vector<DimIndex> copied(pd.begin(), pd.end());  // dims_ may reallocate while inserting
  dims_.insert(dims_.end(), copied.begin(), copied.end());
  layouts_.push_back(std::move(layout));
  views_.push_back(v);
  return static_cast<ViewId>(views_.size() - 1);
}

REFX_DECL Shape Graph::view_shape(ViewId v) const {
  if (const ViewLayout* l = layout(view(v))) return l->shape;
  return footprint_shape(v);
}

REFX_DECL Shape Graph::footprint_shape(ViewId v) const {
  Shape s;
  for (const auto& d : dims(view(v)))
    if (!d.squeezed) s.push_back(d.size);
  return s;
}

REFX_DECL std::int64_t Graph::add_string(std::string s) {
  if (auto it = string_index_.find(s); it != string_index_.end()) return it->second;
  strings_.push_back(s);
  const auto i = static_cast<std::int64_t>(strings_.size() - 1);
  string_index_.emplace(std::move(s), i);
  return i;
}
#endif  // REFX_DEFINITIONS

}  // namespace refx
