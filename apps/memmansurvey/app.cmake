# Gallatin's graph expansion (Hunter McCoy and Prashant Pandey, "Gallatin: A
# General-Purpose GPU Memory Manager", PPoPP'24; its artifact, the survey's
# benchmarks extended: chillenzer/memmansurvey, MIT): tests/graph_tests/
# graph_expansion_test.cu, the survey's dynamic graph (apps/gpumemmansurvey)
# with insertions only, so every round's adjacency pages outgrow themselves and
# the graph only grows (the paper's "graph expansion"). patches/ routes it
# through heapbench/app.cuh as the survey's port does (frameworks/heapbench/
# Instance.cuh, the same report functions).
hb_app_fetch(memmansurvey GIT_REPOSITORY https://github.com/chillenzer/memmansurvey.git
             GIT_TAG af95962bae73c7cea73d08a1d785b3f529bb825e)
set(hb_mms ${HB_APP_memmansurvey_SOURCE_DIR})
set(hb_mms_graph ${hb_mms}/tests/graph_tests)
# Its .mtx graphs are Git LFS objects (its .gitattributes): a clone without
# git-lfs holds a pointer of three lines, which the test cannot read. Its
# email.mtx is the survey's (apps/gpumemmansurvey) byte for byte: for a pointer,
# the survey's copy is taken into this copy once its sha256 is the pointer's.
set(hb_mms_email ${hb_mms_graph}/data/email.mtx)
file(READ ${hb_mms_email} hb_mms_head LIMIT 200)
if(hb_mms_head MATCHES "^version https://git-lfs")
  string(REGEX MATCH "oid sha256:([0-9a-f]+)" hb_mms_oid "${hb_mms_head}")
  set(hb_mms_oid ${CMAKE_MATCH_1})
  set(hb_mms_found FALSE)
  foreach(dir IN ITEMS "${HB_APP_gpumemmansurvey_SOURCE_DIR}" "${FETCHCONTENT_SOURCE_DIR_GPUMEMMANSURVEY}")
    set(candidate ${dir}/tests/graph_tests/data/email.mtx)
    if(dir AND EXISTS ${candidate})
      file(SHA256 ${candidate} hb_mms_sha)
      if(hb_mms_sha STREQUAL hb_mms_oid)
        file(COPY_FILE ${candidate} ${hb_mms_email})
        set(hb_mms_found TRUE)
        break()
      endif()
    endif()
  endforeach()
  if(NOT hb_mms_found)
    message(FATAL_ERROR "apps/memmansurvey: ${hb_mms_email} is a Git LFS pointer (the repository keeps its .mtx "
                        "files in LFS): fetch it with git-lfs, or put gpumemmansurvey before memmansurvey in "
                        "HEAPBENCH_APPS (its email.mtx is the same file, sha256 ${hb_mms_oid})")
  endif()
endif()
# graph_expansion: the bundled email.mtx graph initialised, then the artifact's
# own expansion (config_update.json: 100 rounds of 10,000 edge insertions, no
# deletion), the grown graph read back by a copy that allocates nothing, hashed,
# freed.
heapbench_add_app(graph_expansion
  SOURCES ${hb_mms_graph}/graph_expansion_test.cu ${hb_mms_graph}/heapbench_report.cpp ${hb_mms_graph}/src/helper/COO.cpp
          ${hb_mms_graph}/src/helper/CSR.cpp ${hb_mms_graph}/src/helper/dCSR.cpp ${hb_mms_graph}/src/helper/Vector.cpp
  INCLUDE_DIRS ${hb_mms}/include ${hb_mms}/frameworks ${hb_mms_graph}/include ${hb_mms_graph}/include/helper ${hb_mms_graph}
  DEFINITIONS TEST_HEAPBENCH HB_GRAPH_CONFIG="${hb_mms_graph}/config_heapbench.json" HB_GRAPH_FILE="${hb_mms_graph}/data/email.mtx")
list(APPEND HB_APP_PROGRAMS graph_expansion)
