// A user pass over a compiled kernel: how many bytes each device copies per
// call, read off the graph before anything runs, then checked against the
// runtime's byte counter after a call.
//
// The pass visits every op with extend::for_each_op. A dma_start's first
// view is the copy's source, so its byte count is the view's elements times
// the element size; its third attribute says whether the copy is remote. A
// copy inside a fori_loop or `when` body runs a number of times known only
// at run time, so the pass reports its count as a lower bound there; scopes
// (run_scoped, sync_copy) run their body exactly once. docs/extend.md quotes
// the regions between [snippet:...] markers.

#include <algorithm>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include <refx/extend.hpp>
#include <refx/refx.hpp>
#include <refx/runtime/runtime.hpp>  // Runtime::global()

namespace {
using namespace refx;

// [snippet:copy-volume]
struct CopyVolume {
  std::int64_t local_bytes = 0, remote_bytes = 0;  // per device and call
  int copies = 0;
  bool exact = true;  // false: some copy sits in a loop or `when` body
};

CopyVolume copy_volume(const Graph& g) {
  CopyVolume v;
  // For each body enclosing the current op: does it run other than once?
  std::vector<bool> repeats;
  extend::for_each_op(g, [&](OpId, const Op& op, int depth) {
    repeats.resize(static_cast<std::size_t>(depth));  // leave the bodies we are no longer in
    if (op.prim == &prim::dma_start) {
      const ViewId src = g.views(op)[0];
      const std::int64_t bytes = g.view_elements(src) * static_cast<std::int64_t>(size_of(g.type(g.view(src).ref).dtype));
      (g.attrs(op)[2] != 0 ? v.remote_bytes : v.local_bytes) += bytes;
      ++v.copies;
      v.exact = v.exact && std::find(repeats.begin(), repeats.end(), true) == repeats.end();
    }
    if (!g.bodies(op).empty()) repeats.push_back(op.prim == &prim::fori_loop || op.prim == &prim::when);
  });
  return v;
}
// [/snippet]

constexpr int kN = 4;
constexpr std::int64_t kBlock = 1024;

// A ring all-gather (as in examples/ring_all_gather.cpp): one local copy,
// then N - 1 remote copies of one block each.
const auto all_gather = [](HbmRef<const float, kBlock> x, HbmRef<float, kN, kBlock> out) {
  const auto me = axis_index("x");
  run_scoped([&](DmaSemaphore send, DmaSemaphores<kN - 1> recv) {
    sync_copy(x, out.at(me));
    for (int s = 0; s < kN - 1; ++s) {
      const auto slot = (me + (kN - s)) % kN;
      const auto c = make_async_remote_copy(out.at(slot), out.at(slot), send, recv.at(s), (me + 1) % kN);
      c.start();
      c.wait();
    }
  });
};

// The same copies in a traced loop: the pass sees one remote copy per
// iteration and cannot know how many iterations run.
const auto looped = [](HbmRef<const float, kBlock> x, HbmRef<float, kN, kBlock> out) {
  const auto me = axis_index("x");
  run_scoped([&](DmaSemaphore send, DmaSemaphore recv) {
    sync_copy(x, out.at(me));
    fori_loop(0, kN - 1, [&](Scalar<std::int32_t> s) {
      const auto slot = (me + (kN - s)) % kN;
      const auto c = make_async_remote_copy(out.at(slot), out.at(slot), send, recv, (me + 1) % kN);
      c.start();
      c.wait();
    });
  });
};

}  // namespace

int main() {
  const Mesh mesh{{"x", kN}};
  const Array x = Array::generate<float>(kN, Shape{kBlock}, [](int d, std::int64_t i) { return d * 10000 + i; });
  bool ok = true;

  // [snippet:check]
  const Executable exe = kernel(all_gather).name("all_gather").compile(mesh);
  const CopyVolume v = copy_volume(exe.graph());
  fmt::print("all_gather: {} copies, {} B local + {} B remote per device{}\n", v.copies, v.local_bytes,
             v.remote_bytes, v.exact ? "" : " (at least)");

  const std::int64_t before = Runtime::global().totals().bytes_copied;
  exe(x)[0].block_until_ready();
  const std::int64_t measured = Runtime::global().totals().bytes_copied - before;  // all devices
  ok = ok && v.exact && measured == kN * (v.local_bytes + v.remote_bytes);
  // [/snippet]
  ok = ok && v.copies == kN && v.remote_bytes == (kN - 1) * kBlock * 4;

  const CopyVolume w = copy_volume(kernel(looped).compile(mesh).graph());
  fmt::print("looped: {} copies, {} B local + {} B remote per device{}\n", w.copies, w.local_bytes, w.remote_bytes,
             w.exact ? "" : " (at least)");
  ok = ok && !w.exact && w.copies == 2 && w.remote_bytes == kBlock * 4;

  fmt::print("user_pass: {} (runtime copied {} B in all)\n", ok ? "ok" : "WRONG", measured);
  return ok ? 0 : 1;
}
