# Driver for the consumer.installed_package test (run with cmake -P):
#   1. cmake --install <refx build dir> into a fresh scratch prefix
#   2. configure tests/consumer against that prefix (find_package(refx CONFIG))
#   2a. compile main.cpp with the flags `pkg-config --cflags refx` prints
#   3. build it and run the binary, which must print refx::version_string,
#      the refx::compiled consumer, which must run a kernel, and the
#      refx::mpi one, and the refx::gemm one, which must run a dot
#   4. build refx_consumer_no_implementation (header-only, no REFX_IMPLEMENTATION
#      file): its link must fail and name the fix in the linker's first lines
#
# Inputs (-D): REFX_BINARY_DIR REFX_CONSUMER_SOURCE_DIR REFX_PREFIX
#   REFX_CONSUMER_BINARY_DIR REFX_GENERATOR REFX_MAKE_PROGRAM REFX_CXX_COMPILER
#   REFX_CONFIG REFX_EXTRA_PREFIX_PATH ('|'-separated) REFX_EXPECTED_VERSION
#   REFX_EXPECT_COMPILED, REFX_EXPECT_MPI (refx::compiled / refx::mpi were built: the
#   consumer must build and run them too); optional REFX_CONFIG_CXX_FLAGS, the
#   consumer's CMAKE_CXX_FLAGS_<REFX_CONFIG> (the calling build's)
cmake_minimum_required(VERSION 3.21)

