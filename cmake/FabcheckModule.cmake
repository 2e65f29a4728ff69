# fabcheck_module(NAME SOURCES... [DEPS targets...])
# One static library per module, named fabcheck_<NAME>. Includes are rooted at
# src/ ("base/status.h") and include/ ("fabcheck/model/inventory.h").
function(fabcheck_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(fabcheck_${name} STATIC ${ARG_SOURCES})
  target_include_directories(fabcheck_${name} PUBLIC
    ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(fabcheck_${name} PUBLIC ${ARG_DEPS})
  set_property(GLOBAL APPEND PROPERTY FABCHECK_MODULES fabcheck_${name})
endfunction()

# fabcheck_test(NAME SOURCES... [LIBS targets...] [LABELS labels...])
# A GoogleTest executable; its tests are registered with ctest one by one.
# FABCHECK_SOURCE_DIR and FABCHECK_TESTDATA_DIR are compiled in so tests find
# their fixtures from any build directory.
function(fabcheck_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  # Only tests that run the binary wait for it to be built, so a unit test of
  # one module builds that module alone.
  foreach(source ${ARG_SOURCES})
    get_filename_component(source_path ${source} ABSOLUTE)
    if(EXISTS ${source_path})
      file(READ ${source_path} source_text)
      string(FIND "${source_text}" "FABCHECK_BINARY" uses_binary)
      if(uses_binary GREATER -1 AND TARGET fabcheck)
        add_dependencies(${name} fabcheck)
        break()
      endif()
    endif()
  endforeach()
  target_compile_definitions(${name} PRIVATE
    FABCHECK_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    FABCHECK_TESTDATA_DIR="${CMAKE_SOURCE_DIR}/tests/data"
    FABCHECK_BINARY="$<TARGET_FILE:fabcheck>")
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  # Tests that shape links, time transfers or boot VMs must not share the two
  # CI cores with other tests, or their measurements stop meaning anything.
  set(serial FALSE)
  if("netns" IN_LIST ARG_LABELS OR "lab" IN_LIST ARG_LABELS)
    set(serial TRUE)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" RUN_SERIAL ${serial} DISCOVERY_TIMEOUT 60)
endfunction()
