# The survey's dynamic graph (Winter, Parger, Mlakar, Steinberger: "Are dynamic
# memory managers on GPUs slow? A survey and benchmarks", PPoPP'21;
# GPUPeople/GPUMemManSurvey, MIT): tests/graph_tests, adjacency pages grown by
# malloc + copy + free on every insertion, through a memory-manager interface
# that patches/ gives a heapbench implementation (frameworks/heapbench/Instance.cuh).
hb_app_fetch(gpumemmansurvey GIT_REPOSITORY https://github.com/GPUPeople/GPUMemManSurvey.git
             GIT_TAG 35f933be92a0ef3811a584629c44a782bb3843f5)
set(hb_survey ${HB_APP_gpumemmansurvey_SOURCE_DIR})
set(hb_graph ${hb_survey}/tests/graph_tests)
# survey_graph: the bundled email.mtx graph initialised, then 20 rounds of
# 10,000 edge insertions and their deletions (config_heapbench.json), the
# graph read back by a copy that allocates nothing, hashed, freed.
heapbench_add_app(survey_graph
  SOURCES ${hb_graph}/graph_test.cu ${hb_graph}/heapbench_report.cpp ${hb_graph}/src/helper/COO.cpp
          ${hb_graph}/src/helper/CSR.cpp ${hb_graph}/src/helper/dCSR.cpp ${hb_graph}/src/helper/Vector.cpp
  INCLUDE_DIRS ${hb_survey}/include ${hb_survey}/frameworks ${hb_graph}/include ${hb_graph}/include/helper ${hb_graph}
  DEFINITIONS TEST_HEAPBENCH HB_GRAPH_CONFIG="${hb_graph}/config_heapbench.json" HB_GRAPH_FILE="${hb_graph}/data/email.mtx")
list(APPEND HB_APP_PROGRAMS survey_graph)
