# Driver for the consumer.installed_package test (run with cmake -P):
#   1. cmake --install <refx build dir> into a fresh scratch prefix
#   2. configure tests/consumer against that prefix (find_package(refx CONFIG))
#   2a. compile main.cpp with the flags `pkg-config --cflags refx` prints
#   3. build it and run the binary, which must print refx::version_string,
#      the refx::compiled consumer, which must run a kernel, and the
#      refx::mpi one, and the refx::gemm one, which must run a dot
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