function(refx_run step)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(JOIN " " cmd ${ARGN})
    message(FATAL_ERROR "consumer: ${step} failed (exit ${rc})\nCommand: ${cmd}\n${out}")
  endif()
  message(STATUS "consumer: ${step}: ok")
  set(REFX_LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

if(REFX_CONFIG STREQUAL "")
  set(REFX_CONFIG Release)
endif()

# Start from scratch so stale files cannot hide missing install rules.
file(REMOVE_RECURSE "${REFX_PREFIX}" "${REFX_CONSUMER_BINARY_DIR}")

refx_run("install"
  "${CMAKE_COMMAND}" --install "${REFX_BINARY_DIR}" --prefix "${REFX_PREFIX}" --config "${REFX_CONFIG}")

# refx.pc: main.cpp, which includes <refx/refx.hpp>, must compile with the
# flags `pkg-config --cflags refx` prints for the installed package (a build
# without CMake). Skipped without pkg-config.
find_program(REFX_PKG_CONFIG NAMES pkg-config pkgconf)
file(GLOB_RECURSE refx_pc_files "${REFX_PREFIX}/*/refx.pc")
if(NOT refx_pc_files)
  message(FATAL_ERROR "consumer: the install put no refx.pc under '${REFX_PREFIX}'")
elseif(REFX_PKG_CONFIG)
  list(GET refx_pc_files 0 refx_pc)
  get_filename_component(refx_pc_dir "${refx_pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${refx_pc_dir}")
  refx_run("pkg-config --cflags refx" "${REFX_PKG_CONFIG}" --cflags refx)
  string(STRIP "${REFX_LAST_OUTPUT}" pc_cflags)
  message(STATUS "consumer: pkg-config --cflags refx: ${pc_cflags}")
  separate_arguments(pc_flags UNIX_COMMAND "${pc_cflags}")
  refx_run("compile main.cpp with pkg-config's flags alone"
    "${REFX_CXX_COMPILER}" ${pc_flags} -fsyntax-only "${REFX_CONSUMER_SOURCE_DIR}/main.cpp")
else()
  message(STATUS "consumer: pkg-config not found; refx.pc installed but not checked")
endif()

string(REPLACE "|" ";" extra_prefix_path "${REFX_EXTRA_PREFIX_PATH}")
set(prefix_path "${REFX_PREFIX}" ${extra_prefix_path})
# Passed through an initial-cache file: a ';'-list would not survive ${ARGN}.
set(init_cache "${REFX_PREFIX}-init.cmake")
file(WRITE "${init_cache}"
  "set(CMAKE_PREFIX_PATH [==[${prefix_path}]==] CACHE STRING \"\")\n")
set(make_program_arg "")
if(REFX_MAKE_PROGRAM)
  set(make_program_arg "-DCMAKE_MAKE_PROGRAM=${REFX_MAKE_PROGRAM}")
endif()

set(config_flags_arg "")
if(NOT "${REFX_CONFIG_CXX_FLAGS}" STREQUAL "")
  string(TOUPPER "${REFX_CONFIG}" config_upper)
  set(config_flags_arg "-DCMAKE_CXX_FLAGS_${config_upper}=${REFX_CONFIG_CXX_FLAGS}")
endif()

refx_run("configure"
  "${CMAKE_COMMAND}"
    -C "${init_cache}"
    -S "${REFX_CONSUMER_SOURCE_DIR}"
    -B "${REFX_CONSUMER_BINARY_DIR}"
    -G "${REFX_GENERATOR}"
    ${make_program_arg}
    "-DCMAKE_CXX_COMPILER=${REFX_CXX_COMPILER}"
    "-DCMAKE_BUILD_TYPE=${REFX_CONFIG}"
    ${config_flags_arg}
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)

# Make sure the package came from the scratch prefix, not the build tree or
# some system-wide install.
file(STRINGS "${REFX_CONSUMER_BINARY_DIR}/CMakeCache.txt" refx_dir_line REGEX "^refx_DIR:")
string(REGEX REPLACE "^refx_DIR:[A-Z]+=" "" refx_dir "${refx_dir_line}")
file(REAL_PATH "${REFX_PREFIX}" real_prefix)
file(REAL_PATH "${refx_dir}" real_refx_dir)
string(FIND "${real_refx_dir}/" "${real_prefix}/" pos)
if(NOT pos EQUAL 0)
  message(FATAL_ERROR "consumer: refx was found in '${refx_dir}', not under '${REFX_PREFIX}'")
endif()

refx_run("build"
  "${CMAKE_COMMAND}" --build "${REFX_CONSUMER_BINARY_DIR}" --config "${REFX_CONFIG}")

# Runs the consumer executable `name` if it was built (a failure if `expected`
# is true and it was not); its output must contain `text`.
function(refx_run_consumer name expected text)
  set(exe "${REFX_CONSUMER_BINARY_DIR}/${name}")
  if(NOT EXISTS "${exe}" AND EXISTS "${REFX_CONSUMER_BINARY_DIR}/${REFX_CONFIG}/${name}")
    set(exe "${REFX_CONSUMER_BINARY_DIR}/${REFX_CONFIG}/${name}")
  endif()
  if(NOT EXISTS "${exe}")
    if(expected)
      message(FATAL_ERROR "consumer: ${name} was not built: the installed package lacks its target")
    endif()
    return()
  endif()
  refx_run("run ${name}" "${exe}")
  message(STATUS "consumer output: ${REFX_LAST_OUTPUT}")
  string(FIND "${REFX_LAST_OUTPUT}" "${text}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "consumer: ${name} printed '${REFX_LAST_OUTPUT}', expected it to contain '${text}'")
  endif()
endfunction()

refx_run_consumer(refx_consumer ON "refx ${REFX_EXPECTED_VERSION}")
refx_run_consumer(refx_consumer_gemm ON "gemm: 50")  # a dot on the installed refx::gemm
# refx::compiled runs a kernel; refx::mpi runs in-process (outside mpirun),
# its transport object linked and registered.
refx_run_consumer(refx_consumer_compiled "${REFX_EXPECT_COMPILED}" "compiled: 26")
refx_run_consumer(refx_consumer_mpi "${REFX_EXPECT_MPI}" "refx ${REFX_EXPECTED_VERSION}; MPI transport registered")

# A header-only program without the REFX_IMPLEMENTATION file must fail to
# link, and the undefined reference that names the fix must come first, not
# after the hundred others its kernel makes (include/refx/config.hpp).
set(fix_symbol "header_only_refx_needs_REFX_IMPLEMENTATION_defined_in_one_source_file")
set(fix_lines 10)
execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${REFX_CONSUMER_BINARY_DIR}" --config "${REFX_CONFIG}"
    --target refx_consumer_no_implementation
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "consumer: refx_consumer_no_implementation linked without a REFX_IMPLEMENTATION file")
endif()
# The linker's output follows the build tool's "Linking CXX executable" line
# (Ninja prints FAILED: and the link command in between, Makefiles nothing).
string(FIND "${out}" "Linking CXX executable" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "consumer: refx_consumer_no_implementation failed before its link:\n${out}")
endif()
string(SUBSTRING "${out}" ${pos} -1 rest)
# That line and the next fix_lines, cut with string(FIND) (as a list, a
# linker line's brackets would keep lines together).
set(head "")
foreach(i RANGE ${fix_lines})
  string(FIND "${rest}" "\n" nl)
  if(nl EQUAL -1)
    string(APPEND head "${rest}")
    break()
  endif()
  math(EXPR nl "${nl} + 1")
  string(SUBSTRING "${rest}" 0 ${nl} line)
  string(APPEND head "${line}")
  string(SUBSTRING "${rest}" ${nl} -1 rest)
endforeach()
string(FIND "${head}" "${fix_symbol}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "consumer: without REFX_IMPLEMENTATION the link failed, but its first ${fix_lines} lines "
    "do not name ${fix_symbol}:\n${head}")
endif()
message(STATUS "consumer: without REFX_IMPLEMENTATION the link fails naming the fix first: ok\n${head}")
