# Compile options for refx's *own* targets (tests, examples, benchmarks,
# header checks). Never applied to the INTERFACE target `refx`, so consumers
# are not forced to use our warning or sanitizer flags.
include_guard(GLOBAL)

# refx_set_warnings(<target>)
#   -Wall -Wextra, plus -Werror unless REFX_WARNINGS_AS_ERRORS is OFF.
function(refx_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC 12 at -O3 reports false -Wstringop-overflow / -Wrestrict positives
      # inside {fmt} and std::string appends (known GCC bugs); they would fail
      # the release build under -Werror.
      target_compile_options(${target} PRIVATE -Wno-stringop-overflow -Wno-restrict)
    endif()
    if(REFX_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  elseif(MSVC)
    target_compile_options(${target} PRIVATE /W4)
    if(REFX_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE /WX)
    endif()
  endif()
endfunction()

# refx_set_sanitizers(<target>)
#   Applies REFX_SANITIZE ("" | "thread" | "address") to compile and link.
function(refx_set_sanitizers target)
  if(REFX_SANITIZE STREQUAL "thread")
    set(flags -fsanitize=thread)
  elseif(REFX_SANITIZE STREQUAL "address")
    set(flags -fsanitize=address,undefined -fno-omit-frame-pointer)
  else()
    return()
  endif()
  target_compile_options(${target} PRIVATE ${flags})
  target_link_options(${target} PRIVATE ${flags})
endfunction()

# refx_configure_target(<target>)
#   Everything a project target needs: warnings + sanitizers.
function(refx_configure_target target)
  refx_set_warnings(${target})
  refx_set_sanitizers(${target})
endfunction()
