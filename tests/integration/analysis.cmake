# analysis.cmake — `flotilla results` (issue 8) against campaign files produced here: every
# subcommand, every plot kind, and the pandas reader checked against the CLI.
# Included from CMakeLists.txt, whose FLOTILLA_EXE, WORK, HERE and SYSTEM_PYTHON it uses.
set(_analysis ${WORK}/analysis)
set(_a ${_analysis}/analysis_a.h5)
set(_b ${_analysis}/analysis_b.h5)
set(_crashed ${_analysis}/crashed.h5)

# Fixtures: analysis.ini as is (A); the same scaled by 2 with budget 5 (B, for compare); a
# campaign SIGKILLed mid-batch (for incomplete files).
add_test(NAME analysis_a_run
  COMMAND sh -c "mkdir -p '${_analysis}' && rm -f '${_a}' && '${FLOTILLA_EXE}' run '${HERE}/analysis.ini' --campaign.results='${_a}' --no-live")
add_test(NAME analysis_b_run
  COMMAND ${CMAKE_COMMAND} -E env FLOTILLA_TEST_FACTOR=2
    sh -c "mkdir -p '${_analysis}' && rm -f '${_b}' && '${FLOTILLA_EXE}' run '${HERE}/analysis.ini' --campaign.results='${_b}' --search.budget=5 --no-live")
add_test(NAME analysis_crashed_run
  COMMAND sh -c "mkdir -p '${_analysis}' && bash '${HERE}/make_crashed_campaign.sh' '${FLOTILLA_EXE}' '${HERE}/resume.ini' '${_crashed}'")
set_tests_properties(analysis_a_run PROPERTIES FIXTURES_SETUP analysis_a LABELS integration)
set_tests_properties(analysis_b_run PROPERTIES FIXTURES_SETUP analysis_b LABELS integration)
set_tests_properties(analysis_crashed_run PROPERTIES FIXTURES_SETUP analysis_crashed LABELS integration TIMEOUT 120)
# One parameter of each kind, for the reader's typed parameter columns.
set(_typed ${_analysis}/typed_params.h5)
add_test(NAME analysis_typed_params_run
  COMMAND sh -c "mkdir -p '${_analysis}' && rm -f '${_typed}' && '${FLOTILLA_EXE}' run '${HERE}/typed_params.ini' --campaign.results='${_typed}' --no-live")
set_tests_properties(analysis_typed_params_run PROPERTIES FIXTURES_SETUP analysis_typed LABELS integration)

