# Every external dependency as an imported target, with the fixes that Debian 12's packages need
# (see docs/build.md). Optional parts follow FLOTILLA_WITH_X -> FLOTILLA_HAVE_X: asking for a part
# explicitly (ON) that is missing is a configure error, never a silent skip.

find_package(Boost 1.74 REQUIRED COMPONENTS program_options CONFIG)   # Boost::program_options
find_package(HDF5 1.10 REQUIRED COMPONENTS C)                        # HDF5::HDF5 (serial flavour)
find_package(MPI 3.1 REQUIRED COMPONENTS C CXX)                      # MPI::MPI_CXX
find_package(nlohmann_json 3.10 REQUIRED)                            # nlohmann_json::nlohmann_json
find_package(fmt 9 REQUIRED)                                         # fmt::fmt (g++ 12 has no std::format)

# Kokkos 3.4.1 from Trilinos 13.2 (Serial backend). Its imported target names the non-existent
# include dir /usr/lib/include, which fails at generate time; point it at the real one.
find_package(Kokkos REQUIRED)
set_property(TARGET Kokkos::kokkos PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${Kokkos_INCLUDE_DIRS}")

# muparser: constraint expressions over space parameters. Debian ships a CMake config.
find_package(muparser 2.3 REQUIRED)                                  # muparser::muparser

# PCRE2: evaluate.summary's patterns, whose named groups std::regex lacks. Debian ships a .pc file.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)          # PkgConfig::PCRE2 (libpcre2-dev)

# libslurm 22.05 ships neither a CMake config nor a .pc file.
find_path(SLURM_INCLUDE_DIR slurm/slurm.h)
find_library(SLURM_LIBRARY slurm)
if(NOT SLURM_INCLUDE_DIR OR NOT SLURM_LIBRARY)
  message(FATAL_ERROR "libslurm not found: run scripts/install-deps.sh (package libslurm-dev)")
endif()
add_library(Slurm::slurm UNKNOWN IMPORTED)
set_target_properties(Slurm::slurm PROPERTIES IMPORTED_LOCATION "${SLURM_LIBRARY}"
                      INTERFACE_INCLUDE_DIRECTORIES "${SLURM_INCLUDE_DIR}")

if(FLOTILLA_BUILD_TESTS)
  find_package(GTest 1.10 REQUIRED)                                  # GTest::gtest_main
endif()

# CUDA 13 toolkit + NCCL (the machine image's /usr/local/cuda, not a Debian package).
set(FLOTILLA_HAVE_CUDA OFF)
string(TOUPPER "${FLOTILLA_WITH_CUDA}" _flotilla_with_cuda)
if(NOT _flotilla_with_cuda MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "FLOTILLA_WITH_CUDA must be AUTO, ON or OFF, not '${FLOTILLA_WITH_CUDA}'")
endif()
if(NOT _flotilla_with_cuda STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 100)          # H100/H200 and B200/GB200
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)   # CI shells lack /etc/profile.d's PATH
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_STANDARD 17)   # CMake 3.25 knows no CUDA20 flags for nvcc
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{NCCL_HOME}/include)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} $ENV{NCCL_HOME}/lib)
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      add_library(NCCL::nccl UNKNOWN IMPORTED)
      set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                            INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
      set(FLOTILLA_HAVE_CUDA ON)
    elseif(_flotilla_with_cuda STREQUAL "ON")
      message(FATAL_ERROR "FLOTILLA_WITH_CUDA=ON but NCCL was not found (set NCCL_HOME)")
    endif()
  elseif(_flotilla_with_cuda STREQUAL "ON")
    message(FATAL_ERROR "FLOTILLA_WITH_CUDA=ON but no CUDA compiler was found "
                        "(install the CUDA toolkit or set CMAKE_CUDA_COMPILER)")
  endif()
endif()

function(flotilla_feature_summary)
  message(STATUS "")
  message(STATUS "flotilla ${PROJECT_VERSION} configuration")
  message(STATUS "  build type       ${CMAKE_BUILD_TYPE}")
  message(STATUS "  Boost            ${Boost_VERSION}")
  message(STATUS "  HDF5             ${HDF5_VERSION} (parallel: ${HDF5_IS_PARALLEL})")
  message(STATUS "  MPI              ${MPI_CXX_VERSION} (${MPIEXEC_EXECUTABLE})")
  message(STATUS "  Kokkos           ${Kokkos_VERSION} (devices: ${Kokkos_DEVICES})")
  message(STATUS "  muparser         ${muparser_VERSION}")
  message(STATUS "  PCRE2            ${PCRE2_VERSION}")
  message(STATUS "  libslurm         ${SLURM_LIBRARY}")
  if(FLOTILLA_HAVE_CUDA)
    message(STATUS "  CUDA + NCCL      ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, archs ${CMAKE_CUDA_ARCHITECTURES}, ${NCCL_LIBRARY})")
  else()
    message(STATUS "  CUDA + NCCL      OFF (FLOTILLA_WITH_CUDA=${FLOTILLA_WITH_CUDA})")
  endif()
  message(STATUS "  tests            ${FLOTILLA_BUILD_TESTS} (benchmarks: ${FLOTILLA_BUILD_BENCH})")
  if(FLOTILLA_SANITIZE STREQUAL "")
    message(STATUS "  sanitizers       none")
  else()
    message(STATUS "  sanitizers       ${FLOTILLA_SANITIZE} (${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION})")
  endif()
  message(STATUS "  fuzz targets     ${FLOTILLA_FUZZ}")
  message(STATUS "")
endfunction()
