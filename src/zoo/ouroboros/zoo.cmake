# Ouroboros (Winter, Mlakar, Parger, Steinberger, ICS'20): header-only, MIT.
# Six adapters, the survey's six instances: pages or chunks in the queues (p, c),
# standard, virtualized-array or virtualized-list queues (s, va, vl).
# docs/zoo.md lists its patches and how its adapters differ from the contract.
hb_zoo_fetch(ouroboros
  GIT_REPOSITORY https://github.com/GPUPeople/Ouroboros.git
  GIT_TAG 9153c55abffb3bceb5aea4028dfcc00439b046d5)
hb_add_adapters("${CMAKE_CURRENT_LIST_DIR}" "HEAPBENCH_ZOO=ouroboros" HB_ZOO_API_NAMES)

function(hb_zoo_ouroboros_device target)
  # SYSTEM: its headers' warnings are not ours to fix.
  target_include_directories(${target} SYSTEM PUBLIC "${HB_ZOO_ouroboros_SOURCE_DIR}/include")
  # Its headers call constexpr host functions from device code throughout, as
  # upstream's and the survey's builds allow with this flag. It permits those
  # calls; it asks for no other code generation (no -rdc, no fast math).
  target_compile_options(${target} PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
endfunction()
