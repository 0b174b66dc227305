#pragma once
// Launch (detail/launch.hpp): its side of a remote transport
// (docs/transport.md): copies and signals to devices on other ranks, what
// arrives from them, and the end of a launch as the coordinator decides it.
// Unused in-process (the context's remote is null).

#include <refx/runtime/detail/launch_devices.hpp>

namespace refx::detail {

inline std::array<std::int64_t, max_rank> dense_strides(const Shape& s) {
  std::array<std::int64_t, max_rank> st{};
  std::int64_t e = 1;
  for (std::size_t d = s.rank(); d-- > 0;) {
    st[d] = e;
    e *= s[d];
  }
  return st;
}

inline void Launch::remote_copy(std::int32_t self, const Op&, const CopyRequest& r) {
  transport::RemoteCopy c;
  c.launch = dispatch_.number;
  c.source = self;
  c.target = r.target;
  c.dst_ref = static_cast<std::int32_t>(r.dst_ref);
  c.recv_sem = static_cast<std::int32_t>(r.recv_sem);
  c.recv_index = r.recv_index;
  c.reduce = static_cast<std::uint8_t>(r.reduce);
  c.dtype = static_cast<std::uint8_t>(r.src.buffer->dtype());
  c.rank = static_cast<std::uint8_t>(r.dst.shape.rank());
  c.offset = r.dst.offset;
  for (std::size_t d = 0; d < r.dst.shape.rank(); ++d) {
    c.shape[d] = r.dst.shape[d];
    c.strides[d] = r.dst.strides[d];
  }
  c.bytes = static_cast<std::int64_t>(r.src.bytes());
  c.recv_inc = r.recv_inc;
  // A dense source is sent from where it is; a strided one is packed first.
  const std::byte* data = nullptr;
  std::shared_ptr<Buffer> packed;
  if (is_contiguous(r.src)) {
    data = r.src.buffer->data() + r.src.offset * static_cast<std::int64_t>(size_of(r.src.buffer->dtype()));
  } else {
    packed = std::make_shared<Buffer>(r.src.buffer->dtype(), r.src.shape);
    copy_view(r.src, ResolvedView{packed.get(), 0, r.src.shape, dense_strides(r.src.shape)}, CopyReduce::none);
    data = packed->data();
  }
  std::int64_t* send_counter = nullptr;
  {
    std::lock_guard lock(sched_.mutex());
    if (r.send_sem != no_id) send_counter = &counter(self, r.send_sem, r.send_index);
    ++sent_;
    sched_.copy_started_locked();  // until the source may be reused: then the sender's semaphore rises
  }
  ctx_.remote->copy(host_.owner(r.target, program().mesh.size()), c, data, packed,
                    [l = shared_from_this(), send_counter, self, inc = r.send_inc] {
                      std::unique_lock lock(l->sched_.mutex());
                      if (send_counter) {
                        *send_counter += inc;
                        l->sched_.wake_locked(self, send_counter);
                      }
                      l->sched_.copy_ended_locked();
                      l->finish_if_idle(lock);
                    });
}

inline void Launch::remote_signal(const transport::RemoteSignal& s) {
  std::unique_lock lock(sched_.mutex());
  ++received_;
  if (devices_[static_cast<std::size_t>(s.target)]) {
    std::int64_t& c = counter(s.target, static_cast<ValueId>(s.sem), s.index);
    c += s.inc;
    rose_locked(s.target, &c);
  }
  finish_if_idle(lock);
}

inline std::byte* Launch::remote_destination(const transport::RemoteCopy& c) {
  const auto& dev = devices_[static_cast<std::size_t>(c.target)];
  if (!dev || c.reduce != static_cast<std::uint8_t>(CopyReduce::none)) return nullptr;
  Buffer* dst = dev->ctx->storage(static_cast<ValueId>(c.dst_ref));
  if (!transport::dense(c) || static_cast<std::uint8_t>(dst->dtype()) != c.dtype) return nullptr;
  return dst->data() + c.offset * static_cast<std::int64_t>(size_of(dst->dtype()));
}

inline void Launch::remote_landed(const transport::RemoteCopy& c, Buffer* data) {
  const auto& dev = devices_[static_cast<std::size_t>(c.target)];
  if (dev && data) {
    const Shape shape(std::span<const std::int64_t>(c.shape, c.rank));
    ResolvedView dst{dev->ctx->storage(static_cast<ValueId>(c.dst_ref)), c.offset, shape, {}};
    std::copy(c.strides, c.strides + c.rank, dst.strides.begin());
    copy_region(ResolvedView{data, 0, shape, dense_strides(shape)}, dst, static_cast<CopyReduce>(c.reduce));
  }
  // The data has landed: now the receiver's semaphore rises.
  std::unique_lock lock(sched_.mutex());
  ++received_;
  if (dev) {
    std::int64_t& recv = counter(c.target, static_cast<ValueId>(c.recv_sem), c.recv_index);
    recv += c.recv_inc;
    rose_locked(c.target, &recv);
  }
  stats_.bytes_copied += c.bytes;
  ++stats_.copies;
  finish_if_idle(lock);
}

inline void Launch::remote_combine(const transport::RemoteCopy& c, std::int64_t first, Buffer& part,
                                   std::int64_t bytes) {
  const auto& dev = devices_[static_cast<std::size_t>(c.target)];
  if (!dev) return;
  const auto es = static_cast<std::int64_t>(size_of(part.dtype()));
  const std::int64_t n = bytes / es;
  ResolvedView src{&part, 0, Shape{n}, {1}};
  ResolvedView dst{dev->ctx->storage(static_cast<ValueId>(c.dst_ref)), c.offset + first / es, Shape{n}, {1}};
  copy_contiguous(src, dst, static_cast<CopyReduce>(c.reduce), 0, n);
}

inline void Launch::remote_failed(const std::string& message) {
  std::unique_lock lock(sched_.mutex());
  fail_locked(std::make_exception_ptr(RuntimeError(message)), true);
  reported_sent_ = -1;  // devices were released: report again even if no message moved
  finish_if_idle(lock);
}

inline transport::Report Launch::probe_report(std::int64_t probe) {
  std::lock_guard lock(sched_.mutex());
  return report_locked(probe);
}

inline transport::Report Launch::report_locked(std::int64_t probe) {
  transport::Report r;
  r.launch = dispatch_.number;
  r.seq = ++report_seq_;
  r.probe = probe;
  r.idle = !completed_ && sched_.idle_locked() && lazy_.empty() && !effects_.emitting();
  r.sent = sent_;
  r.received = received_;
  r.bytes_copied = stats_.bytes_copied;
  r.copies = stats_.copies;
  r.forwarded = stats_.forwarded;
  r.error = local_error_;
  r.finished = r.idle && sched_.parked_locked() == 0 && !error_;
  if (r.idle) {
    r.parked = sched_.parked_lines(program().graph, program().mesh);
    if (sched_.parked_locked() == 0 && !error_) r.unbalanced = unbalanced_lines();
  }
  return r;
}

inline void Launch::remote_finished(transport::Outcome outcome, const std::string& text,
                                    const transport::Totals& totals) {
  std::unique_lock lock(sched_.mutex());
  if (completed_) return;
  std::exception_ptr error;
  const int ranks = ctx_.remote->placement().ranks;
  switch (outcome) {
    case transport::Outcome::ok: break;
    case transport::Outcome::failed: error = std::make_exception_ptr(RuntimeError(text)); break;
    case transport::Outcome::deadlock:
      error = std::make_exception_ptr(RuntimeError(fmt::format(
          "refx: deadlock in kernel '{}' on mesh {} over {} MPI ranks: no device can make progress, no copy is in "
          "flight\n{}",
          program().name, program().mesh.describe(), ranks, text)));
      break;
    case transport::Outcome::unbalanced:
      error = std::make_exception_ptr(RuntimeError(fmt::format(
          "refx: kernel '{}' ended with semaphores not back to 0 (every signal must be waited and every copy "
          "waited):\n{}",
          program().name, text)));
      break;
  }
  LaunchStats stats;  // bytes and copies across ranks; the device states are this rank's
  stats.bytes_copied = totals.bytes_copied;
  stats.copies = totals.copies;
  stats.forwarded = totals.forwarded;
  stats.contexts_built = stats_.contexts_built;
  complete(lock, error, stats);
}

}  // namespace refx::detail
