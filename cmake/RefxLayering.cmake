# Checks the layering of include/refx (docs/architecture.md): a header in one
# of the folders below includes refx headers only from the folders (or the
# top-level files) its layer may see. Run by ctest headers.layering:
#   cmake -DREFX_INCLUDE_DIR=<repo>/include/refx -P cmake/RefxLayering.cmake
# core <- ir <- trace, passes <- runtime <- api (top-level) <- collectives;
# target/ (TPU generations as data) sees only core, and the passes see it;
# pipeline/ holds pipeline.hpp's parts and sees what the tracer does;
# transport sits below the runtime and knows nothing of it (it sees a launch
# only as a transport::Receiver).
# It also fails on any include cycle among the headers of include/refx (a
# header that includes, directly or not, a file that includes it back), and
# names the cycle.
cmake_minimum_required(VERSION 3.21)
if(NOT DEFINED REFX_INCLUDE_DIR)
  message(FATAL_ERROR "RefxLayering.cmake: REFX_INCLUDE_DIR is not set")
endif()

set(allowed_core config core)
set(allowed_ir config core ir)
set(allowed_trace config core ir trace)
set(allowed_target config core target)
set(allowed_passes config core ir passes target)
set(allowed_transport config core ir transport)
set(allowed_runtime config core ir passes runtime transport)
set(allowed_collectives config core ir trace kernel collectives)
set(allowed_pipeline config core ir trace pipeline)

set(violations "")
foreach(layer core ir target trace passes transport runtime collectives pipeline)
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

# ---- include cycles: the include graph of every header under include/refx.
# Headers that include nothing left are removed until none is; what remains
# lies on a cycle or leads into one. A walk from a remaining header along
# includes of remaining headers then meets itself: that loop is reported.
file(GLOB_RECURSE all_headers RELATIVE "${REFX_INCLUDE_DIR}" "${REFX_INCLUDE_DIR}/*.hpp")
list(SORT all_headers)
set(remaining "")
foreach(rel IN LISTS all_headers)
  string(MAKE_C_IDENTIFIER "${rel}" id)
  set(edges_${id} "")
  file(STRINGS "${REFX_INCLUDE_DIR}/${rel}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*<refx/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*<refx/([^>]+)>.*$" "\\1" target "${line}")
    if(EXISTS "${REFX_INCLUDE_DIR}/${target}" AND NOT target IN_LIST edges_${id})
      list(APPEND edges_${id} "${target}")
    endif()
  endforeach()
  list(APPEND remaining "${rel}")
endforeach()
# Drops the headers whose includes all lead out of `remaining`.
macro(refx_prune_acyclic)
  set(changed TRUE)
  while(changed)
    set(changed FALSE)
    set(kept "")
    foreach(rel IN LISTS remaining)
      string(MAKE_C_IDENTIFIER "${rel}" id)
      set(live "")
      foreach(target IN LISTS edges_${id})
        if(target IN_LIST remaining)
          list(APPEND live "${target}")
        endif()
      endforeach()
      set(edges_${id} "${live}")
      if(live STREQUAL "")
        set(changed TRUE)
      else()
        list(APPEND kept "${rel}")
      endif()
    endforeach()
    set(remaining "${kept}")
  endwhile()
endmacro()

# Every cycle found is reported; its closing include is then set aside so
# that the next search finds another (at most 20 are listed).
set(cycles "")
set(found 0)
refx_prune_acyclic()
while(NOT remaining STREQUAL "" AND found LESS 20)
  list(GET remaining 0 at)
  set(path "")
  while(NOT at IN_LIST path)
    list(APPEND path "${at}")
    string(MAKE_C_IDENTIFIER "${at}" id)
    list(GET edges_${id} 0 at)  # after pruning, every include left stays on or leads into a cycle
  endwhile()
  list(FIND path "${at}" first)
  list(SUBLIST path ${first} -1 loop)
  list(GET loop -1 last)
  string(MAKE_C_IDENTIFIER "${last}" id)
  list(REMOVE_ITEM edges_${id} "${at}")
  list(APPEND loop "${at}")
  list(TRANSFORM loop PREPEND "refx/")
  string(REPLACE ";" " -> " loop "${loop}")
  string(APPEND cycles "  ${loop}\n")
  math(EXPR found "${found} + 1")
  refx_prune_acyclic()
endwhile()
if(NOT cycles STREQUAL "")
  message(FATAL_ERROR "refx: include cycles among the headers of include/refx (a header includes, directly or "
    "through others, a file that includes it back):\n${cycles}"
    "Break each: move what both need into a lower header, or declare it in a fwd.hpp of the lower layer.")
endif()
message(STATUS "refx: layering of include/refx holds, and no header includes a file that includes it back")
