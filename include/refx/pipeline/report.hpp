#pragma once
// What a traced pipeline did (PipelineReport), and where the kernel being
// compiled collects the reports of its pipelines, so that its Executable
// hands them out (Executable::pipeline_report). Included by pipeline.hpp
// and kernel.hpp.

#include <cstddef>
#include <utility>
#include <vector>

namespace refx {

/// What a traced pipeline did: its steps and, per operand, the copies it
/// started (fetches of an input, write-backs of an output; 0 for scratch).
/// `run_time_copies[k]` of operand k's copies run only where the block
/// index changed at run time (indices read from scalar operands): the
/// copies that actually ran are counted by the runtime (Runtime::totals).
/// A rolled grid (`rolled`) decides every copy at run time: for each
/// operand with blocks it reports one possible copy per step, all of them
/// run-time ones (the Runtime counts those that ran).
struct PipelineReport {
  std::size_t steps = 0;
  bool rolled = false;
  std::vector<int> copies;
  std::vector<int> run_time_copies;
};

namespace detail {
/// The reports of the kernel being traced by Kernel::compile on this thread
/// (null outside one): emit_pipeline appends its report when it finishes.
inline std::vector<PipelineReport>*& pipeline_report_sink() {
  thread_local std::vector<PipelineReport>* sink = nullptr;
  return sink;
}
/// Collects the reports of the pipelines traced while it lives.
class PipelineReportScope {
 public:
  explicit PipelineReportScope(std::vector<PipelineReport>& into)
      : saved_(std::exchange(pipeline_report_sink(), &into)) {}
  ~PipelineReportScope() { pipeline_report_sink() = saved_; }
  PipelineReportScope(const PipelineReportScope&) = delete;
  PipelineReportScope& operator=(const PipelineReportScope&) = delete;

 private:
  std::vector<PipelineReport>* saved_;
};
}  // namespace detail

}  // namespace refx
