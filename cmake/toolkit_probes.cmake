# What the CUDA toolkit in use can build, asked of the compiler itself: the
# same nvcc, CMAKE_CUDA_FLAGS and toolkit include directories that build
# heapbench_device compile a probe file. Reading a version table would miss the
# case that matters: a CCCL put in front of the toolkit's own (CCCL 2.x headers
# from the nvidia-cuda-cccl-cu12 wheel with a CUDA 13 nvcc, as
# scripts/toolkits builds in CI).
#
# Results are cached per (compiler, flags, architectures), so a reconfigure
# costs nothing unless one of those changed.

set(HB_PROBE_DIR ${CMAKE_CURRENT_LIST_DIR}/probes)

function(hb_probe_key out)
  set(${out} "${CMAKE_CUDA_COMPILER}|${CMAKE_CUDA_COMPILER_VERSION}|${CMAKE_CUDA_FLAGS}|${CMAKE_CUDA_ARCHITECTURES}|${CUDAToolkit_INCLUDE_DIRS}" PARENT_SCOPE)
endfunction()

# Compiles probes/<name>.cu into a static library (no link, nothing run: the
# build machines have no GPU). Sets <name>_OK and, with COPY, <name>_LIB.
function(hb_probe_compile name)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  set(lib ${CMAKE_CURRENT_BINARY_DIR}/probes/${name}.a)
  file(REMOVE ${lib})
  try_compile(ok ${CMAKE_CURRENT_BINARY_DIR}/probes/${name}
    SOURCES ${HB_PROBE_DIR}/${name}.cu
    # CMake 3.25 leaves the archiver tools empty in a CUDA-only try_compile.
    CMAKE_FLAGS "-DCMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}" "-DCMAKE_AR=${CMAKE_AR}" "-DCMAKE_RANLIB=${CMAKE_RANLIB}"
    LINK_LIBRARIES CUDA::cudart
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    NO_CACHE
    OUTPUT_VARIABLE log
    COPY_FILE ${lib})
  if(ok)
    set(${name}_OK 1 PARENT_SCOPE)
  else()
    set(${name}_OK 0 PARENT_SCOPE)
  endif()
  set(${name}_LIB ${lib} PARENT_SCOPE)
  set(${name}_LOG "${log}" PARENT_SCOPE)
endfunction()

# HB_CCCL_VERSION: "3.5.0", or "unknown" (CCCL older than 2.2 has no CCCL_VERSION).
# HB_CUDA_STD_ALIGNED_ALLOC_ON_DEVICE: 1 where a kernel can call cuda::std::aligned_alloc.
function(hb_probe_toolkit)
  hb_probe_key(key)
  if(DEFINED CACHE{HB_PROBE_KEY} AND HB_PROBE_KEY STREQUAL key)
    return()
  endif()

  set(version unknown)
  hb_probe_compile(cccl_version)
  if(cccl_version_OK)
    file(STRINGS ${cccl_version_LIB} found REGEX "HEAPBENCH_CCCL_VERSION\\[[0-9]+\\]" LIMIT_COUNT 1)
    if(found MATCHES "HEAPBENCH_CCCL_VERSION\\[([0-9]+)\\]")
      math(EXPR major "${CMAKE_MATCH_1} / 1000000")
      math(EXPR minor "(${CMAKE_MATCH_1} / 1000) % 1000")
      math(EXPR patch "${CMAKE_MATCH_1} % 1000")
      set(version "${major}.${minor}.${patch}")
    endif()
  else()
    message(FATAL_ERROR "heapbench: the CUDA compiler cannot compile a file that includes <cuda/std/version>:\n${cccl_version_LOG}")
  endif()

  hb_probe_compile(cuda_std_aligned_alloc)
  set(HB_CCCL_VERSION ${version} CACHE INTERNAL "CCCL version the CUDA compiler sees")
  set(HB_CUDA_STD_ALIGNED_ALLOC_ON_DEVICE ${cuda_std_aligned_alloc_OK} CACHE INTERNAL
      "Whether a kernel can call cuda::std::aligned_alloc")
  set(HB_PROBE_KEY "${key}" CACHE INTERNAL "What the toolkit probes were run with")
endfunction()
