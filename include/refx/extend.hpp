#pragma once
// refx::extend: defining primitives of your own and writing passes over traced
// graphs (cf. jax.extend). See docs/extend.md and examples/extend_mul_add.cpp.
//   <refx/extend/primitive.hpp>   bind a user primitive from a kernel
//   <refx/extend/graph_walk.hpp>  visit, count and find ops in a Graph
//   <refx/extend/rewrite.hpp>     user passes that replace pure ops at compile time

#include <refx/extend/graph_walk.hpp>
#include <refx/extend/primitive.hpp>
#include <refx/extend/rewrite.hpp>
