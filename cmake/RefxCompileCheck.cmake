# Driver for the compile_fail.<stem> tests (run with cmake -P).
#
# Inputs (-D):
#   REFX_CXX         C++ compiler
#   REFX_SOURCE      the .cpp file to check
#   REFX_MODE        "fail" (must not compile, output must contain every
#                    "// refx-expect: <text>" text), "pass" (must compile), or
#                    "pch" (precompile the header REFX_SOURCE into
#                    REFX_SOURCE.gch with the checks' flags: a build step)
#   REFX_FLAGS_FILE  generated file setting REFX_CF_INCLUDES, REFX_CF_DEFINES and
#                    REFX_CF_IMPLICIT_INCLUDES
#   REFX_HEADER_ROOT optional: refx's header directory; a precompiled header
#                    older than any header in it is not used
#   REFX_PCH         optional: a header precompiled by the "pch" mode; it is
#                    included first (-include), and GCC reads its .gch instead of
#                    parsing refx again (clang: its .pch). A missing or stale
#                    precompiled header only costs time: the compiler then
#                    parses the header itself.
#   REFX_MAX_FIRST   optional (default 15): a rejection's first refx: line must
#                    be within the compiler output's first REFX_MAX_FIRST lines
#   REFX_MAX_TAIL    optional (default 40): at most this many lines of output may
#                    follow the first refx: line (no cascade of follow-on errors)
# A case may raise either limit for itself with a line
# `// refx-max-first: N` or `// refx-max-tail: N`: a known cascade, recorded
# where it is (each is a defect to fix, not a licence; since the 12 that issue
# 25 left open were fixed in the library, one case uses one:
# pipeline_index_map_mixed_int_types.cpp, where the compiler's own error in
# the user's code must come before refx's sentence).
cmake_minimum_required(VERSION 3.21)

foreach(var REFX_CXX REFX_SOURCE REFX_MODE REFX_FLAGS_FILE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "RefxCompileCheck.cmake: ${var} is not set")
  endif()
endforeach()
include("${CMAKE_CURRENT_LIST_DIR}/RefxCompileFlags.cmake")

set(args -std=c++20 -fsyntax-only -fdiagnostics-color=never)
refx_append_include_flags(args)
foreach(def IN LISTS REFX_CF_DEFINES)
  if(NOT def STREQUAL "")
    list(APPEND args "-D${def}")
  endif()
endforeach()
if(REFX_CF_SEPARATE)
  list(APPEND args -DREFX_SEPARATE_COMPILATION)
endif()
set(args_no_syntax_only ${args})
list(REMOVE_ITEM args_no_syntax_only -fsyntax-only)

# GCC reads <header>.gch, clang <header>.pch, when the header is -include'd.
# clang also instantiates, once into its precompiled header, the templates
# refx's own inline code uses, which every check would instantiate again
# (tests/compile_fail/CMakeLists.txt has the figures); GCC cannot.
set(pch_suffix ".gch")
set(pch_flags "")
if(REFX_CXX MATCHES "clang")
  set(pch_suffix ".pch")
  set(pch_flags -fpch-instantiate-templates)
endif()

