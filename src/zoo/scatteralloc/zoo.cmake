# ScatterAlloc (Steinberger et al., InPar'12) as mallocMC 2.2 packaged it
# (ax3l/scatteralloc): header-only, MIT; needs Boost's headers. Two adapters:
# with the survey's warp coalescing (XMallocSIMD) and without it.
# docs/zoo.md lists its patch and how its adapters differ from the contract.
hb_zoo_fetch(scatteralloc
  GIT_REPOSITORY https://github.com/ax3l/scatteralloc.git
  GIT_TAG 3531c29c0d2a88be45508a789eab624cb0dd4fc5)
find_package(Boost 1.56 QUIET)
if(NOT Boost_FOUND)
  message(FATAL_ERROR "HEAPBENCH_ZOO=scatteralloc: its headers need Boost's (libboost-dev on Debian and Ubuntu; "
                      "or -DBOOST_ROOT=<prefix>), which were not found (docs/zoo.md)")
endif()

function(hb_zoo_scatteralloc_device target)
  # By its absolute path, not an include folder: the mallocmc family's newer
  # mallocMC has the same header paths (detail/scatteralloc.cuh says how the two coexist).
  target_compile_definitions(${target} PUBLIC
    "$<$<COMPILE_LANGUAGE:CUDA>:HB_ZOO_SCATTERALLOC_HEADER=\"${HB_ZOO_scatteralloc_SOURCE_DIR}/src/include/mallocMC/mallocMC.hpp\">")
  # SYSTEM: Boost's headers' warnings are not ours to fix.
  target_include_directories(${target} SYSTEM PUBLIC ${Boost_INCLUDE_DIRS})
endfunction()
