// Ragged paged attention on one device (examples/ragged_paged_attention.hpp):
// four sequences of lengths 37, 128, 1 and 80 in one batch, their keys and
// values in 16-row pages scattered over a shared pool, found through a page
// table; the table and the lengths are scalar operands. Checked against
// softmax(q k^T / sqrt(d)) v over each sequence's own keys, computed on the
// host in double; the copies the runtime ran are checked against the pages
// the sequences hold (a page slot past a sequence's end is not fetched), and
// the table's unused slots hold -1, which a fetch would reject.

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <refx/runtime/runtime.hpp>

#include "ragged_paged_attention.hpp"

using namespace paged;

int main() {
  Runtime rt;
  const Executable exe = kernel(attention).name("ragged_paged_attention").compile(Mesh{{"x", 1}}, {}, rt);

  const std::vector<i32> lengths{37, 128, 1, 80};
  // Pages handed out in a scrambled order (7 is coprime with the pool size).
  std::vector<i32> table(static_cast<std::size_t>(kBatch * kPagesPerSeq), -1);
  int next = 0;
  I pages_used = 0;
  for (I b = 0; b < kBatch; ++b) {
    const I pages = (lengths[static_cast<std::size_t>(b)] + kPageSize - 1) / kPageSize;
    pages_used += pages;
    for (I p = 0; p < pages; ++p)
      table[static_cast<std::size_t>(b * kPagesPerSeq + p)] = static_cast<i32>((7 * next++ + 3) % kPoolPages);
  }
  const auto gen = [](int operand) { return [operand](int, I e) { return input_value(operand, e); }; };
  const Array q = Array::generate<float>(1, Shape{kBatch * kQ, kHead}, gen(0), rt);
  const Array k = Array::generate<float>(1, Shape{kPoolPages * kPageSize, kHead}, gen(1), rt);
  const Array v = Array::generate<float>(1, Shape{kPoolPages * kPageSize, kHead}, gen(2), rt);
  const std::int64_t copies_before = rt.totals().copies;
  const std::vector<float> o = exe(Array::from_shards<i32>({table}, Shape{kBatch, kPagesPerSeq}, rt),
                                   Array::from_shards<i32>({lengths}, Shape{kBatch}, rt), q, k, v)[0]
                                   .to_host<float>(0);
  const std::int64_t copies = rt.totals().copies - copies_before;

  // The host reference, in double, sequence by sequence over its own keys.
  const std::vector<float> hq = q.to_host<float>(0), hk = k.to_host<float>(0), hv = v.to_host<float>(0);
  double worst = 0;
  for (I b = 0; b < kBatch; ++b) {
    const I len = lengths[static_cast<std::size_t>(b)];
    const auto row = [&](I t) {  // the pool row of the sequence's position t
      return static_cast<std::size_t>(table[static_cast<std::size_t>(b * kPagesPerSeq + t / kPageSize)] * kPageSize +
                                      t % kPageSize);
    };
    for (I r = 0; r < kQ; ++r) {
      const std::size_t qi = static_cast<std::size_t>(b * kQ + r);
      std::vector<double> s(static_cast<std::size_t>(len));
      double mx = -INFINITY, sum = 0;
      for (I t = 0; t < len; ++t) {
        double d = 0;
        for (I c = 0; c < kHead; ++c)
          d += double(hq[qi * kHead + static_cast<std::size_t>(c)]) *
               double(hk[row(t) * kHead + static_cast<std::size_t>(c)]);
        s[static_cast<std::size_t>(t)] = d / std::sqrt(static_cast<double>(kHead));
        mx = std::max(mx, s[static_cast<std::size_t>(t)]);
      }
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (I c = 0; c < kHead; ++c) {
        double want = 0;
        for (I t = 0; t < len; ++t)
          want += s[static_cast<std::size_t>(t)] * double(hv[row(t) * kHead + static_cast<std::size_t>(c)]);
        worst = std::max(worst, std::abs(double(o[qi * kHead + static_cast<std::size_t>(c)]) - want / sum));
      }
    }
  }
  // One fetch of q and one write-back of the output per sequence; k and v
  // fetched once per page a sequence holds (consecutive sequences never
  // share a page), not once per step.
  const std::int64_t want_copies = 2 * kBatch + 2 * pages_used;
  const bool ok = worst < 1e-4 && copies == want_copies;
  const PipelineReport& report = exe.pipeline_report();
  fmt::print(
      "ragged_paged_attention: {} sequences (lengths {}), {}-row pages, grid ({}, {}): {} copies ran ({} expected; {} "
      "k/v fetches decided at run time of {}), max |error| {:.2e}: {}\n",
      kBatch, fmt::join(lengths, ", "), kPageSize, kBatch, kPagesPerSeq, copies, want_copies,
      report.run_time_copies[1] + report.run_time_copies[2], report.copies[1] + report.copies[2], worst,
      ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
