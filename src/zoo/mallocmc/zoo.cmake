# mallocMC (alpaka-group/mallocMC, MIT): ScatterAlloc's algorithm as a policy
# of a policy-based allocator, on alpaka (bundled in its alpaka/ folder).
# docs/zoo.md lists what its adapters measure and how they differ from the contract.
hb_zoo_fetch(mallocmc
  GIT_REPOSITORY https://github.com/alpaka-group/mallocMC.git
  GIT_TAG bffe2aa2da5e83d356ff8d32f392935b8f7a59fa
  INCLUDE_DIRS src/include alpaka/include)
# alpaka reads the Boost.Predef headers (Debian: libboost-dev).
find_path(HB_ZOO_BOOST_PREDEF_INCLUDE boost/predef.h)
if(NOT HB_ZOO_BOOST_PREDEF_INCLUDE)
  message(FATAL_ERROR "HEAPBENCH_ZOO=mallocmc: its bundled alpaka needs the Boost headers (boost/predef.h; "
                      "Debian/Ubuntu: apt-get install libboost-dev), or name their folder with "
                      "-DHB_ZOO_BOOST_PREDEF_INCLUDE=<dir>")
endif()
function(hb_zoo_mallocmc_device target)
  target_include_directories(${target} SYSTEM PUBLIC "${HB_ZOO_BOOST_PREDEF_INCLUDE}")
  # alpaka's CUDA back end; its random numbers without cuRAND (the allocator draws none).
  target_compile_definitions(${target} PUBLIC
    "$<$<COMPILE_LANGUAGE:CUDA>:ALPAKA_ACC_GPU_CUDA_ENABLED;ALPAKA_DISABLE_VENDOR_RNG>")
  # alpaka calls constexpr host functions from device code.
  target_compile_options(${target} PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
endfunction()
