# Sanitizer and fuzzing builds (docs/verification.md).
#   -DFLOTILLA_SANITIZE=address,undefined   ASan + UBSan (any UBSan report aborts the process)
#   -DFLOTILLA_SANITIZE=thread              TSan
#   -DFLOTILLA_FUZZ=ON                      libFuzzer targets fuzz_* (tests/fuzz), clang only;
#                                           implies address,undefined when no sanitizer is named
# Both instrument flotilla's own code only: Debian's MPI, HDF5, Kokkos and Boost are not rebuilt.
# The runtimes' options and the suppression files of tests/sanitizers (each entry says why) are
# compiled into every executable (tests/sanitizers/options.cpp.in), so ctest, the integration
# scripts and processes started under mpirun all run with them; the environment
# (ASAN_OPTIONS, ...) still overrides them. CUDA is off in these builds.

set(FLOTILLA_SANITIZE "" CACHE STRING "Sanitizers for flotilla's code: address,undefined | thread | empty")
option(FLOTILLA_FUZZ "Build the libFuzzer targets fuzz_* in tests/fuzz (clang only)" OFF)
option(FLOTILLA_BUILD_BENCH "Build the benchmarks in bench/" ON)

if(FLOTILLA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "FLOTILLA_FUZZ=ON needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}: "
                        "configure with -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16")
  endif()
  if(NOT FLOTILLA_BUILD_TESTS)
    message(FATAL_ERROR "FLOTILLA_FUZZ=ON needs FLOTILLA_BUILD_TESTS=ON (the targets live in tests/fuzz)")
  endif()
  if(FLOTILLA_SANITIZE STREQUAL "")
    set(FLOTILLA_SANITIZE "address,undefined" CACHE STRING "" FORCE)
    message(STATUS "FLOTILLA_FUZZ=ON: FLOTILLA_SANITIZE set to address,undefined")
  endif()
endif()

set(_flotilla_sanitizers "")
if(NOT FLOTILLA_SANITIZE STREQUAL "")
  string(REPLACE "," ";" _flotilla_sanitizers "${FLOTILLA_SANITIZE}")
  foreach(_s IN LISTS _flotilla_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "FLOTILLA_SANITIZE: unknown sanitizer '${_s}' (address, undefined or thread)")
    endif()
  endforeach()
  if("thread" IN_LIST _flotilla_sanitizers AND "address" IN_LIST _flotilla_sanitizers)
    message(FATAL_ERROR "FLOTILLA_SANITIZE: thread and address cannot be combined; use two build folders")
  endif()
  if(FLOTILLA_FUZZ AND "thread" IN_LIST _flotilla_sanitizers)
    message(FATAL_ERROR "FLOTILLA_FUZZ=ON works with address,undefined, not thread")
  endif()
  string(TOUPPER "${FLOTILLA_WITH_CUDA}" _flotilla_cuda_request)
  if(_flotilla_cuda_request STREQUAL "ON")
    message(FATAL_ERROR "FLOTILLA_SANITIZE does not instrument CUDA code: configure with -DFLOTILLA_WITH_CUDA=OFF")
  endif()
  set(FLOTILLA_WITH_CUDA OFF CACHE STRING "Build the CUDA/NCCL kernels: AUTO, ON or OFF" FORCE)

  set(_flotilla_sanitize_flags -fsanitize=${FLOTILLA_SANITIZE} -fno-omit-frame-pointer)
  if("undefined" IN_LIST _flotilla_sanitizers)
    # A UBSan report is a failure, not a line in a log nobody reads.
    list(APPEND _flotilla_sanitize_flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_flotilla_sanitize_flags}>")
  add_link_options(-fsanitize=${FLOTILLA_SANITIZE})
endif()

# Compiles the sanitizer runtimes' default options and suppressions into every executable target
# defined under `dir`, and gives every library the runtimes as a link requirement (called once,
# from the top level, after every folder is added).
function(flotilla_sanitizer_defaults dir)
  if(FLOTILLA_SANITIZE STREQUAL "")
    return()
  endif()
  get_property(_targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_t IN LISTS _targets)
    get_target_property(_type ${_t} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      target_sources(${_t} PRIVATE "${PROJECT_BINARY_DIR}/sanitizer_options.cpp")
    elseif(_type STREQUAL "STATIC_LIBRARY")
      # An instrumented library needs the runtimes wherever it is linked, also by a project that
      # uses an installed sanitizer build (find_package(flotilla), tests/install).
      target_link_options(${_t} INTERFACE -fsanitize=${FLOTILLA_SANITIZE})
    endif()
  endforeach()
  get_property(_subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(_d IN LISTS _subdirs)
    flotilla_sanitizer_defaults("${_d}")
  endforeach()
endfunction()

if(NOT FLOTILLA_SANITIZE STREQUAL "")
  set(FLOTILLA_SANITIZER_DIR "${PROJECT_SOURCE_DIR}/tests/sanitizers")
  configure_file("${PROJECT_SOURCE_DIR}/tests/sanitizers/options.cpp.in" "${PROJECT_BINARY_DIR}/sanitizer_options.cpp" @ONLY)
endif()
