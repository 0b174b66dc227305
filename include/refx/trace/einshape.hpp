#pragma once
// pltpu.einshape: a reshape and a transpose of a Value written as an
// equation (docs/pallas-to-refx.md):
//
//   einshape<"ab->ba">(x)                      transpose
//   einshape<"a(bc)->abc", dim<'b', 4>>(x)     split x's second dimension into (4, n / 4)
//   einshape<"abc->(ba)c">(y)                  transpose the first two, then merge them
//
// Letters name dimensions; a parenthesised group on the left splits one of
// x's dimensions (all but one of its sizes known, from dim<'x', n> or from
// elsewhere in the equation), on the right merges dimensions into one. Both
// sides name the same letters, each once. The result is at most three ops:
// a reshape to the split dimensions, a transpose (transpose<Axes...>), and a
// reshape to the merged ones, each left out when it changes nothing;
// dimensions that stay side by side travel as one, so the transpose moves
// runs, not elements, where it can.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <refx/core/shape.hpp>
#include <refx/core/source_location.hpp>
#include <refx/trace/value.hpp>

namespace refx {

/// A dimension size einshape cannot infer: Pallas' `b=4` keyword.
template <char Name, std::int64_t Size>
struct dim {
  static constexpr char name = Name;
  static constexpr std::int64_t size = Size;
};

namespace detail::einshape {

/// The equation as a template argument: einshape<"ab->ba">.
template <std::size_t N>
struct Equation {
  char text[N]{};
  constexpr Equation(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT: implicit, as a literal
};

inline constexpr std::size_t max_letters = 52;

enum class Error { none, arrow, paren, letter, rank, sides, unknown, product, given, dims };

/// One side: its letters in order and the group each belongs to.
struct Side {
  char letter[max_letters]{};
  int group[max_letters]{};
  int count = 0;
  int groups = 0;
};

constexpr bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

constexpr int find(const Side& s, char c) {
  for (int i = 0; i < s.count; ++i)
    if (s.letter[i] == c) return i;
  return -1;
}

constexpr Error parse_side(const char* text, std::size_t begin, std::size_t end, Side& out) {
  bool open = false;
  int members = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '(') {
      if (open) return Error::paren;
      open = true;
      members = 0;
    } else if (c == ')') {
      if (!open || members == 0) return Error::paren;
      open = false;
      ++out.groups;
    } else if (!is_letter(c) || find(out, c) >= 0) {
      return Error::letter;
    } else {
      out.letter[out.count] = c;
      out.group[out.count++] = out.groups;
      if (open) ++members;
      else ++out.groups;
    }
  }
  return open ? Error::paren : Error::none;
}

/// What einshape does: the split dimensions (runs that stay side by side
/// merged), the transpose over them, the result's extents.
struct Plan {
  Error error = Error::none;
  int axes = 0;  // the split, run-merged dimensions, in the input's order
  std::int64_t axis_size[max_rank]{};
  int perm[max_rank]{};  // result axis k is input axis perm[k]
  int out_rank = 0;
  std::int64_t out_dims[max_rank]{};
};

template <std::size_t N>
constexpr Plan make_plan(const Equation<N>& eq, const std::int64_t* dims, std::size_t rank, const char* given_name,
                         const std::int64_t* given_size, std::size_t given) {
  Plan p;
  const auto fail = [&](Error e) {
    p.error = e;
    return p;
  };
  const std::size_t length = N - 1;
  std::size_t arrow = length, arrows = 0;
  for (std::size_t i = 0; i + 1 < length; ++i)
    if (eq.text[i] == '-' && eq.text[i + 1] == '>') {
      arrow = i;
      ++arrows;
    }
  if (arrows != 1) return fail(Error::arrow);
  Side lhs, rhs;
  if (const Error e = parse_side(eq.text, 0, arrow, lhs); e != Error::none) return fail(e);
  if (const Error e = parse_side(eq.text, arrow + 2, length, rhs); e != Error::none) return fail(e);
  if (lhs.groups != static_cast<int>(rank)) return fail(Error::rank);
  if (lhs.count != rhs.count) return fail(Error::sides);
  for (int i = 0; i < rhs.count; ++i)
    if (find(lhs, rhs.letter[i]) < 0) return fail(Error::sides);
  std::int64_t size[max_letters]{};  // by lhs letter; 0 while unknown
  for (std::size_t g = 0; g < given; ++g) {
    const int at = find(lhs, given_name[g]);
    if (at < 0 || given_size[g] < 1) return fail(Error::given);
    size[at] = given_size[g];
  }
  for (int g = 0; g < lhs.groups; ++g) {
    std::int64_t known = 1;
    int unknown = -1, unknowns = 0;
    for (int i = 0; i < lhs.count; ++i) {
      if (lhs.group[i] != g) continue;
      if (size[i] == 0) {
        unknown = i;
        ++unknowns;
      } else {
        known *= size[i];
      }
    }
    if (unknowns > 1) return fail(Error::unknown);
    if (unknowns == 1) {
      if (dims[g] % known != 0) return fail(Error::product);
      size[unknown] = dims[g] / known;
    } else if (known != dims[g]) {
      return fail(Error::product);
    }
  }
  // Runs of letters adjacent on both sides move together.
  int run_of[max_letters]{};  // by lhs letter
  int runs = 0;
  for (int k = 0; k < rhs.count; ++k) {
    const int at = find(lhs, rhs.letter[k]);
    if (k == 0 || at != find(lhs, rhs.letter[k - 1]) + 1) ++runs;
    run_of[at] = runs - 1;  // in the result's order
  }
  if (runs > static_cast<int>(max_rank) || rhs.groups > static_cast<int>(max_rank)) return fail(Error::dims);
  // The input's order of the runs: by their first lhs letter.
  int seen = -1;
  for (int i = 0; i < lhs.count; ++i) {
    if (run_of[i] != seen) {
      seen = run_of[i];
      p.perm[run_of[i]] = p.axes;
      p.axis_size[p.axes++] = 1;
    }
    p.axis_size[p.axes - 1] *= size[i];
  }
  p.out_rank = rhs.groups;
  for (int g = 0; g < rhs.groups; ++g) p.out_dims[g] = 1;
  for (int k = 0; k < rhs.count; ++k) p.out_dims[rhs.group[k]] *= size[find(lhs, rhs.letter[k])];
  return p;
}

template <class D>
inline constexpr bool is_dim_v = false;
template <char Name, std::int64_t Size>
inline constexpr bool is_dim_v<dim<Name, Size>> = true;

template <Equation Eq, class E, class... Given>
constexpr Plan plan() {
  std::int64_t dims[max_rank + 1]{};
  for (std::size_t i = 0; i < E::rank; ++i) dims[i] = E::values[i];
  if constexpr (sizeof...(Given) == 0) {
    return make_plan(Eq, dims, E::rank, nullptr, nullptr, 0);
  } else {
    const char names[] = {Given::name...};
    const std::int64_t sizes[] = {Given::size...};
    return make_plan(Eq, dims, E::rank, names, sizes, sizeof...(Given));
  }
}

}  // namespace detail::einshape

