# DynaSOAr (Matthias Springer and Hidehiko Masuhara, "DynaSOAr: A Parallel
# Memory Allocator for Object-oriented Programming on GPUs with Efficient
# Memory Access", ECOOP'19; prg-titech/dynasoar, MIT): its applications, whose
# objects come from the allocator of a configuration (example/configuration/
# <alloc>/allocator_config.h). patches/ adds a configuration "heapbench",
# modelled on configuration/cuda/, that allocates them through
# heapbench/app.cuh, and makes what CUDA 13 and sm_90 need (docs/apps.md).
# Its submodules (lib/cub, halloc, mallocMC) are not fetched: CUDA 13 ships
# CUB in CCCL, and the other allocators are heapbench's own.
hb_app_fetch(dynasoar GIT_REPOSITORY https://github.com/prg-titech/dynasoar.git
             GIT_TAG a4f956cd13160eb566e8a0caef6aad1e59c26da9)
set(hb_dynasoar ${HB_APP_dynasoar_SOURCE_DIR})
# The flags of its build_scripts/ (--expt-extended-lambda, 64 registers at most,
# its one diagnostic silenced), for sm_90 and C++17 as heapbench builds.
set(hb_dynasoar_options $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda> $<$<COMPILE_LANGUAGE:CUDA>:-maxrregcount=64>
                         $<$<COMPILE_LANGUAGE:CUDA>:--diag-suppress=1427>)
set(hb_dynasoar_includes ${hb_dynasoar}/example/configuration/heapbench ${hb_dynasoar})
# The heap when the runner gives none (HEAPBENCH_APP_HEAP_MIB): 512 MiB.
set(hb_dynasoar_heap PARAM_HEAP_SIZE=536870912ULL)

# wa_tor: fish and sharks on a 256 x 256 torus for 200 steps (example/wa-tor,
# dynasoar_no_cell, the paper's variant): a fish or shark born is an
# allocation, one eaten or starved a free; parallel_do enumerates the agents of
# a type through the adapter's pointer arrays. Its output: each cell's state
# (free, fish, shark) at the end.
heapbench_add_app(wa_tor
  SOURCES ${hb_dynasoar}/example/wa-tor/dynasoar_no_cell/wator.cu
  INCLUDE_DIRS ${hb_dynasoar_includes}
  DEFINITIONS PARAM_SIZE_X=256 PARAM_SIZE_Y=256 PARAM_NUM_ITER=200 PARAM_MAX_OBJ=262144 ${hb_dynasoar_heap}
  OPTIONS ${hb_dynasoar_options})
list(APPEND HB_APP_PROGRAMS wa_tor)

# generation: a "generations" cellular automaton (Conway's rules with 255
# states of dying) on a 500 x 500 grid from five bursts (example/generation),
# 300 steps: a candidate cell or an alive one born is an allocation, the one
# it replaces a free; the grid's 250,000 cells are objects too. Its output:
# each cell's state at the end.
heapbench_add_app(generation
  SOURCES ${hb_dynasoar}/example/generation/dynasoar/generation.cu ${hb_dynasoar}/example/generation/dataset_loader.cu
  INCLUDE_DIRS ${hb_dynasoar_includes}
  DEFINITIONS PARAM_SIZE=500 PARAM_NUM_ITER=300 PARAM_MAX_OBJ=1048576 ${hb_dynasoar_heap}
  OPTIONS ${hb_dynasoar_options})
list(APPEND HB_APP_PROGRAMS generation)

# traffic: a Nagel-Schreckenberg traffic simulation on a random street network
# of 500 intersections (example/traffic; about 130,000 street cells, each an
# object), 300 steps: a car made by a producer cell is an allocation, a car
# that reached a sink or target a free. Its output: the cars at the end (each
# one's place, velocity and maximum, summed as a multiset).
heapbench_add_app(traffic
  SOURCES ${hb_dynasoar}/example/traffic/dynasoar/traffic.cu
  INCLUDE_DIRS ${hb_dynasoar_includes}
  DEFINITIONS PARAM_SIZE=500 PARAM_NUM_ITER=300 PARAM_MAX_OBJ=524288 ${hb_dynasoar_heap}
  OPTIONS ${hb_dynasoar_options})
list(APPEND HB_APP_PROGRAMS traffic)

# nbody: 8,192 bodies under gravity for 50 steps (example/nbody), the control:
# the bodies are allocated once before the timed section (parallel_new) and
# nothing in the loop, so an allocator changes only where the bodies lie for
# the kernels that read them (each body walks all the others). Its output:
# the bodies' places and velocities at the end, bit for bit.
heapbench_add_app(nbody
  SOURCES ${hb_dynasoar}/example/nbody/dynasoar/nbody.cu
  INCLUDE_DIRS ${hb_dynasoar_includes}
  DEFINITIONS PARAM_SIZE=8192 PARAM_NUM_ITER=50 PARAM_MAX_OBJ=16384 ${hb_dynasoar_heap}
  OPTIONS ${hb_dynasoar_options})
list(APPEND HB_APP_PROGRAMS nbody)

# linux_scalability: the paper's allocation benchmark (example/linux-
# scalability): 64 x 256 threads each make 64 objects (8 doubles each) in one
# kernel and destroy them in the next -- allocation and nothing else, through
# the adapter's bookkeeping. Its output: the objects' count and how many
# overlapped another (all were alive at once).
heapbench_add_app(linux_scalability
  SOURCES ${hb_dynasoar}/example/linux-scalability/dynasoar/linux_scalability.cu
  INCLUDE_DIRS ${hb_dynasoar_includes}
  DEFINITIONS PARAM_SIZE=64 PARAM_MAX_OBJ=1048576 ${hb_dynasoar_heap}
  OPTIONS ${hb_dynasoar_options})
list(APPEND HB_APP_PROGRAMS linux_scalability)
