# Checks the layering of include/refx (docs/architecture.md): a header in one
# of the folders below includes refx headers only from the folders (or the
# top-level files) its layer may see. Run by ctest headers.layering:
#   cmake -DREFX_INCLUDE_DIR=<repo>/include/refx -P cmake/RefxLayering.cmake
# core <- ir <- trace, passes <- runtime <- api (top-level) <- collectives;
# transport sits below the runtime and knows nothing of it (it sees a launch
# only as a transport::Receiver).
cmake_minimum_required(VERSION 3.21)
if(NOT DEFINED REFX_INCLUDE_DIR)
  message(FATAL_ERROR "RefxLayering.cmake: REFX_INCLUDE_DIR is not set")
endif()

set(allowed_core config core)
set(allowed_ir config core ir)
set(allowed_trace config core ir trace)
set(allowed_passes config core ir passes)
set(allowed_transport config core ir transport)
set(allowed_runtime config core ir passes runtime transport)
set(allowed_collectives config core ir trace kernel collectives)

set(violations "")
foreach(layer core ir trace passes transport runtime collectives)
  file(GLOB_RECURSE headers "${REFX_INCLUDE_DIR}/${layer}/*.hpp")
  foreach(h IN LISTS headers)
    file(STRINGS "${h}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*<refx/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<refx/([^>]+)>.*$" "\\1" target "${line}")
      string(REGEX REPLACE "/.*$" "" first "${target}")
      string(REGEX REPLACE "\\.hpp$" "" first "${first}")
      if(NOT first IN_LIST allowed_${layer})
        file(RELATIVE_PATH rel "${REFX_INCLUDE_DIR}" "${h}")
        string(APPEND violations "  refx/${rel} includes <refx/${target}> (${layer}/ may include only: ${allowed_${layer}})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(NOT violations STREQUAL "")
  message(FATAL_ERROR "refx: headers include across the layering of docs/architecture.md:\n${violations}")
endif()
message(STATUS "refx: layering of include/refx holds")