/// pltpu.einshape(Eq, x, **sizes): x reshaped and transposed as the equation
/// says; Given are dim<'x', n> for sizes the equation cannot infer.
template <detail::einshape::Equation Eq, class... Given, class T, class E>
auto einshape(const Value<T, E>& x, refx::source_location loc = refx::source_location::current()) {
  using detail::einshape::Error;
  static_assert((detail::einshape::is_dim_v<Given> && ...),
                "refx: einshape's sizes are dim<'x', n> (a letter of the equation and its size)");
  constexpr bool known = [] {
    for (std::size_t i = 0; i < E::rank; ++i)
      if (E::values[i] == dyn) return false;
    return true;
  }();
  static_assert(known, "refx: einshape takes a Value of static extents");
  constexpr detail::einshape::Plan p = detail::einshape::plan<Eq, E, Given...>();
  static_assert(p.error != Error::arrow, "refx: einshape's equation needs exactly one '->' between its two sides");
  static_assert(p.error != Error::paren,
                "refx: einshape's equation has an unmatched, nested or empty parenthesis (a group is '(' letters ')')");
  static_assert(p.error != Error::letter,
                "refx: einshape names dimensions with single letters, each once per side (no digits, no '...', no "
                "'1' for an added dimension)");
  static_assert(p.error != Error::rank,
                "refx: einshape's left side names a different number of dimensions than the Value has (a "
                "parenthesised group is one dimension)");
  static_assert(p.error != Error::sides, "refx: einshape's two sides must name the same letters");
  static_assert(
      p.error != Error::unknown,
      "refx: einshape cannot infer the sizes of a split dimension: give all but one of them with dim<'x', n>");
  static_assert(p.error != Error::product, "refx: einshape's sizes of a split dimension do not multiply to its extent");
  static_assert(
      p.error != Error::given,
      "refx: einshape was given a size (dim<'x', n>) for a letter its left side does not name, or one below 1");
  static_assert(p.error != Error::dims, "refx: einshape's dimensions (after merging runs) exceed refx's 6");
  if constexpr (known && p.error == Error::none) {
    return [&]<std::size_t... A, std::size_t... O>(std::index_sequence<A...>, std::index_sequence<O...>) {
      using Out = extents<p.out_dims[O]...>;
      constexpr bool identity = ((p.perm[A] == static_cast<int>(A)) && ...);
      const auto moved = [&] {  // x, or x with its runs transposed
        if constexpr (identity) {
          return x;
        } else if constexpr (std::is_same_v<E, extents<p.axis_size[A]...>>) {
          return transpose<static_cast<std::size_t>(p.perm[A])...>(x, loc);
        } else {
          return transpose<static_cast<std::size_t>(p.perm[A])...>(reshape<p.axis_size[A]...>(x, loc), loc);
        }
      }();
      if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(moved)>::extents_type, Out>) return moved;
      else return reshape<p.out_dims[O]...>(moved, loc);
    }
    (std::make_index_sequence<static_cast<std::size_t>(p.axes)>{},
     std::make_index_sequence<static_cast<std::size_t>(p.out_rank)>{});
  }
}

}  // namespace refx
