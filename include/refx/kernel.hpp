#pragma once
// The API layer: build a kernel, compile it for a mesh, call it on Arrays.
//
//   auto exe = refx::kernel([](HbmRef<const float, 8, 128> x, HbmRef<float, 8, 128> y) { ... })
//                  .name("right_permute")
//                  .compile(refx::Mesh{{"x", 4}});
//   std::vector<refx::Array> out = exe(x);   // returns at once; out[0].to_host<float>(d) waits
//
// Read-only parameters (Ref<const T>) are inputs, one Array each; writable
// ones are outputs, allocated per call (or updated in place with
// call_in_place). Scratch buffers and semaphores come from run_scoped inside
// the kernel; they are allocated statically, so peers may signal them early.
//
// Every call is asynchronous, pure or effectful: it queues the launch and
// returns. Inputs still being produced are waited for by the runtime; a
// kernel with debug_print / io_callback moves the calling thread's effect
// tokens, and effects_barrier() waits for them (docs/effects.md).
// exe.effects() describes the program's effects.
//
// .target(refx::targets::v5e()) checks the kernel against a TPU generation
// when it is compiled (docs/targets.md): tiling, Vmem / Smem capacity,
// element types, the mesh; exe.target_report() holds what was found.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <refx/config.hpp>
#include <refx/core/source_location.hpp>
#include <refx/passes/options.hpp>
#include <refx/passes/target_checks.hpp>
#include <refx/pipeline/report.hpp>
#include <refx/runtime/array.hpp>
#include <refx/runtime/effect_info.hpp>
#include <refx/runtime/fwd.hpp>
#include <refx/runtime/program.hpp>
#include <refx/trace/semaphore.hpp>
#include <refx/trace/trace.hpp>

namespace refx {

class Executable {
 public:
  struct Param {
    ValueType type;
    bool input = false;  ///< read-only: an input Array; else an output
  };

  Executable(std::shared_ptr<const Program> p, std::vector<Param> params, Runtime& rt,
             std::shared_ptr<const TargetReport> target_report = nullptr);

  const Program& program() const noexcept { return *program_; }
  /// The same Program, shared: for results that outlive the Executable.
  const std::shared_ptr<const Program>& shared_program() const noexcept { return program_; }
  const Graph& graph() const noexcept { return program_->graph; }
  const Mesh& mesh() const noexcept { return program_->mesh; }
  const std::vector<Param>& params() const noexcept { return params_; }
  /// The Program as the kernel was written: Program::as_written when
  /// passes::forward_copies forwarded a copy, else program(). predict() and
  /// refx::explore run it, every copy moving its bytes as on a TPU.
  const std::shared_ptr<const Program>& written_program() const noexcept {
    return program_->as_written != nullptr ? program_->as_written : program_;
  }
  /// The program's effects: ordered kinds, unordered effects, host
  /// callbacks, side-effect level, and the dispatch mode (always async).
  const EffectInfo& effects() const noexcept { return effects_; }
  /// What the checks of Kernel::target found (an empty report without a target).
  const TargetReport& target_report() const noexcept;
  std::size_t num_inputs() const {
    return static_cast<std::size_t>(
        std::count_if(params_.begin(), params_.end(), [](const Param& p) { return p.input; }));
  }

  /// Runs on every device; returns one Array per output parameter at once.
  std::vector<Array> operator()(const std::vector<Array>& inputs) const;
  template <class... A>
    requires(std::is_same_v<A, Array> && ...)
  std::vector<Array> operator()(const A&... inputs) const {
    return (*this)(std::vector<Array>{inputs...});
  }

  /// Runs with one Array per parameter; outputs are written in place.
  void call_in_place(const std::vector<Array>& args) const;

  /// What the pipelines of the trace that made this Executable did
  /// (emit_pipeline / pipeline_kernel), in the order their tracing finished
  /// (an inner pipeline before the one around it; on a mesh with several
  /// cores per device, each core's in core order, for the cores that ran a
  /// share of the grid); empty without any.
  const std::vector<PipelineReport>& pipeline_reports() const noexcept { return pipelines_; }
  /// The last of them (the only one, for a pipeline_kernel); a refx::Error
  /// if the kernel traced no pipeline.
  const PipelineReport& pipeline_report() const;

