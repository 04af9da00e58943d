# Each test suite is one ctest entry running `scanlab test --gtest_filter=...`, so the one binary
# is what is tested. RC_PARAMS sets RapidCheck's case count (DESIGN.md: a few hundred per property).
set(SCANLAB_RC_PARAMS "max_success=300" CACHE STRING "RapidCheck parameters for ctest runs")
# OMP_WAIT_POLICY=passive: the tests run many tiny kernels; spinning OpenMP workers made the property
# suites several times slower on a shared 2-core machine (timings only, results are unchanged).
function(scanlab_add_test name filter)
  add_test(NAME ${name} COMMAND scanlab test --gtest_filter=${filter} --gtest_brief=1)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT
                       "RC_PARAMS=${SCANLAB_RC_PARAMS};OMP_PROC_BIND=false;OMP_WAIT_POLICY=passive;KOKKOS_DISABLE_WARNINGS=1"
                       TIMEOUT 1800)
endfunction()
file(GLOB_RECURSE _scanlab_test_lists CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/properties/*.tests)
# properties/<area>.tests lists "ctest-name gtest-filter" pairs, one per line, so each area
# registers its own suites without editing this file. "ctest-name script:PATH" instead runs
# `bash PATH path/to/scanlab` (PATH relative to the source tree), for tests that drive the CLI
# or Python end to end.
foreach(_list ${_scanlab_test_lists})
  file(STRINGS ${_list} _lines REGEX "^[^#]")
  foreach(_line ${_lines})
    string(REGEX REPLACE "[ \t]+" ";" _pair "${_line}")
    list(GET _pair 0 _name)
    list(GET _pair 1 _filter)
    if(_filter MATCHES "^script:(.+)$")
      add_test(NAME ${_name} COMMAND bash ${CMAKE_SOURCE_DIR}/${CMAKE_MATCH_1} $<TARGET_FILE:scanlab>)
      set_tests_properties(${_name} PROPERTIES ENVIRONMENT "OMP_PROC_BIND=false;OMP_WAIT_POLICY=passive;KOKKOS_DISABLE_WARNINGS=1"
                           TIMEOUT 1800)
    else()
      scanlab_add_test(${_name} ${_filter})
    endif()
  endforeach()
endforeach()
