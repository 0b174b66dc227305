#pragma once
// The reference interpreter: runs a graph on one device, op by op, over
// caller-owned buffers. Every other executor is tested against it.

#include <vector>

#include <refx/ir/eval.hpp>

namespace refx {

/// Runs `g` with its parameters bound to `args` (in order), in place.
inline void interpret(const Graph& g, std::span<Buffer* const> args, ExecEnv& env) {
  if (args.size() != g.params().size())
    throw Error(
        fmt::format("refx: interpret: the kernel takes {} arguments, {} given", g.params().size(), args.size()));
  for (std::size_t i = 0; i < args.size(); ++i)
    for (std::size_t j = i + 1; j < args.size(); ++j)
      if (args[i] == args[j])
        throw Error(fmt::format("refx: interpret: the same buffer is passed as arguments {} and {}", i, j));
  ExecContext ctx(g, env);
  for (std::size_t i = 0; i < args.size(); ++i) ctx.bind_param(i, *args[i]);
  if (ctx.run() == ExecStatus::blocked)
    throw RuntimeError("refx: deadlock: the kernel waits on a semaphore that nothing will signal (single device)");
}

inline void interpret(const Graph& g, std::span<Buffer* const> args) {
  ExecEnv env;
  interpret(g, args, env);
}

template <class... B>
  requires(std::is_same_v<B, Buffer> && ...)
void interpret(const Graph& g, B&... args) {
  Buffer* ptrs[] = {&args..., nullptr};
  interpret(g, std::span<Buffer* const>(ptrs, sizeof...(B)));
}

}  // namespace refx