 private:
  template <class F>
  friend class Kernel;  // sets pipelines_ after the trace
  void launch(const std::vector<Array>& args) const;

  std::shared_ptr<const Program> program_;
  std::vector<Param> params_;
  Runtime* rt_;
  EffectInfo effects_;
  LaunchEffects launch_effects_;
  std::shared_ptr<const TargetReport> target_report_;
  std::vector<PipelineReport> pipelines_;
};

namespace detail {
/// Runs the pass pipeline on a traced kernel and makes it an Executable
/// (`read_only`: per parameter, whether it is an input; `single_worker`:
/// Kernel::single_worker).
REFX_DECL Executable compile_traced(Graph g, const Mesh& mesh, std::string name, bool single_worker,
                                    const passes::Options& passes, const std::vector<bool>& read_only, Runtime& rt,
                                    std::shared_ptr<const TargetReport> target_report = nullptr,
                                    std::int64_t collective_id = -1);

/// The Arrays a tool runs `exe` on in place (predict, explore): one per
/// parameter, of its type, on every device of the mesh; waits until they are
/// ready and no earlier call still reads them. Throws refx::Error naming
/// `tool` and the argument otherwise.
REFX_DECL void check_in_place_arguments(const Executable& exe, const std::vector<Array>& args, std::string_view tool);
}  // namespace detail

/// A kernel and its options, ready to be compiled for a mesh.
template <class F>
class Kernel {
 public:
  explicit Kernel(F f) : f_(std::move(f)) {}

  Kernel& name(std::string n) {
    name_ = std::move(n);
    return *this;
  }
  /// The collective id whose barrier semaphore get_barrier_semaphore() returns.
  Kernel& collective_id(IntArg<std::int64_t, IntArgKind::collective_id> id) {
    collective_id_ = id;
    return *this;
  }

  /// Which passes run at compile time (all by default).
  Kernel& passes(passes::Options o) {
    passes_ = o;
    return *this;
  }
  /// Runs the program's devices one after another on one worker at a time,
  /// whatever its size and loops (otherwise RuntimeOptions::single_worker_bytes
  /// decides; a program with host effects never does): for a program whose
  /// devices mostly consume what their peers' copies have just written, which
  /// then stays in one core's caches; where that data comes from memory, one
  /// thread streams it at half the rate of two (docs/collectives.md, "The
  /// in-place ring all-reduce on one worker").
  Kernel& single_worker(bool on = true) {
    single_worker_ = on;
    return *this;
  }
  /// Checks the kernel against TPU generation `t` when it is compiled
  /// (docs/targets.md); in TargetMode::warn every violation is kept in
  /// Executable::target_report() instead of the first being thrown.
  Kernel& target(Target t, TargetMode mode = TargetMode::error) {
    target_ = std::move(t);
    target_mode_ = mode;
    return *this;
  }
  /// The kernel's scoped Vmem limit on the target (Pallas' `vmem_limit_bytes`
  /// compiler parameter): its Vmem peak is checked against `bytes` instead
  /// of the target's default scoped limit; at most the TensorCore's Vmem.
  /// Needs target().
  Kernel& vmem_limit_bytes(std::int64_t bytes) {
    vmem_limit_ = bytes;
    return *this;
  }

  /// Traces the kernel for `mesh` (shapes: none if all static, else one per parameter).
  Executable compile(const Mesh& mesh, const std::vector<Shape>& shapes = {}, Runtime& rt = detail::global_runtime(),
                     refx::source_location loc = refx::source_location::current()) const {
    static_assert(detail::has_deducible_params<F>,
                  "refx: kernel needs a callable with explicit parameter types (Ref<...>), not auto");
    if constexpr (!detail::has_deducible_params<F>) {
      throw std::logic_error("not reached: the check above failed to compile");
    } else if constexpr (!check_params(static_cast<typename detail::callable_args<F>::type*>(nullptr))) {
      throw std::logic_error("not reached: the check above failed to compile");
    } else {
      using Params = typename detail::callable_args<F>::type;
      std::vector<PipelineReport> pipelines;
      Graph g = [&] {
        const detail::PipelineReportScope collect(pipelines);
        return trace(f_, TraceOptions{shapes, &mesh, collective_id_}, loc);
      }();
      std::shared_ptr<const TargetReport> report;
      if (vmem_limit_ && !target_)
        throw Error(detail::located_message(SourceLoc(loc), nullptr,
                                            "kernel '{}': vmem_limit_bytes({}) needs a target: the limit is a TPU "
                                            "generation's (write .target(refx::targets::v6e()) as well)",
                                            name_, *vmem_limit_));
      if (target_) {
        Target t = *target_;
        if (vmem_limit_) t.vmem_limit_bytes = *vmem_limit_;
        report = std::make_shared<const TargetReport>(detail::check_for_target(g, mesh, t, target_mode_, loc));
      }
      Executable exe =
          detail::compile_traced(std::move(g), mesh, name_, single_worker_, passes_,
                                 read_only(static_cast<Params*>(nullptr)), rt, std::move(report), collective_id_);
      exe.pipelines_ = std::move(pipelines);
      return exe;
    }
  }