if(REFX_MODE STREQUAL "pch")
  execute_process(
    COMMAND "${REFX_CXX}" ${args_no_syntax_only} ${pch_flags} -x c++-header "${REFX_SOURCE}" -o "${REFX_SOURCE}${pch_suffix}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "RefxCompileCheck.cmake: precompiling ${REFX_SOURCE} failed")
  endif()
  return()
endif()
# A precompiled header older than a refx header is stale: GCC would silently
# use the old declarations and clang refuses it ("has been modified since the
# precompiled header was built"), so it is skipped (the check then parses the
# headers itself: slower, but what it tests is current).
set(use_pch OFF)
if(DEFINED REFX_PCH AND EXISTS "${REFX_PCH}${pch_suffix}")
  set(use_pch ON)
  if(DEFINED REFX_HEADER_ROOT)
    file(GLOB_RECURSE headers "${REFX_HEADER_ROOT}/*.hpp")
    foreach(h IN LISTS headers)
      if("${h}" IS_NEWER_THAN "${REFX_PCH}${pch_suffix}")
        message(STATUS "precompiled header older than ${h}: not used")
        set(use_pch OFF)
        break()
      endif()
    endforeach()
  endif()
endif()
if(use_pch)
  list(APPEND args -include "${REFX_PCH}")
endif()

# Collect the expected messages. The file is split by hand (not with
# file(STRINGS)) so that ';', '[' and ']' inside messages survive CMake's list
# handling; they are encoded while in a list and decoded before matching.
set(expected "")
if(REFX_MODE STREQUAL "fail")
  file(READ "${REFX_SOURCE}" content)
  string(REPLACE ";" "<REFX_SEMI>" content "${content}")
  string(REPLACE "[" "<REFX_LBR>" content "${content}")
  string(REPLACE "]" "<REFX_RBR>" content "${content}")
  string(REPLACE "\r" "" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[ \t]*// refx-max-first: ([0-9]+)")
      set(file_max_first "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^[ \t]*// refx-max-tail: ([0-9]+)")
      set(file_max_tail "${CMAKE_MATCH_1}")
    elseif(line MATCHES "^[ \t]*// refx-expect: (.*)$")
      string(REGEX REPLACE "[ \t]+$" "" text "${CMAKE_MATCH_1}")
      if(NOT text STREQUAL "")
        list(APPEND expected "${text}")
      endif()
    endif()
  endforeach()
  if(expected STREQUAL "")
    message(FATAL_ERROR
      "${REFX_SOURCE}: negative compile test has no '// refx-expect: <message>' line")
  endif()
endif()

# Untranslated diagnostics with plain ASCII quotes, whatever the user's locale.
set(ENV{LC_ALL} C)
set(ENV{LANG} C)
execute_process(
  COMMAND "${REFX_CXX}" ${args} "${REFX_SOURCE}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)

string(JOIN " " cmdline "${REFX_CXX}" ${args} "${REFX_SOURCE}")
# clang 14 prints a static_assert message as a string literal (\" for a
# quote); the messages are matched as the user reads them in other compilers.
string(REPLACE "\\\"" "\"" output "${output}")

# Prints the details unformatted (message(FATAL_ERROR) would re-wrap the
# compiler output), then fails the test.
function(refx_fail summary details)
  message(NOTICE "${details}"
    "Command: ${cmdline}\n"
    "---- compiler output (exit code ${rc}) ----\n${output}"
    "------------------------------------------")
  message(FATAL_ERROR "${summary}")
endfunction()

if(REFX_MODE STREQUAL "pass")
  if(NOT rc EQUAL 0)
    refx_fail("compile_fail: positive control ${REFX_SOURCE} did not compile" "")
  endif()
  message(STATUS "OK: ${REFX_SOURCE} compiles")
  return()
endif()

if(rc EQUAL 0)
  set(msgs "")
  foreach(text IN LISTS expected)
    string(REPLACE "<REFX_SEMI>" ";" text "${text}")
    string(REPLACE "<REFX_LBR>" "[" text "${text}")
    string(REPLACE "<REFX_RBR>" "]" text "${text}")
    string(APPEND msgs "  expected: ${text}\n")
  endforeach()
  refx_fail("compile_fail: ${REFX_SOURCE} compiled successfully but must be rejected" "${msgs}")
endif()

set(missing "")
foreach(text IN LISTS expected)
  string(REPLACE "<REFX_SEMI>" ";" text "${text}")
  string(REPLACE "<REFX_LBR>" "[" text "${text}")
  string(REPLACE "<REFX_RBR>" "]" text "${text}")
  string(FIND "${output}" "${text}" pos)
  if(pos EQUAL -1)
    string(APPEND missing "  expected (not found): ${text}\n")
  else()
    message(STATUS "found expected diagnostic: ${text}")
  endif()
endforeach()

if(NOT missing STREQUAL "")
  refx_fail("compile_fail: ${REFX_SOURCE} failed to compile, but not with the expected diagnostic" "${missing}")
endif()

# The refx: sentence must come first and not drown in a cascade: it must be in
# the first REFX_MAX_FIRST lines, and at most REFX_MAX_TAIL lines may follow it.
if(NOT DEFINED REFX_MAX_FIRST)
  set(REFX_MAX_FIRST 15)
endif()
if(NOT DEFINED REFX_MAX_TAIL)
  set(REFX_MAX_TAIL 40)
endif()
if(DEFINED file_max_first)
  set(REFX_MAX_FIRST ${file_max_first})
endif()
if(DEFINED file_max_tail)
  set(REFX_MAX_TAIL ${file_max_tail})
endif()
string(REPLACE ";" "<REFX_SEMI>" flat "${output}")
string(REPLACE "[" "<REFX_LBR>" flat "${flat}")
string(REPLACE "]" "<REFX_RBR>" flat "${flat}")
string(REGEX REPLACE "\n$" "" flat "${flat}")
string(REPLACE "\n" ";" out_lines "${flat}")
list(LENGTH out_lines n_lines)
set(first -1)
set(i 0)
foreach(line IN LISTS out_lines)
  if(line MATCHES "refx(::extend::[a-z_]+)?: ")
    set(first ${i})
    break()
  endif()
  math(EXPR i "${i} + 1")
endforeach()
if(first EQUAL -1 OR first GREATER_EQUAL REFX_MAX_FIRST)
  refx_fail("compile_fail: ${REFX_SOURCE}: the first refx: line is not within the first ${REFX_MAX_FIRST} lines of output" "")
endif()
math(EXPR tail "${n_lines} - ${first} - 1")
if(tail GREATER REFX_MAX_TAIL)
  refx_fail("compile_fail: ${REFX_SOURCE}: ${tail} lines of output follow the refx: line (at most ${REFX_MAX_TAIL}): a cascade" "")
endif()
message(STATUS "refx: line is output line ${first}, followed by ${tail} lines")
message(STATUS "OK: ${REFX_SOURCE} is rejected with the expected diagnostic")
