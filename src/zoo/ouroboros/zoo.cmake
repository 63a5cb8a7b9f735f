# Ouroboros (Winter, Mlakar, Parger, Steinberger, ICS'20): header-only, MIT.
# Six adapters, the survey's six instances: pages or chunks in the queues (p, c),
# standard, virtualized-array or virtualized-list queues (s, va, vl).
# docs/zoo.md lists its patches and how its adapters differ from the contract.
hb_zoo_fetch(ouroboros
  GIT_REPOSITORY https://github.com/GPUPeople/Ouroboros.git
  GIT_TAG 9153c55abffb3bceb5aea4028dfcc00439b046d5
  INCLUDE_DIRS include)

function(hb_zoo_ouroboros_device target)
  # Its headers call constexpr host functions from device code throughout, as
  # upstream's and the survey's builds allow with this flag. It permits those
  # calls; it asks for no other code generation (no -rdc, no fast math).
  target_compile_options(${target} PUBLIC $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
endfunction()