 private:
  template <class... P>
  static constexpr bool check_params(std::tuple<P...>*) {
    constexpr bool refs = ((is_ref_v<P> && !is_semaphore_v<P>)&&...);
    static_assert(refs,
                  "refx: kernel parameters are Refs (inputs: Ref<const T>, outputs: Ref<T>); allocate scratch and "
                  "semaphores with run_scoped inside the kernel");
    return refs && detail::check_params<std::tuple<P...>>();
  }
  template <class... P>
  static std::vector<bool> read_only(std::tuple<P...>*) {
    return {P::read_only...};
  }

  F f_;
  std::string name_ = "kernel";
  std::int64_t collective_id_ = -1;
  bool single_worker_ = false;
  passes::Options passes_;
  std::optional<Target> target_;
  std::optional<std::int64_t> vmem_limit_;
  TargetMode target_mode_ = TargetMode::error;
};

template <class F>
Kernel<std::decay_t<F>> kernel(F&& f) {
  static_assert(detail::is_callable_kind_v<F>,
                "refx: kernel(f) takes the kernel as a callable: a lambda or function whose parameters are Refs, e.g. "
                "kernel([](VmemRef<const float, 128> x, VmemRef<float, 128> y) { ... }); a Ref, Value, number or "
                "string is not one");
  return Kernel<std::decay_t<F>>(std::forward<F>(f));
}

}  // namespace refx

#if REFX_DEFINITIONS
#include <refx/passes/pipeline.hpp>
#include <refx/runtime/runtime.hpp>

