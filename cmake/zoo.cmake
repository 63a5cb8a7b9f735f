# The allocator zoo (docs/zoo.md): published device allocators, fetched at a
# pinned commit when a user names their family in HEAPBENCH_ZOO, patched in a
# copy in the build tree, and registered as adapters like those of
# HEAPBENCH_ALLOCATORS (docs/allocators.md).
#
# Included by CMakeLists.txt at top level (include() opens no scope), after
# hb_add_adapters is defined and before the generated heapbench/user_apis.hpp is
# written. Each family is a folder src/zoo/<family>/ with
#   zoo.cmake  -- calls hb_zoo_fetch(<family> GIT_REPOSITORY <url> GIT_TAG <sha>
#                 [INCLUDE_DIRS <folders of the sources>...]), and may define
#                 hb_zoo_<family>_device(target): what else the device library
#                 needs (definitions, flags, other include dirs), called by
#                 hb_zoo_setup_device() once that target exists;
#   <api>.cuh  -- one adapter per API, registered with hb_add_adapters once its
#                 zoo.cmake has run;
#   patches/*.patch -- our changes, applied in sorted order with `patch -p1`.
# (src/zoo/common/, without a zoo.cmake, is no family: what the owners share.)
#
# Offline, FETCHCONTENT_SOURCE_DIR_<FAMILY> (the family's name uppercased)
# names a local checkout; FetchContent then downloads nothing and runs no patch
# step, so the patches are applied here, the same way for either source, to a
# copy in ${CMAKE_BINARY_DIR}/_zoo/<family>: the checkout is never written to.

set(HEAPBENCH_ZOO "" CACHE STRING
    "Published allocator families (a ;-list) to fetch at their pinned commits and measure (docs/zoo.md)")

include(FetchContent)

set(HB_ZOO_DIR "${CMAKE_CURRENT_LIST_DIR}/../src/zoo")
get_filename_component(HB_ZOO_DIR "${HB_ZOO_DIR}" ABSOLUTE)
file(GLOB HB_ZOO_FAMILY_FILES CONFIGURE_DEPENDS "${HB_ZOO_DIR}/*/zoo.cmake")
set(HB_ZOO_KNOWN "")
foreach(file IN LISTS HB_ZOO_FAMILY_FILES)
  get_filename_component(dir "${file}" DIRECTORY)
  get_filename_component(family "${dir}" NAME)
  list(APPEND HB_ZOO_KNOWN ${family})
endforeach()
list(SORT HB_ZOO_KNOWN)

set(HB_ZOO_API_NAMES "")  # the zoo's adapters, as hb_add_adapters registers them
set(HB_ZOO_FAMILIES "")   # the families built, in HEAPBENCH_ZOO's order
set(HB_ZOO_PINS "")       # "<family>@<sha>" per family, for the summary and the results' context
find_program(HB_PATCH_PROGRAM patch)

