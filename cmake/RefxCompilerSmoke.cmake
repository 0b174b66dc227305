# Driver for the compilers.<name>.<program> tests (run with cmake -P): builds
# one program (an example, or tests/compilers/locations.cpp) header-only with
# a given compiler, runs it, and checks that it succeeds and that its output
# contains every REFX_EXPECT text. It shows that refx compiles there and that
# the user's source lines are recorded (the refx::source_location stand-in on
# clang 14, where std::source_location is missing, and on clang 15, where it
# names the callee's declaration in a default argument).
#
# Inputs (-D): REFX_CXX, REFX_SOURCE, REFX_FLAGS_FILE (as RefxCompileCheck.cmake),
# REFX_BINARY (the executable to write), REFX_EXPECT (a ;-list of texts).
cmake_minimum_required(VERSION 3.21)
include("${CMAKE_CURRENT_LIST_DIR}/RefxCompileFlags.cmake")
set(args -std=c++20 -O0 -fdiagnostics-color=never)
refx_append_include_flags(args)
list(APPEND args -I/usr/include/eigen3)
execute_process(COMMAND "${REFX_CXX}" ${args} "${REFX_SOURCE}" -o "${REFX_BINARY}" -lfmt -pthread
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(NOTICE "${out}")
  message(FATAL_ERROR "${REFX_CXX} could not compile ${REFX_SOURCE}")
endif()
execute_process(COMMAND "${REFX_BINARY}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(NOTICE "${out}")
  message(FATAL_ERROR "${REFX_BINARY} (built by ${REFX_CXX}) failed with exit code ${rc}")
endif()
foreach(text IN LISTS REFX_EXPECT)
  string(FIND "${out}" "${text}" pos)
  if(pos EQUAL -1)
    message(NOTICE "${out}")
    message(FATAL_ERROR "the output of ${REFX_BINARY} (built by ${REFX_CXX}) lacks: ${text}")
  endif()
endforeach()
message(STATUS "OK: ${REFX_CXX} builds ${REFX_SOURCE}; its output names the user's lines")
