// Every collective over the new element types, on N = 2 and 4: all_reduce
// and reduce_scatter (each algorithm, ring direction and in-place form, sum
// and max), all_gather, all_to_all and ppermute, as standalone programs and
// inside a kernel.
//
// bf16 and f16 sums accumulate in the element type, one rounding per hop
// (docs/collectives.md): with small-integer inputs every partial sum is exact
// and the result must equal the host's; with fractional inputs it must lie
// within (N-1) half-ulps of the partial sums of the f64 sum. Max is exact.
// i8, u8 and u32 sums wrap modulo 2^n.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "support/collectives_testing.hpp"

namespace {
using namespace refx;
using namespace refx::testing;

enum class Coll { all_reduce, reduce_scatter, all_gather, all_to_all, ppermute };
enum class Values { small_integers, fractions };

struct Variant {
  Coll coll;
  Algorithm alg = Algorithm::automatic;
  Direction dir = Direction::unidirectional;
  bool in_place = false;
};

constexpr auto uni = Direction::unidirectional, bi = Direction::bidirectional;
const Variant kVariants[] = {
    {Coll::all_reduce, Algorithm::ring, uni, false},       {Coll::all_reduce, Algorithm::ring, bi, false},
    {Coll::all_reduce, Algorithm::ring, uni, true},        {Coll::all_reduce, Algorithm::ring, bi, true},
    {Coll::all_reduce, Algorithm::direct, uni, false},     {Coll::all_reduce, Algorithm::direct, uni, true},
    {Coll::all_reduce, Algorithm::one_shot, uni, false},   {Coll::all_reduce, Algorithm::one_shot, uni, true},
    {Coll::all_reduce, Algorithm::automatic, uni, false},  {Coll::reduce_scatter, Algorithm::ring, uni, false},
    {Coll::reduce_scatter, Algorithm::ring, bi, false},    {Coll::reduce_scatter, Algorithm::ring, uni, true},
    {Coll::reduce_scatter, Algorithm::ring, bi, true},     {Coll::reduce_scatter, Algorithm::direct, uni, false},
    {Coll::all_gather, Algorithm::ring, uni, false},       {Coll::all_gather, Algorithm::ring, uni, true},
    {Coll::all_gather, Algorithm::direct, uni, false},     {Coll::all_gather, Algorithm::direct, uni, true},
    {Coll::all_to_all},                                    {Coll::ppermute},
};

// ---------------------------------------------------------------- inputs and references

/// Element i of device d. Halves: small integers in [-4, 4] (every partial sum
/// exact) or fractions with all mantissa bits in use, in [-8, 8). Integers:
/// spread over the whole range, so sums wrap.
template <class T>
T element(int d, std::int64_t i, Values v) {
  const std::uint64_t h = mix(static_cast<std::uint64_t>(d) * 0x9e3779b97f4a7c15ULL ^ static_cast<std::uint64_t>(i) * 0x632be59bd9b4e019ULL);
  if constexpr (is_half_float_v<T>) {
    if (v == Values::small_integers) return T(static_cast<float>(static_cast<int>(h % 9) - 4));
    return T(static_cast<double>(static_cast<std::int64_t>(h % 4096) - 2048) / 256.0 + 0.0009765625 * (h >> 50 & 7));
  } else {
    return static_cast<T>(h >> 7);  // modular: the low bits of a 57-bit number
  }
}

template <class T>
std::vector<std::vector<T>> host_inputs(int n, std::int64_t m, Values v) {
  std::vector<std::vector<T>> x(static_cast<std::size_t>(n));
  for (int d = 0; d < n; ++d)
    for (std::int64_t i = 0; i < m; ++i) x[static_cast<std::size_t>(d)].push_back(element<T>(d, i, v));
  return x;
}

/// The spacing of T's values around |v| (its subnormal spacing near zero).
template <class T>
double ulp_at(double v) {
  const int p = std::numeric_limits<T>::digits;  // 8 or 11
  const int min_exp = std::numeric_limits<T>::min_exponent - 1;
  const int e = v == 0 ? min_exp : std::max(std::ilogb(v), min_exp);
  return std::ldexp(1.0, e - (p - 1));
}

/// The reduction and, for half sums that are not `exact` (small integers:
/// every partial sum is representable), the error N-1 roundings may add.
template <class T>
struct Want {
  std::vector<double> value;
  std::vector<double> tolerance;
};
template <class T>
Want<T> reduce_host(const std::vector<std::vector<T>>& x, ReduceOp op, bool exact) {
  Want<T> w;
  for (std::size_t i = 0; i < x[0].size(); ++i) {
    if constexpr (is_half_float_v<T>) {
      double sum = 0, abs = 0, mx = -INFINITY;
      for (const auto& s : x) {
        sum += static_cast<float>(s[i]);
        abs += std::fabs(static_cast<float>(s[i]));
        mx = std::max(mx, static_cast<double>(static_cast<float>(s[i])));
      }
      if (op == ReduceOp::max) {
        w.value.push_back(mx);
        w.tolerance.push_back(0);
      } else {
        // Each hop rounds a partial sum of magnitude <= sum |x| by at most half an ulp.
        w.value.push_back(sum);
        w.tolerance.push_back(exact ? 0.0 : static_cast<double>(x.size() - 1) * 0.5 * ulp_at<T>(abs));
      }
    } else {
      using U = std::make_unsigned_t<T>;
      U acc = op == ReduceOp::sum ? U{0} : static_cast<U>(x[0][i]);
      T mx = x[0][i];
      for (const auto& s : x) {
        acc = static_cast<U>(acc + static_cast<U>(s[i]));
        mx = std::max(mx, s[i]);
      }
      w.value.push_back(op == ReduceOp::sum ? static_cast<double>(static_cast<T>(acc)) : static_cast<double>(mx));
      w.tolerance.push_back(0);
    }
  }
  return w;
}

template <class T>
double as_double(T v) {
  if constexpr (is_half_float_v<T>) return static_cast<float>(v);
  else return static_cast<double>(v);
}

/// got[got_offset + k] against want[want_offset + k], k < len.
template <class T>
::testing::AssertionResult near(const std::vector<T>& got, std::int64_t got_offset, const Want<T>& want,
                                std::int64_t want_offset, std::int64_t len, const std::string& what) {
  for (std::int64_t k = 0; k < len; ++k) {
    const double g = as_double(got[static_cast<std::size_t>(got_offset + k)]);
    const double w = want.value[static_cast<std::size_t>(want_offset + k)];
    const double tol = want.tolerance[static_cast<std::size_t>(want_offset + k)];
    if (!(std::fabs(g - w) <= tol))
      return ::testing::AssertionFailure() << what << ", element " << want_offset + k << ": got " << g << ", expected "
                                           << w << " (tolerance " << tol << ")";
  }
  return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  if (got.size() != want.size() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) != 0)
    return ::testing::AssertionFailure() << what << ": differs from the host's data";
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- the matrix

struct Case {
  Variant v;
  int n;
  DType type;
  ReduceOp op;
  Values values;
  std::int64_t m;
};

const char* coll_name(Coll c) {
  switch (c) {
    case Coll::all_reduce: return "allreduce";
    case Coll::reduce_scatter: return "reducescatter";
    case Coll::all_gather: return "allgather";
    case Coll::all_to_all: return "alltoall";
    case Coll::ppermute: return "ppermute";
  }
  return "?";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::string s = "N" + std::to_string(c.n) + "_" + coll_name(c.v.coll);
  if (c.v.alg != Algorithm::automatic) s += std::string("_") + refx::testing::name_of(c.v.alg);
  if (c.v.dir == bi) s += "_bi";
  if (c.v.in_place) s += "_inplace";
  const bool reduces = c.v.coll == Coll::all_reduce || c.v.coll == Coll::reduce_scatter;
  if (reduces) s += std::string("_") + refx::testing::name_of(c.op);
  s += "_" + std::string(refx::name_of(c.type));
  if (reduces && is_floating(c.type) && c.op == ReduceOp::sum) s += c.values == Values::small_integers ? "_ints" : "_fractions";
  return s + "_m" + std::to_string(c.m);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const Variant& v : kVariants)
    for (int n : {2, 4})
      for (DType t : {DType::bf16, DType::f16, DType::i8, DType::u8, DType::u32}) {
        const bool reduces = v.coll == Coll::all_reduce || v.coll == Coll::reduce_scatter;
        const std::int64_t m = n == 2 ? 3 * n + 1 : 1001;  // neither divisible by N
        if (!reduces) {
          out.push_back({v, n, t, ReduceOp::sum, Values::fractions, m});
          continue;
        }
        out.push_back({v, n, t, ReduceOp::max, Values::fractions, m});
        out.push_back({v, n, t, ReduceOp::sum, Values::fractions, m});
        if (is_floating(t)) out.push_back({v, n, t, ReduceOp::sum, Values::small_integers, m});
      }
  return out;
}

