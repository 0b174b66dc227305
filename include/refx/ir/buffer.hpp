#pragma once
// A dense, row-major array of one element type: the concrete storage behind
// Values and Refs when a graph runs.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include <refx/core/dtype.hpp>
#include <refx/core/error.hpp>
#include <refx/core/shape.hpp>

namespace refx {

namespace detail {
/// Keeps freed large blocks (by exact size) for reuse: repeated calls that
/// allocate outputs or scratch of the same sizes then touch no new pages
/// (fresh pages cost a fault each, which dominated large collectives).
/// Bounded; release_cached_memory() gives everything back.
class BlockPool {
 public:
  static constexpr std::size_t min_bytes = std::size_t{64} << 10;
  static constexpr std::size_t max_cached = std::size_t{1} << 30;

  static BlockPool& instance() {
    static BlockPool* p = new BlockPool;  // never destroyed: Buffers may outlive statics
    return *p;
  }
  std::byte* take(std::size_t bytes) {
    if (bytes >= min_bytes) {
      std::lock_guard lock(mutex_);
      auto it = free_.find(bytes);
      if (it != free_.end() && !it->second.empty()) {
        std::byte* p = it->second.back();
        it->second.pop_back();
        cached_ -= bytes;
        return p;
      }
    }
    return static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{64}));
  }
  void give(std::byte* p, std::size_t bytes) noexcept {
    if (bytes >= min_bytes) {
      std::lock_guard lock(mutex_);
      if (cached_ + bytes <= max_cached) {
        try {
          free_[bytes].push_back(p);
          cached_ += bytes;
          return;
        } catch (...) {  // no room to remember it: free it below
        }
      }
    }
    ::operator delete[](p, std::align_val_t{64});
  }
  std::size_t cached_bytes() {
    std::lock_guard lock(mutex_);
    return cached_;
  }
  void release() {
    std::lock_guard lock(mutex_);
    for (auto& [bytes, blocks] : free_)
      for (std::byte* p : blocks) ::operator delete[](p, std::align_val_t{64});
    free_.clear();
    cached_ = 0;
  }

 private:
  std::mutex mutex_;
  std::map<std::size_t, std::vector<std::byte*>> free_;
  std::size_t cached_ = 0;
};
/// Returns a Buffer's block to the pool.
struct PoolDelete {
  std::size_t bytes = 0;
  void operator()(std::byte* p) const noexcept { BlockPool::instance().give(p, bytes); }
};
}  // namespace detail

/// Bytes of a dense array of shape `s` and element type `t`. Throws
/// refx::Error naming `what` for a negative extent or a size beyond what
/// 64-bit byte counts can hold.
inline std::size_t dense_bytes(DType t, const Shape& s, std::string_view what) {
  for (const std::int64_t d : s.dims())
    if (d < 0) throw Error(fmt::format("refx: {} of shape {} has a negative extent", what, s));
  for (const std::int64_t d : s.dims())
    if (d == 0) return 0;
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / 8;
  std::int64_t n = 1;
  for (const std::int64_t d : s.dims()) {
    if (n > limit / d) throw Error(fmt::format("refx: {} of shape {} has too many elements to address", what, s));
    n *= d;
  }
  return static_cast<std::size_t>(n) * size_of(t);
}

/// Bytes of freed buffers refx keeps for reuse.
inline std::size_t cached_memory_bytes() { return detail::BlockPool::instance().cached_bytes(); }
/// Frees every buffer refx keeps for reuse.
inline void release_cached_memory() { detail::BlockPool::instance().release(); }

/// Owns its storage (heap or, for small arrays, inline), or borrows it: a
/// borrowed Buffer (Buffer::borrow) is a dense view of memory that someone
/// else owns (a Ref's storage, for a load that reads in place). It never
/// frees that memory, moves keep pointing at it, clone() makes an owning
/// copy, and nothing may write through it: the evaluator replaces a borrowed
/// output slot with an owned buffer before an op writes it
/// (ExecContext::out).
class Buffer {
 public:
  Buffer() = default;
  Buffer(DType t, Shape s) : dtype_(t), shape_(s) { allocate(); }

