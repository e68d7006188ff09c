# FlotillaInstall.cmake — what `cmake --install BUILD [--prefix P]` puts where (docs/install.md):
#   bin/                                 flotilla, flotilla-worker, flotilla-kernel, flotilla-pairs,
#                                        flotilla-per-file, flotilla-propose-agent
#                                        (and flotilla-synthetic when the benchmarks are built)
#   lib/python3/dist-packages/           flotilla_results.py (FLOTILLA_INSTALL_PYTHONDIR)
#   share/man/man1/                      flotilla.1, flotilla-COMMAND.1, flotilla-results-SUB.1,
#                                        flotilla-kernel.1 (from its --help)
#   share/bash-completion/completions/   flotilla
#   share/zsh/site-functions/            _flotilla
#                                        (and, built with the tests, the examples' flotilla-sample-suite
#                                        and flotilla-example-checker)
#   share/doc/flotilla/                  README.md, docs/*.md, examples/ (the campaigns and their files)
#   include/flotilla/results/, lib/      the results library, for find_package(flotilla)
#   lib/cmake/flotilla/                  flotillaConfig.cmake: imported target flotilla::results
# Man pages and completions are written at build time by the built `flotilla help --man DIR` and
# `flotilla help --completion SHELL FILE`, from the same tables as every --help.
# Included last from the top-level CMakeLists.txt, once every target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FLOTILLA_INSTALL_PYTHONDIR "lib/python3/dist-packages" CACHE STRING
    "Where flotilla_results.py is installed, relative to the prefix (on PYTHONPATH unless the prefix is /usr)")
set(FLOTILLA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/flotilla" CACHE STRING
    "Where flotillaConfig.cmake is installed, relative to the prefix")

# The programs. flotilla finds the others beside itself (it puts its own folder first on the
# tasks' PATH), so they go to one folder. Installed binaries keep the run path of libraries
# outside the system's (the CUDA toolkit's, a non-system MPI).
set(_flotilla_programs flotilla flotilla-worker flotilla-kernel flotilla-pairs flotilla-per-file)
if(TARGET flotilla-synthetic)
  list(APPEND _flotilla_programs flotilla-synthetic)
endif()
# The example campaigns' own programs (share/doc/flotilla/examples: compat.ini, per_file.ini),
# built with the tests: beside flotilla, on the tasks' PATH as in the build tree.
foreach(_example IN ITEMS gtest_samples example_checker)
  if(TARGET ${_example})
    list(APPEND _flotilla_programs ${_example})
  endif()
endforeach()
set_target_properties(${_flotilla_programs} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS ${_flotilla_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The adapter that lets a coding agent's command line be a proposer (docs/propose.md).
install(PROGRAMS "${PROJECT_SOURCE_DIR}/scripts/propose/flotilla-propose-agent" DESTINATION ${CMAKE_INSTALL_BINDIR})

# Man pages and completions, generated from the option tables by the flotilla just built.
set(_flotilla_generated "${PROJECT_BINARY_DIR}/share")
set(_flotilla_bash "${_flotilla_generated}/bash-completion/completions/flotilla")
set(_flotilla_zsh "${_flotilla_generated}/zsh/site-functions/_flotilla")
add_custom_command(
  OUTPUT "${_flotilla_generated}/man1.stamp" "${_flotilla_bash}" "${_flotilla_zsh}"
  COMMAND ${CMAKE_COMMAND} -E rm -rf "${_flotilla_generated}/man/man1"
  COMMAND flotilla help --man "${_flotilla_generated}/man/man1" > /dev/null
  COMMAND ${CMAKE_COMMAND} -E make_directory "${_flotilla_generated}/bash-completion/completions"
                                             "${_flotilla_generated}/zsh/site-functions"
  COMMAND flotilla help --completion bash "${_flotilla_bash}"
  COMMAND flotilla help --completion zsh "${_flotilla_zsh}"
  COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:flotilla-kernel> -DNAME=flotilla-kernel
          "-DSUMMARY=run one variant of a built-in kernel family and print its metrics" -DVERSION=${PROJECT_VERSION}
          -DOUTPUT=${_flotilla_generated}/man/man1/flotilla-kernel.1 -P ${PROJECT_SOURCE_DIR}/cmake/FlotillaHelpToMan.cmake
  COMMAND ${CMAKE_COMMAND} -E touch "${_flotilla_generated}/man1.stamp"
  DEPENDS flotilla flotilla-kernel "${PROJECT_SOURCE_DIR}/cmake/FlotillaHelpToMan.cmake"
  COMMENT "Generating flotilla's man pages and shell completions from its option tables")
add_custom_target(flotilla_manuals ALL DEPENDS "${_flotilla_generated}/man1.stamp")
install(DIRECTORY "${_flotilla_generated}/man/man1" DESTINATION ${CMAKE_INSTALL_MANDIR})
install(FILES "${_flotilla_bash}" DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES "${_flotilla_zsh}" DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)

# The pandas reader, and the documentation with the example campaigns. README.md's links point
# into docs/, so the folder keeps its name.
install(FILES "${PROJECT_SOURCE_DIR}/results/python/flotilla_results.py" DESTINATION ${FLOTILLA_INSTALL_PYTHONDIR})
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs" DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")
# The pages link to the measurements and the verification notes beside them: they come along,
# so no link of an installed page is dead.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/bench/" DESTINATION ${CMAKE_INSTALL_DOCDIR}/bench
        FILES_MATCHING PATTERN "RESULTS.md")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tests/" DESTINATION ${CMAKE_INSTALL_DOCDIR}/tests
        FILES_MATCHING PATTERN "README.md")
# The example campaigns with the files they read (sources, patches, suites, proposers): each
# names its own folder as its working folder (campaign.workdir = .), so it runs from the prefix.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/configs/" DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        USE_SOURCE_PERMISSIONS PATTERN "__pycache__" EXCLUDE PATTERN ".pytest_cache" EXCLUDE)

# The CMake package: flotilla::results with its public headers.
set_target_properties(flotilla_results PROPERTIES EXPORT_NAME results)
install(TARGETS flotilla_results EXPORT flotillaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/results/include/flotilla" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT flotillaTargets NAMESPACE flotilla:: DESTINATION ${FLOTILLA_INSTALL_CMAKEDIR})
# The minimum versions FlotillaDependencies.cmake asks for.
set(FLOTILLA_HDF5_MIN 1.10)
set(FLOTILLA_FMT_MIN 9)
set(FLOTILLA_JSON_MIN 3.10)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/flotillaConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/flotillaConfig.cmake"
                              INSTALL_DESTINATION ${FLOTILLA_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/flotillaConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)   # 0.x: a minor version may break
install(FILES "${PROJECT_BINARY_DIR}/flotillaConfig.cmake" "${PROJECT_BINARY_DIR}/flotillaConfigVersion.cmake"
        DESTINATION ${FLOTILLA_INSTALL_CMAKEDIR})
