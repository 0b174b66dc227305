# Shared by RefxCompileCheck.cmake and RefxCompilerSmoke.cmake: reads the
# generated flags file (REFX_FLAGS_FILE) and appends refx's include dirs to
# the list variable named `out`. The compiler's own search dirs (e.g.
# /usr/include, where fmt and range-v3 live) are skipped: passing them as -I
# breaks libstdc++'s #include_next.
include("${REFX_FLAGS_FILE}")
function(refx_append_include_flags out)
  set(args ${${out}})
  list(REMOVE_DUPLICATES REFX_CF_INCLUDES)
  foreach(dir IN LISTS REFX_CF_INCLUDES)
    if(NOT dir STREQUAL "" AND NOT dir IN_LIST REFX_CF_IMPLICIT_INCLUDES)
      list(APPEND args "-I${dir}")
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()