std::string at(int device) { return "device " + std::to_string(device); }

template <class T>
void check(const Case& c) {
  const int n = c.n;
  const std::int64_t m = c.m;
  const Mesh mesh{{"x", n}};
  const collectives::ProgramOptions o{.op = c.op, .direction = c.v.dir, .in_place = c.v.in_place, .algorithm = c.v.alg};
  const auto host = host_inputs<T>(n, m, c.values);
  const bool exact_sum = !is_half_float_v<T> || c.values == Values::small_integers || c.op == ReduceOp::max;
  switch (c.v.coll) {
    case Coll::all_reduce: {
      const auto exe = collectives::all_reduce_program<T>(mesh, m, o);
      const Array x = array_of(host, Shape{m});
      const Array out = c.v.in_place ? (exe.call_in_place({x}), x) : exe(x)[0];
      const auto want = reduce_host(host, c.op, exact_sum);
      int rounded = 0;  // elements whose sum was rounded: the tolerance is not vacuous
      for (int d = 0; d < n; ++d) {
        const auto got = out.template to_host<T>(d);
        ASSERT_TRUE(near(got, 0, want, 0, m, at(d)));
        for (std::int64_t i = 0; i < m; ++i) rounded += as_double(got[static_cast<std::size_t>(i)]) != want.value[static_cast<std::size_t>(i)];
      }
      if (!exact_sum && m > 100) {
        EXPECT_GT(rounded, 0);
      } else if (exact_sum) {
        EXPECT_EQ(rounded, 0);
      }
      // One device reduces each element and sends it on: every device gets the same bits.
      ASSERT_TRUE(bitwise_identical_across_devices(out));
      break;
    }
    case Coll::reduce_scatter: {
      const auto exe = collectives::reduce_scatter_program<T>(mesh, m, o);
      const Array x = array_of(host, Shape{m});
      const Array out = c.v.in_place ? (exe.call_in_place({x}), x) : exe(x)[0];
      const auto want = reduce_host(host, c.op, exact_sum);
      for (int d = 0; d < n; ++d) {
        const Chunk k = chunk_of(m, n, d);
        ASSERT_TRUE(near(out.template to_host<T>(d), c.v.in_place ? k.start : 0, want, k.start, k.len, at(d)));
      }
      break;
    }
    case Coll::all_gather: {
      std::vector<T> gathered;
      for (const auto& b : host) gathered.insert(gathered.end(), b.begin(), b.end());
      const auto exe = collectives::all_gather_program<T>(mesh, m, o);
      Array out;
      if (c.v.in_place) {
        std::vector<std::vector<T>> rows(static_cast<std::size_t>(n), std::vector<T>(static_cast<std::size_t>(n * m), T(7)));
        for (int d = 0; d < n; ++d) std::copy(host[d].begin(), host[d].end(), rows[d].begin() + d * m);
        out = array_of(rows, Shape{n, m});
        exe.call_in_place({out});
      } else {
        out = exe(array_of(host, Shape{m}))[0];
      }
      for (int d = 0; d < n; ++d) ASSERT_TRUE(same_bits(out.template to_host<T>(d), gathered, at(d)));
      break;
    }
    case Coll::all_to_all: {
      const auto x = host_inputs<T>(n, n * m, c.values);
      const auto out = collectives::all_to_all_program<T>(mesh, m, o)(array_of(x, Shape{n, m}))[0];
      for (int d = 0; d < n; ++d) {
        std::vector<T> want;  // block j of out is block d of device j's x
        for (const auto& xj : x) want.insert(want.end(), xj.begin() + d * m, xj.begin() + (d + 1) * m);
        ASSERT_TRUE(same_bits(out.template to_host<T>(d), want, at(d)));
      }
      break;
    }
    case Coll::ppermute: {
      using V = Ref<T, extents<dyn>, Hbm>;
      using CV = Ref<const T, extents<dyn>, Hbm>;
      const auto exe = kernel([](CV x, V y) { ppermute_done(ppermute_start(x, y, "x", -1)); }).compile(mesh, {Shape{m}, Shape{m}});
      const auto out = exe(array_of(host, Shape{m}))[0];
      for (int d = 0; d < n; ++d) ASSERT_TRUE(same_bits(out.template to_host<T>(d), host[static_cast<std::size_t>(mod(d + 1, n))], at(d)));
      break;
    }
  }
}

