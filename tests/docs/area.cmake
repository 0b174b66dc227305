# Included by tests/CMakeLists.txt after the docs_* test targets exist.
# docs_samples_test compiles the complete programs among the ```cpp blocks of
# README.md and docs/*.md: refx_doc_samples (a small tool, standard library
# only) extracts them into doc_samples.inc whenever a page changes.
file(GLOB _refx_doc_pages CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
list(APPEND _refx_doc_pages "${PROJECT_SOURCE_DIR}/README.md")
set(_refx_doc_samples_dir "${CMAKE_CURRENT_BINARY_DIR}/docs_generated")
set(_refx_doc_samples "${_refx_doc_samples_dir}/doc_samples.inc")

add_executable(refx_doc_samples "${CMAKE_CURRENT_SOURCE_DIR}/docs/extract_samples.cpp")
target_compile_features(refx_doc_samples PRIVATE cxx_std_20)
refx_set_warnings(refx_doc_samples)

add_custom_command(OUTPUT "${_refx_doc_samples}"
  COMMAND refx_doc_samples "${PROJECT_SOURCE_DIR}" "${_refx_doc_samples}"
  DEPENDS refx_doc_samples ${_refx_doc_pages}
  COMMENT "Extracting the code samples of README.md and docs/*.md"
  VERBATIM)
add_custom_target(refx_doc_samples_generate DEPENDS "${_refx_doc_samples}")

if(TARGET docs_samples_test)
  add_dependencies(docs_samples_test refx_doc_samples_generate)
  target_include_directories(docs_samples_test PRIVATE "${_refx_doc_samples_dir}")
  set_source_files_properties("${CMAKE_CURRENT_SOURCE_DIR}/docs/samples_test.cpp"
    PROPERTIES OBJECT_DEPENDS "${_refx_doc_samples}")
endif()
