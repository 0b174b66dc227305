#pragma once
// A copy job between two resolved views, and moving its bytes: whole, or
// elements [begin, end) of contiguous views (a chunk; copy_policies.hpp).

#include <array>
#include <atomic>
#include <cstring>

#include <refx/ir/eval.hpp>
#include <refx/ir/graph.hpp>
#include <refx/ir/view_access.hpp>

namespace refx::detail {

struct TimelineCopy;  // detail/launch_timeline.hpp

struct CopyJob {
  ResolvedView src, dst;
  CopyReduce reduce = CopyReduce::none;
  std::int32_t source = 0, target = 0;
  ValueId recv_sem = no_id, send_sem = no_id;
  std::int64_t recv_index = 0, send_index = 0;
  std::int64_t bytes = 0;
  std::int64_t recv_inc = 0, send_inc = 0;  // what the semaphores rise by (CopyRequest::recv_inc)
  // Chunked jobs: `chunks` pieces of `per` elements. Pool tasks and the
  // starting device claim them through `next` until none is left; whoever
  // finishes the last one (`remaining`) completes the copy.
  int chunks = 0;
  std::int64_t per = 0;
  std::atomic<int> next{0};
  std::atomic<int> remaining{0};
  bool offered = false;                  // pool tasks were queued for it
  std::int64_t* recv_counter = nullptr;  // the semaphores it advances
  std::int64_t* send_counter = nullptr;
  std::int32_t race_thread = -1;  // its thread in the race detector
  TimelineCopy* trace = nullptr;  // its timeline record, when one is recording
};

/// Fills `job` from request `r` of device `source`: its destination is in
/// `dst_storage` (the target's buffer of r.dst_ref). The counters are the
/// caller's to look up.
inline void fill_job(CopyJob& job, const CopyRequest& r, std::int32_t source, std::int32_t target,
                     Buffer* dst_storage) {
  job.src = r.src;
  job.dst = r.dst;
  job.dst.buffer = dst_storage;
  job.reduce = r.reduce;
  job.source = source;
  job.target = target;
  job.recv_sem = r.recv_sem;
  job.recv_index = r.recv_index;
  job.send_sem = r.send_sem;
  job.send_index = r.send_index;
  job.bytes = static_cast<std::int64_t>(r.src.bytes());
  job.recv_inc = r.recv_inc;
  job.send_inc = r.send_inc;
}

/// Copies (or combines) elements [begin, end) of two contiguous views.
inline void copy_contiguous(const ResolvedView& src, const ResolvedView& dst, CopyReduce reduce, std::int64_t begin,
                            std::int64_t end) {
  const DType t = src.buffer->dtype();
  const std::size_t es = size_of(t);
  const std::byte* s = src.buffer->data() + (src.offset + begin) * static_cast<std::int64_t>(es);
  std::byte* d = dst.buffer->data() + (dst.offset + begin) * static_cast<std::int64_t>(es);
  const std::int64_t n = end - begin;
  if (reduce == CopyReduce::none) {
    std::memmove(d, s, static_cast<std::size_t>(n) * es);
    return;
  }
  visit_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      const T* a = reinterpret_cast<const T*>(s);
      T* o = reinterpret_cast<T*>(d);
      // The same semantics as accum_view / max_view (the interpreter's): integer
      // sums wrap, and a NaN on either side wins the maximum.
      if (reduce == CopyReduce::sum) {
        for (std::int64_t i = 0; i < n; ++i) o[i] = wrapping_add(o[i], a[i]);
      } else {
        for (std::int64_t i = 0; i < n; ++i) {
          bool take = o[i] < a[i];
          if constexpr (is_floating_v<T>) take = take || (a[i] != a[i] && o[i] == o[i]);
          if (take) o[i] = a[i];
        }
      }
    }
  });
}

/// Copies a region between two views of one shape in different buffers
/// (so they cannot overlap) row by row, straight from one to the other: a
/// block of a larger array into a window slot and back, with no staging
/// buffer between them (copy_view stages through one, for overlapping
/// views and combining copies).
inline void copy_rows(const ResolvedView& src, const ResolvedView& dst) {
  const std::size_t es = size_of(src.buffer->dtype());
  const std::byte* const s = src.buffer->data();
  std::byte* const d = dst.buffer->data();
  const std::size_t r = src.shape.rank();
  if (src.elements() == 0) return;
  if (r == 0) {
    std::memcpy(d + dst.offset * static_cast<std::int64_t>(es), s + src.offset * static_cast<std::int64_t>(es), es);
    return;
  }
  const std::int64_t inner = src.shape[r - 1], ss = src.strides[r - 1], ds = dst.strides[r - 1];
  const auto e = static_cast<std::int64_t>(es);
  std::array<std::int64_t, max_rank> idx{};
  for (std::int64_t rows = src.elements() / inner; rows-- > 0;) {
    std::int64_t so = src.offset, dof = dst.offset;
    for (std::size_t k = 0; k + 1 < r; ++k) {
      so += idx[k] * src.strides[k];
      dof += idx[k] * dst.strides[k];
    }
    if ((ss == 1 || inner == 1) && (ds == 1 || inner == 1)) {
      std::memcpy(d + dof * e, s + so * e, static_cast<std::size_t>(inner) * es);
    } else {
      for (std::int64_t i = 0; i < inner; ++i) std::memcpy(d + (dof + i * ds) * e, s + (so + i * ss) * e, es);
    }
    for (std::size_t k = r - 1; k-- > 0;) {
      if (++idx[k] < src.shape[k]) break;
      idx[k] = 0;
    }
  }
}

/// Copies a whole region, strided or not.
inline void copy_region(const ResolvedView& src, const ResolvedView& dst, CopyReduce reduce) {
  if (is_contiguous(src) && is_contiguous(dst)) {
    copy_contiguous(src, dst, reduce, 0, src.elements());
  } else if (reduce == CopyReduce::none && src.buffer != dst.buffer) {
    copy_rows(src, dst);
  } else {
    copy_view(src, dst, reduce);
  }
}

}  // namespace refx::detail