class NewTypes : public ::testing::TestWithParam<Case> {};

TEST_P(NewTypes, MatchTheHost) {
  const Case c = GetParam();
  Watchdog dog(kTestLimit, case_name({c, 0}));
  visit_dtype(c.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_half_float_v<T> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ||
                  std::is_same_v<T, std::uint32_t>)
      check<T>(c);
  });
}

INSTANTIATE_TEST_SUITE_P(Matrix, NewTypes, ::testing::ValuesIn(cases()), case_name);

// ---------------------------------------------------------------- accumulation in the element type

/// D.8's example: devices hold 256, 1, 1, 1 in bf16. An f32 accumulator (XLA's
/// psum on CPU) gives 259 -> 260 wherever the 256 is. refx adds in bf16, one
/// rounding per hop, so the order decides: one-shot sums in device order,
/// direct starts with the owner's own part, then the others in device order.
TEST(Accumulation, Bf16SumsRoundPerHop) {
  Watchdog dog(kTestLimit, "bf16 rounding per hop");
  const Mesh mesh{{"x", 4}};
  // Element j: the 256 sits on device j (which, with 4 elements on 4 devices, owns chunk j).
  std::vector<std::vector<bf16>> x(4, std::vector<bf16>(4, bf16(1.0f)));
  for (int j = 0; j < 4; ++j) x[static_cast<std::size_t>(j)][static_cast<std::size_t>(j)] = bf16(256.0f);
  // One-shot: 256+1+1+1 = 256 (each + 1 ties back to even); 1+256+1+1 = 256;
  // 1+1+256+1 = 258+1 = 259 -> 260; 1+1+1+256 = 259 -> 260. Direct: 256 first every time.
  const std::vector<float> one_shot{256, 256, 260, 260}, direct{256, 256, 256, 256};
  for (Algorithm a : {Algorithm::one_shot, Algorithm::direct}) {
    const Array out = collectives::all_reduce_program<bf16>(mesh, 4, {.algorithm = a})(array_of(x, Shape{4}))[0];
    std::vector<float> got;
    for (bf16 v : out.to_host<bf16>(0)) got.push_back(v);
    EXPECT_EQ(got, a == Algorithm::one_shot ? one_shot : direct) << name_of(a);
    EXPECT_TRUE(bitwise_identical_across_devices(out)) << name_of(a);
  }
}