namespace refx {

REFX_DECL Executable::Executable(std::shared_ptr<const Program> p, std::vector<Param> params, Runtime& rt,
                                 std::shared_ptr<const TargetReport> target_report)
    : program_(std::move(p)),
      params_(std::move(params)),
      rt_(&rt),
      effects_(effect_info(program_->graph)),
      target_report_(std::move(target_report)) {
  const bool has_outputs = std::any_of(params_.begin(), params_.end(), [](const Param& q) { return !q.input; });
  launch_effects_ = LaunchEffects::of(effects_, has_outputs);
}

REFX_DECL const TargetReport& Executable::target_report() const noexcept {
  static const TargetReport none;
  return target_report_ ? *target_report_ : none;
}

REFX_DECL std::vector<Array> Executable::operator()(const std::vector<Array>& inputs) const {
  if (inputs.size() != num_inputs())
    throw Error(fmt::format("refx: kernel '{}' takes {} input Arrays (its read-only Ref parameters), {} given",
                            program_->name, num_inputs(), inputs.size()));
  std::vector<Array> all, outputs;
  std::size_t next = 0;
  for (const Param& p : params_) {
    if (p.input) {
      all.push_back(inputs[next++]);
    } else {
      outputs.push_back(Array::empty(mesh().size(), p.type.dtype, p.type.shape, *rt_));
      all.push_back(outputs.back());
    }
  }
  launch(all);
  return outputs;
}

REFX_DECL const PipelineReport& Executable::pipeline_report() const {
  if (pipelines_.empty())
    throw Error(
        fmt::format("refx: kernel '{}' traced no pipeline (emit_pipeline / pipeline_kernel), so it has no "
                    "PipelineReport",
                    program_->name));
  return pipelines_.back();
}

REFX_DECL void Executable::call_in_place(const std::vector<Array>& args) const {
  if (args.size() != params_.size())
    throw Error(fmt::format("refx: kernel '{}' has {} parameters, call_in_place got {} Arrays", program_->name,
                            params_.size(), args.size()));
  launch(args);
}

REFX_DECL void Executable::launch(const std::vector<Array>& args) const {
  const std::int32_t n = mesh().size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Array& a = args[i];
    const ValueType& t = params_[i].type;
    if (!a.valid()) throw Error(fmt::format("refx: kernel '{}': argument {} is an empty Array", program_->name, i));
    if (a.num_devices() != n)
      throw Error(fmt::format("refx: kernel '{}': argument {} has {} shards but the mesh {} has {} devices",
                              program_->name, i, a.num_devices(), mesh().describe(), n));
    if (a.dtype() != t.dtype || !(a.shape() == t.shape))
      throw Error(fmt::format("refx: kernel '{}': argument {} is {}{} per device but the kernel expects {}{}",
                              program_->name, i, a.dtype(), a.shape(), t.dtype, t.shape));
    for (std::size_t j = 0; j < i; ++j)
      if (args[j].keep_alive() == a.keep_alive() && (!params_[i].input || !params_[j].input))
        throw Error(
            fmt::format("refx: kernel '{}': the same Array is passed as arguments {} and {}, and one of "
                        "them is written",
                        program_->name, j, i));
  }
  // Arrays still being produced (possibly on another Runtime), or produced
  // by a failed call: the launch waits for them / fails with the cause. An
  // Array this launch writes may still be read by launches of other Runtimes
  // (a Runtime runs its own launches in order): it waits for them too.
  std::vector<InputDependency> deps;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (const auto& e = args[i].ready_event(); e && (!e->ready() || e->error()))
      deps.push_back(InputDependency{i, params_[i].input, e});
    if (!params_[i].input)
      for (const auto& r : args[i].reader_events())
        if (!r->ready()) deps.push_back(InputDependency{i, false, r});
  }
  const std::shared_ptr<Event> done = rt_->enqueue(program_, args, launch_effects_, std::move(deps));
  for (std::size_t i = 0; i < args.size(); ++i) {
    Array& a = const_cast<Array&>(args[i]);
    if (params_[i].input) a.add_reader(done);
    else a.set_ready_event(done);
  }
}

REFX_DECL void detail::check_in_place_arguments(const Executable& exe, const std::vector<Array>& args,
                                                std::string_view tool) {
  const auto& params = exe.params();
  if (args.size() != params.size())
    throw Error(fmt::format("refx: {}: kernel '{}' has {} parameters, got {} Arrays", tool, exe.program().name,
                            params.size(), args.size()));
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Array& a = args[i];
    if (!a.valid() || a.num_devices() != exe.mesh().size() || a.dtype() != params[i].type.dtype ||
        !(a.shape() == params[i].type.shape))
      throw Error(fmt::format("refx: {}: kernel '{}': argument {} is not {}{} on {} devices", tool, exe.program().name,
                              i, params[i].type.dtype, params[i].type.shape, exe.mesh().size()));
    a.block_until_ready();
    for (const auto& r : a.reader_events()) r->wait();
  }
}

REFX_DECL Executable detail::compile_traced(Graph g, const Mesh& mesh, std::string name, bool single_worker,
                                            const passes::Options& passes, const std::vector<bool>& read_only,
                                            Runtime& rt, std::shared_ptr<const TargetReport> target_report,
                                            std::int64_t collective_id) {
  Graph written;
  const bool forwarded = passes::run_pipeline(g, passes, &written);
  std::vector<Executable::Param> params;
  for (std::size_t i = 0; i < read_only.size(); ++i) params.push_back({g.type(g.params()[i]), read_only[i]});
  auto program = std::make_shared<Program>(std::move(g), mesh, name, single_worker);
  program->collective_id = collective_id;
  if (forwarded) {
    auto w = std::make_shared<Program>(std::move(written), mesh, std::move(name), single_worker);
    w->collective_id = collective_id;
    program->as_written = std::move(w);
  }
  return Executable(std::move(program), std::move(params), rt, std::move(target_report));
}
}  // namespace refx
#endif  // REFX_DEFINITIONS