# Copies `src` (a family's sources, downloaded or local) to
# ${CMAKE_BINARY_DIR}/_zoo/<family> and applies src/zoo/<family>/patches/*.patch
# there. Idempotent: a stamp beside the copy records the source folder and each
# patch's hash, and the copy is made again only when one of them changes (or
# the copy is gone). Sets <out_var> to the copy's path.
# The programs of HEAPBENCH_APPS (cmake/apps.cmake) use it too, with their own
# folders: PATCH_DIR (default src/zoo/<family>/patches) and COPY_DIR (default
# ${CMAKE_BINARY_DIR}/_zoo).
function(hb_zoo_copy_and_patch family src out_var)
  cmake_parse_arguments(arg "" "PATCH_DIR;COPY_DIR" "" ${ARGN})
  if(NOT arg_PATCH_DIR)
    set(arg_PATCH_DIR "${HB_ZOO_DIR}/${family}/patches")
  endif()
  if(NOT arg_COPY_DIR)
    set(arg_COPY_DIR "${CMAKE_BINARY_DIR}/_zoo")
  endif()
  set(dst "${arg_COPY_DIR}/${family}")
  file(GLOB patches CONFIGURE_DEPENDS "${arg_PATCH_DIR}/*.patch")
  list(SORT patches)
  set(stamp "source ${src}\n")
  foreach(p IN LISTS patches)
    file(SHA256 "${p}" hash)
    string(APPEND stamp "patch ${p} ${hash}\n")
  endforeach()
  set(old_stamp "")
  if(EXISTS "${dst}.stamp" AND IS_DIRECTORY "${dst}")
    file(READ "${dst}.stamp" old_stamp)
  endif()
  if(NOT old_stamp STREQUAL stamp)
    file(REMOVE_RECURSE "${dst}" "${dst}.stamp")
    file(MAKE_DIRECTORY "${dst}")
    file(COPY "${src}/" DESTINATION "${dst}" PATTERN ".git" EXCLUDE)
    if(patches AND NOT HB_PATCH_PROGRAM)
      message(FATAL_ERROR "HEAPBENCH_ZOO=${family}: its patches need the `patch` program, which was not found")
    endif()
    foreach(p IN LISTS patches)
      execute_process(COMMAND "${HB_PATCH_PROGRAM}" -p1 --batch --forward --input=${p}
                      WORKING_DIRECTORY "${dst}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
      if(NOT rc EQUAL 0)
        file(REMOVE_RECURSE "${dst}")
        message(FATAL_ERROR "HEAPBENCH_ZOO=${family}: ${p} does not apply to ${src} "
                            "(is it the pinned commit?):\n${out}${err}")
      endif()
    endforeach()
    file(WRITE "${dst}.stamp" "${stamp}")
  endif()
  list(LENGTH patches n)
  set(HB_ZOO_${family}_PATCHES ${n} PARENT_SCOPE)
  set(${out_var} "${dst}" PARENT_SCOPE)
endfunction()

# hb_fetch_pinned(<name> <url> <sha> <out_var> [NO_SUBMODULES]): declares and
# populates <name>'s sources at <sha>, which must be a full commit (40 hex
# digits: a branch or a short sha could move), FETCHCONTENT_SOURCE_DIR_<NAME>
# naming a local checkout instead, and sets <out_var> to where they are. Only
# populated: SOURCE_SUBDIR names a folder without a CMakeLists.txt, so the
# project's own build is never added to heapbench's. NO_SUBMODULES fetches none
# of its submodules. The zoo's families (hb_zoo_fetch) and the programs of
# HEAPBENCH_APPS (hb_app_fetch, cmake/apps.cmake) are fetched through it.
function(hb_fetch_pinned name url sha out_var)
  cmake_parse_arguments(arg "NO_SUBMODULES" "" "" ${ARGN})
  string(LENGTH "${sha}" n)
  if(NOT url OR NOT sha MATCHES "^[0-9a-f]+$" OR NOT n EQUAL 40)
    message(FATAL_ERROR "${name}: give GIT_REPOSITORY and GIT_TAG, a full commit (40 hex digits), not '${sha}'")
  endif()
  set(submodules "")
  if(arg_NO_SUBMODULES)
    set(submodules GIT_SUBMODULES "")
  endif()
  FetchContent_Declare(${name} GIT_REPOSITORY "${url}" GIT_TAG "${sha}" ${submodules}
                       SOURCE_SUBDIR heapbench-populate-only)
  FetchContent_MakeAvailable(${name})
  string(TOLOWER "${name}" lc)
  set(${out_var} "${${lc}_SOURCE_DIR}" PARENT_SCOPE)
endfunction()

# hb_zoo_fetch(<family> GIT_REPOSITORY <url> GIT_TAG <40-hex sha> [INCLUDE_DIRS <dir>...]):
# declares and populates the family's sources (FETCHCONTENT_SOURCE_DIR_<FAMILY>
# for a local checkout), makes the patched copy, and sets
# HB_ZOO_<family>_SOURCE_DIR to it and HB_ZOO_<family>_COMMIT to the pin.
# INCLUDE_DIRS, relative to the sources, become SYSTEM include folders of the
# device library (their warnings are not ours to fix).
function(hb_zoo_fetch family)
  cmake_parse_arguments(arg "" "GIT_REPOSITORY;GIT_TAG" "INCLUDE_DIRS" ${ARGN})
  hb_fetch_pinned(${family} "${arg_GIT_REPOSITORY}" "${arg_GIT_TAG}" src)
  string(TOUPPER "${family}" uc)
  if(FETCHCONTENT_SOURCE_DIR_${uc})
    set(origin "local ${FETCHCONTENT_SOURCE_DIR_${uc}}")
  else()
    set(origin "${arg_GIT_REPOSITORY}")
  endif()
  hb_zoo_copy_and_patch(${family} "${src}" dir)
  set(HB_ZOO_${family}_SOURCE_DIR "${dir}" PARENT_SCOPE)
  set(HB_ZOO_${family}_COMMIT "${arg_GIT_TAG}" PARENT_SCOPE)
  set(HB_ZOO_${family}_ORIGIN "${origin}" PARENT_SCOPE)
  set(HB_ZOO_${family}_PATCHES ${HB_ZOO_${family}_PATCHES} PARENT_SCOPE)
  list(TRANSFORM arg_INCLUDE_DIRS PREPEND "${dir}/")
  set(HB_ZOO_${family}_INCLUDE_DIRS "${arg_INCLUDE_DIRS}" PARENT_SCOPE)
endfunction()

foreach(family IN LISTS HEAPBENCH_ZOO)
  if(NOT family IN_LIST HB_ZOO_KNOWN)
    message(FATAL_ERROR "HEAPBENCH_ZOO=${HEAPBENCH_ZOO}: no allocator family named '${family}'; "
                        "the known ones are: ${HB_ZOO_KNOWN} (docs/zoo.md)")
  endif()
  if(family IN_LIST HB_ZOO_FAMILIES)
    continue()
  endif()
  list(APPEND HB_ZOO_FAMILIES ${family})
  include("${HB_ZOO_DIR}/${family}/zoo.cmake")
  if(NOT HB_ZOO_${family}_COMMIT)
    message(FATAL_ERROR "${HB_ZOO_DIR}/${family}/zoo.cmake did not call hb_zoo_fetch(${family} ...)")
  endif()
  hb_add_adapters("${HB_ZOO_DIR}/${family}" "HEAPBENCH_ZOO=${family}" HB_ZOO_API_NAMES)
  list(APPEND HB_ZOO_PINS "${family}@${HB_ZOO_${family}_COMMIT}")
  message(STATUS "heapbench: zoo family ${family} @ ${HB_ZOO_${family}_COMMIT} (${HB_ZOO_${family}_ORIGIN}), "
                 "${HB_ZOO_${family}_PATCHES} patch(es), built from ${HB_ZOO_${family}_SOURCE_DIR}")
endforeach()
message(STATUS "heapbench: zoo (HEAPBENCH_ZOO=${HEAPBENCH_ZOO}; known: ${HB_ZOO_KNOWN}): ${HB_ZOO_API_NAMES}")

# Called by CMakeLists.txt once the device library exists: each family's
# INCLUDE_DIRS and its hb_zoo_<family>_device(<target>) add what its headers
# need (PUBLIC, since every CUDA file that includes cases/api_list.hpp
# compiles the adapters).
function(hb_zoo_setup_device target)
  foreach(family IN LISTS HB_ZOO_FAMILIES)
    if(HB_ZOO_${family}_INCLUDE_DIRS)
      target_include_directories(${target} SYSTEM PUBLIC ${HB_ZOO_${family}_INCLUDE_DIRS})
    endif()
    if(COMMAND hb_zoo_${family}_device)
      cmake_language(CALL hb_zoo_${family}_device ${target})
    endif()
  endforeach()
endfunction()