// ---------------------------------------------------------------- inside a kernel

/// A kernel computes in bf16, all-reduces in place in Vmem, and computes on
/// the result: (x * 2) summed over devices, plus 0.5; and all-gathers its x.
TEST(InKernel, Bf16AllReduceAndAllGatherBetweenComputations) {
  Watchdog dog(kTestLimit, "in-kernel bf16 collectives");
  constexpr std::int64_t m = 33;
  for (int n : {2, 4}) {
    for (Algorithm a : {Algorithm::ring, Algorithm::direct, Algorithm::one_shot, Algorithm::ring_direct}) {
      const auto exe = kernel([a](VmemRef<const bf16, m> x, VmemRef<bf16, m> sum, Ref<bf16, extents<dyn, m>, Vmem> all) {
                         sum.store(x.load() * bf16(2.0f));
                         collectives::all_reduce(sum, "x", ReduceOp::sum, Direction::unidirectional, a);
                         sum.store(sum.load() + 0.5f);
                         collectives::all_gather(x, all, "x", collectives::all_reduce_only(a) ? Algorithm::automatic : a);
                       })
                           .compile(Mesh{{"x", n}}, {Shape{m}, Shape{m}, Shape{n, m}});
      const auto host = host_inputs<bf16>(n, m, Values::small_integers);
      const auto out = exe(array_of(host, Shape{m}));
      std::vector<bf16> gathered;
      for (const auto& b : host) gathered.insert(gathered.end(), b.begin(), b.end());
      for (int d = 0; d < n; ++d) {
        const auto s = out[0].to_host<bf16>(d);
        for (std::int64_t i = 0; i < m; ++i) {
          float want = 0.5f;
          for (const auto& b : host) want += 2.0f * float(b[static_cast<std::size_t>(i)]);
          ASSERT_EQ(float(s[static_cast<std::size_t>(i)]), want) << "N=" << n << " " << name_of(a) << " device " << d;
        }
        ASSERT_TRUE(same_bits(out[1].to_host<bf16>(d), gathered, at(d)));
      }
    }
  }
}

}  // namespace