  /// A Buffer of type `t` and shape `s` over `data` (dense, row-major, at
  /// least dense_bytes(t, s) long), which the caller keeps alive and
  /// unchanged while the Buffer (or one moved from it) is read.
  static Buffer borrow(DType t, Shape s, const std::byte* data) {
    Buffer b;
    b.dtype_ = t;
    b.shape_ = s;
    b.bytes_ = dense_bytes(t, s, "a borrowed buffer");
    b.data_ = const_cast<std::byte*>(data);  // never written through: see the class comment
    b.borrowed_ = true;
    return b;
  }
  /// Whether the storage belongs to someone else (Buffer::borrow).
  bool borrowed() const noexcept { return borrowed_; }

  template <Element T>
  static Buffer from(Shape s, std::span<const T> data) {
    Buffer b(dtype_v<T>, s);
    if (static_cast<std::int64_t>(data.size()) != s.num_elements())
      throw Error(fmt::format("refx: Buffer::from: {} elements given for shape {}", data.size(), s));
    std::memcpy(b.data(), data.data(), data.size_bytes());
    return b;
  }
  template <Element T>
  static Buffer from(Shape s, const std::vector<T>& data) {
    return from<T>(s, std::span<const T>(data));
  }
  template <Element T>
  static Buffer scalar(T v) {
    Buffer b(dtype_v<T>, Shape{});
    *b.data<T>() = v;
    return b;
  }

  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    dtype_ = o.dtype_;
    shape_ = o.shape_;
    bytes_ = o.bytes_;
    heap_ = std::move(o.heap_);
    borrowed_ = o.borrowed_;
    if (borrowed_) data_ = o.data_;
    else if (!heap_) std::memcpy(small_, o.small_, bytes_);
    if (!borrowed_) data_ = heap_ ? heap_.get() : small_;
    o.bytes_ = 0;
    o.data_ = o.small_;
    o.borrowed_ = false;
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer clone() const {
    Buffer b(dtype_, shape_);
    std::memcpy(b.data_, data_, bytes_);
    return b;
  }

  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  std::int64_t size() const noexcept { return shape_.num_elements(); }
  std::size_t bytes() const noexcept { return bytes_; }
  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  template <class T>
  T* data() noexcept {
    return reinterpret_cast<T*>(data_);
  }
  template <class T>
  const T* data() const noexcept {
    return reinterpret_cast<const T*>(data_);
  }
  template <class T>
  std::span<T> span() {
    return {data<T>(), static_cast<std::size_t>(size())};
  }
  template <class T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<std::size_t>(size())};
  }
  template <Element T>
  std::vector<T> to_vector() const {
    if (dtype_v<T> != dtype_) throw Error(fmt::format("refx: to_vector<{}> on a {} buffer", dtype_v<T>, dtype_));
    auto s = span<T>();
    return {s.begin(), s.end()};
  }

  /// Reads element i (flat index) as double, whatever the dtype (tests, printing).
  double as_double(std::int64_t i) const {
    return visit_dtype(dtype_, [&](auto tag) { return static_cast<double>(data<typename decltype(tag)::type>()[i]); });
  }
  std::int64_t as_int(std::int64_t i) const {
    return visit_dtype(dtype_,
                       [&](auto tag) { return static_cast<std::int64_t>(data<typename decltype(tag)::type>()[i]); });
  }

  void fill_zero() { std::memset(data_, 0, bytes_); }
  /// Fills with a value that makes reads of unwritten memory visible: NaN for
  /// floats, the minimum for integers.
  void fill_poison() {
    visit_dtype(dtype_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T v = std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::min();
      std::fill_n(data<T>(), size(), v);
    });
  }

 private:
  void allocate() {
    bytes_ = dense_bytes(dtype_, shape_, "a buffer");
    if (bytes_ > sizeof small_) {
      std::byte* p = nullptr;
      try {
        p = detail::BlockPool::instance().take(bytes_);
      } catch (const std::bad_alloc&) {
        const std::size_t bytes = std::exchange(bytes_, 0);
        throw Error(fmt::format("refx: out of memory: a buffer of {}{} needs {} bytes", dtype_, shape_, bytes));
      }
      heap_ = std::unique_ptr<std::byte[], detail::PoolDelete>(p, detail::PoolDelete{bytes_});
      data_ = heap_.get();
    } else {
      data_ = small_;
    }
  }

  DType dtype_ = DType::f32;
  Shape shape_;
  std::size_t bytes_ = 0;
  std::unique_ptr<std::byte[], detail::PoolDelete> heap_;
  alignas(16) std::byte small_[48];  // small values (scalars, short vectors) need no heap
  std::byte* data_ = small_;
  bool borrowed_ = false;  // data_ is someone else's memory (borrow)
};

}  // namespace refx
