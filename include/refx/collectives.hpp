#pragma once
// Collectives written with the public DSL: usable inside a user kernel on the
// user's Refs, or as standalone compiled programs (collectives/programs.hpp).

#include <refx/collectives/all_gather.hpp>
#include <refx/collectives/all_reduce.hpp>
#include <refx/collectives/all_to_all.hpp>
#include <refx/collectives/collective_matmul.hpp>
#include <refx/collectives/ppermute.hpp>
#include <refx/collectives/programs.hpp>
