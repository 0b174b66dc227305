#pragma once
// What a launch on the calling thread needs (Runtime::run_inline; docs/
// runtime.md, "Inline launches"), and what it shares with the evaluator's
// launch: running one lane's ExecContext with a failure named after the lane.

#include <exception>
#include <string_view>

#include <fmt/format.h>

#include <refx/core/error.hpp>
#include <refx/core/mesh.hpp>
#include <refx/ir/eval.hpp>

namespace refx::detail {

/// Runs `ctx` to its end or first block; a failure comes back as a
/// RuntimeError prefixed with the lane ("refx: device 2: ...").
inline ExecStatus run_lane(ExecContext& ctx, const Mesh& mesh, std::int32_t lane, std::exception_ptr& failure) {
  try {
    return ctx.run();
  } catch (const std::exception& e) {
    std::string_view what = e.what();  // refx's own messages already start with "refx: "
    if (what.starts_with("refx: ")) what.remove_prefix(6);
    failure = std::make_exception_ptr(RuntimeError(fmt::format("refx: {}: {}", mesh.describe_lane(lane), what)));
  } catch (...) {
    failure =
        std::make_exception_ptr(RuntimeError(fmt::format("refx: {}: unknown exception", mesh.describe_lane(lane))));
  }
  return ExecStatus::done;
}

/// The environment of a program that only computes (Program::computes_only)
/// on the one device of its mesh: it asks for nothing but its coordinates.
class InlineDevice final : public ExecEnv {
 public:
  explicit InlineDevice(const Mesh& mesh) : mesh_(mesh) {}
  std::int32_t axis_index(std::string_view axis) const override {
    if (axis == core_axis_name) return 0;
    return mesh_.coord(0, mesh_.axis(axis));
  }
  std::int32_t axis_size(std::string_view axis) const override {
    if (axis == core_axis_name) return 1;
    return mesh_.axis_size(axis);
  }
  bool poisons_scratch() const override { return false; }

 private:
  const Mesh& mesh_;
};

}  // namespace refx::detail
