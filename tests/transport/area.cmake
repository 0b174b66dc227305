# tests/transport (included by tests/CMakeLists.txt as this area's
# area.cmake): refx over the MPI transport (include/refx/transport), each
# test one mpirun on this machine (loopback: btl self,vader). One translation
# unit, mpi_program.cpp (not *_test.cpp: it has its own main), runs every
# case, chosen by its arguments. Label: mpi. In-process tests of the
# transport may sit beside it as *_test.cpp (label transport). Mode
# `backends` runs the bodies of tests/support/backend_cases.hpp (the same as
# tests/backends), so the program links GoogleTest for their AssertionResult
# (not its main).
if(REFX_WITH_MPI)
  add_executable(mpi_test "${CMAKE_CURRENT_SOURCE_DIR}/transport/mpi_program.cpp")
  target_link_libraries(mpi_test PRIVATE refx::mpi refx::gemm GTest::gtest)
  target_compile_definitions(mpi_test PRIVATE REFX_IMPLEMENTATION)  # header-only, one TU
  target_include_directories(mpi_test PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
  refx_configure_target(mpi_test)
  set_target_properties(mpi_test PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${REFX_TEST_BIN_DIR}")
  add_dependencies(refx_tests mpi_test)

  # Root (containers, CI) needs --allow-run-as-root; 4 ranks on 2 cores need
  # --oversubscribe. Both are harmless otherwise.
  set(REFX_MPIRUN "${MPIEXEC_EXECUTABLE}" --allow-run-as-root --oversubscribe --bind-to none
      --mca btl self,vader)
  foreach(ranks 2 4)
    foreach(per_rank 1 2)
      foreach(mode collectives errors backends)
        add_test(NAME mpi.${mode}.np${ranks}_d${per_rank}
          COMMAND ${REFX_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} ${ranks} $<TARGET_FILE:mpi_test> ${mode} ${per_rank})
        set_tests_properties(mpi.${mode}.np${ranks}_d${per_rank} PROPERTIES LABELS mpi TIMEOUT 150
          RUN_SERIAL TRUE)
      endforeach()
    endforeach()
  endforeach()
  # The same cases with the separately compiled refx: linking refx::mpi beside
  # refx::compiled is what makes Runtime::global() (compiled into librefx) use
  # MPI (src/mpi_transport.cpp registers it).
  if(TARGET refx_compiled)
    add_executable(mpi_test_compiled "${CMAKE_CURRENT_SOURCE_DIR}/transport/mpi_program.cpp")
    target_link_libraries(mpi_test_compiled PRIVATE refx::compiled refx::mpi GTest::gtest)
    target_include_directories(mpi_test_compiled PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
    refx_configure_target(mpi_test_compiled)
    set_target_properties(mpi_test_compiled PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${REFX_TEST_BIN_DIR}")
    add_dependencies(refx_tests mpi_test_compiled)
    foreach(mode collectives errors backends)
      add_test(NAME mpi.compiled.${mode}.np2_d2
        COMMAND ${REFX_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:mpi_test_compiled> ${mode} 2)
      set_tests_properties(mpi.compiled.${mode}.np2_d2 PROPERTIES LABELS mpi TIMEOUT 150 RUN_SERIAL TRUE)
    endforeach()
  endif()
  # The example, unchanged, over 4 ranks of one device each.
  if(REFX_BUILD_EXAMPLES)
    add_test(NAME mpi.example.ring_all_reduce_np4
      COMMAND ${REFX_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 4 $<TARGET_FILE:ring_all_reduce>)
    set_tests_properties(mpi.example.ring_all_reduce_np4 PROPERTIES LABELS mpi TIMEOUT 150 RUN_SERIAL TRUE)
  endif()
endif()