# Campaigns that proposers improved (docs/propose.md): configs/tdd.ini (a chain of fixes counted by
# tests.passed, one rolled back) and configs/propose.ini (builds; a proposal rolled back, one that
# does not compile, a chain of two). Both run from the source tree, where their proposers live.
set(_tdd ${_analysis}/tdd.h5)
set(_propose ${_analysis}/propose.h5)
add_test(NAME analysis_tdd_run
  COMMAND sh -c "mkdir -p '${_analysis}' && rm -rf '${_tdd}' '${_tdd}'.* && '${FLOTILLA_EXE}' run configs/tdd.ini --campaign.results='${_tdd}' --no-live"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME analysis_propose_run
  COMMAND sh -c "mkdir -p '${_analysis}' && rm -rf '${_propose}' '${_propose}'.* && '${FLOTILLA_EXE}' run configs/propose.ini --campaign.results='${_propose}' --no-live"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(analysis_tdd_run PROPERTIES FIXTURES_SETUP analysis_tdd LABELS integration TIMEOUT 300)
set_tests_properties(analysis_propose_run PROPERTIES FIXTURES_SETUP analysis_propose LABELS integration TIMEOUT 300)

# Builds shared across rounds (build_stage.ini, one slot, two candidates a round), and a campaign
# resumed 2 s after it finished, for the timeline.
set(_builds ${_analysis}/builds/builds.h5)
set(_resumed ${_analysis}/resumed.h5)
add_test(NAME analysis_builds_run
  COMMAND sh -c "rm -rf '${_analysis}/builds' && mkdir -p '${_analysis}/builds' && cd '${_analysis}/builds' && '${FLOTILLA_EXE}' run '${HERE}/build_stage.ini' --campaign.results='${_builds}' --resources.slots=1 --search.batch=2 --no-live")
add_test(NAME analysis_resumed_run
  COMMAND sh -c "mkdir -p '${_analysis}' && rm -f '${_resumed}' && '${FLOTILLA_EXE}' run '${HERE}/rollback.ini' --campaign.results='${_resumed}' --search.budget=5 --no-live && sleep 2 && '${FLOTILLA_EXE}' run '${HERE}/rollback.ini' --campaign.results='${_resumed}' --search.budget=15 --no-live")
set_tests_properties(analysis_builds_run PROPERTIES FIXTURES_SETUP analysis_builds LABELS integration TIMEOUT 120)
set_tests_properties(analysis_resumed_run PROPERTIES FIXTURES_SETUP analysis_resumed LABELS integration TIMEOUT 120)

set(_fixtures "analysis_a;analysis_b;analysis_crashed")
foreach(check summary history top compare pareto params export crashed errors)
  add_test(NAME results_cli_${check}
    COMMAND ${SYSTEM_PYTHON} ${HERE}/check_results_cli.py ${FLOTILLA_EXE} ${check} ${_a} ${_b} ${_crashed} ${_analysis})
  set_tests_properties(results_cli_${check} PROPERTIES FIXTURES_REQUIRED "${_fixtures}" LABELS integration)
endforeach()

# Plots need gnuplot (Debian's gnuplot-nox, from scripts/install-deps.sh).
find_program(FLOTILLA_GNUPLOT gnuplot)
if(FLOTILLA_GNUPLOT)
  foreach(kind convergence params timeline tests)
    add_test(NAME results_plot_${kind}
      COMMAND ${SYSTEM_PYTHON} ${HERE}/check_plots.py ${FLOTILLA_EXE} ${_a} ${kind} ${_analysis}/plots)
  endforeach()
  add_test(NAME results_plot_pareto
    COMMAND ${SYSTEM_PYTHON} ${HERE}/check_plots.py ${FLOTILLA_EXE} ${_a} pareto ${_analysis}/plots
            --objectives score:max,mem_mb:min)
  add_test(NAME results_plot_timeline_of_crashed_campaign
    COMMAND ${SYSTEM_PYTHON} ${HERE}/check_plots.py ${FLOTILLA_EXE} ${_crashed} timeline ${_analysis}/plots-crashed)
  add_test(NAME results_plot_lineage
    COMMAND ${SYSTEM_PYTHON} ${HERE}/check_plots.py ${FLOTILLA_EXE} ${_tdd} lineage ${_analysis}/plots-tdd)
  set_tests_properties(results_plot_lineage PROPERTIES FIXTURES_REQUIRED analysis_tdd LABELS integration)
  set_tests_properties(results_plot_convergence results_plot_params results_plot_timeline results_plot_tests
    results_plot_pareto results_plot_timeline_of_crashed_campaign
    PROPERTIES FIXTURES_REQUIRED "${_fixtures}" LABELS integration)
  # What each chart shows, from the data it was drawn from (--json's `chart`), not only its size.
  set(_outlier ${_analysis}/outlier.h5)
  add_test(NAME results_chart_outlier_run
    COMMAND sh -c "mkdir -p '${_analysis}' && rm -f '${_outlier}' && '${FLOTILLA_EXE}' run '${HERE}/outlier.ini' --campaign.results='${_outlier}' --no-live")
  set_tests_properties(results_chart_outlier_run PROPERTIES FIXTURES_SETUP chart_outlier LABELS integration)
  foreach(check rollback_convergence rollback_tests rollback_timeline outlier_convergence analysis_pareto analysis_params
                analysis_lineage tdd_lineage propose_lineage tdd_convergence propose_convergence builds_timeline
                resumed_timeline)
    if(check MATCHES "^rollback_")
      set(_file ${WORK}/rollback.h5)
      set(_needs rollback)
    elseif(check MATCHES "^outlier_")
      set(_file ${_outlier})
      set(_needs chart_outlier)
    elseif(check MATCHES "^builds_")
      set(_file ${_builds})
      set(_needs analysis_builds)
    elseif(check MATCHES "^resumed_")
      set(_file ${_resumed})
      set(_needs analysis_resumed)
    elseif(check MATCHES "^tdd_")
      set(_file ${_tdd})
      set(_needs analysis_tdd)
    elseif(check MATCHES "^propose_")
      set(_file ${_propose})
      set(_needs analysis_propose)
    else()
      set(_file ${_a})
      set(_needs analysis_a)
    endif()
    add_test(NAME results_chart_${check}
      COMMAND ${SYSTEM_PYTHON} ${HERE}/check_chart_content.py ${FLOTILLA_EXE} ${_file} ${check} ${_analysis}/charts)
    set_tests_properties(results_chart_${check} PROPERTIES FIXTURES_REQUIRED ${_needs} LABELS integration)
  endforeach()
else()
  message(STATUS "integration: no gnuplot, skipping the results_plot_* tests (install gnuplot-nox)")
endif()

# The pandas reader (results/python) agrees with the CLI, types parameter columns from the
# recorded space, and the docs/analysis.md example runs.
add_test(NAME results_python_reader_agrees_with_cli
  COMMAND ${SYSTEM_PYTHON} ${HERE}/check_python_reader.py ${FLOTILLA_EXE} ${PROJECT_SOURCE_DIR}/results/python
          --typed ${_typed} --tdd ${_tdd} ${_a} ${_b} ${_crashed} ${_propose})
add_test(NAME results_python_doc_example
  COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_SOURCE_DIR}/results/python
    ${SYSTEM_PYTHON} ${HERE}/run_analysis_doc_example.py ${PROJECT_SOURCE_DIR}/docs/analysis.md ${_a})
set_tests_properties(results_python_doc_example PROPERTIES FIXTURES_REQUIRED "${_fixtures}" LABELS integration)
set_tests_properties(results_python_reader_agrees_with_cli
  PROPERTIES FIXTURES_REQUIRED "${_fixtures};analysis_typed;analysis_tdd;analysis_propose" LABELS integration)
