# Programs that allocate through heapbench/app.cuh (docs/apps.md), built once
# per allocator: heapbench_add_app(<name> SOURCES <files>... [APIS <api>...]
# [INCLUDE_DIRS <dirs>...] [DEFINITIONS <defs>...] [OUTPUT_DIR <dir>]) makes one
# executable per API, <name>_<api>, written to <OUTPUT_DIR, default
# build/apps/<name>>/<api>, compiled with HEAPBENCH_APP_API="<api>"; it sets
# HB_APP_<name>_TARGETS to the targets it made.
#
# The APIs, unless APIS names them: every allocator of this build that a program
# can run on -- CUDA's malloc, bump (for a program that never frees), the
# bundled adapters (slab), the zoo's (HEAPBENCH_ZOO) and your own
# (HEAPBENCH_ALLOCATORS) -- or HEAPBENCH_APP_APIS where it is set.
# aligned, cuda_std_aligned and new are CUDA's heap again through another call,
# and the call paths are measurements of calls, not allocators: not included.
#
# Included by CMakeLists.txt after heapbench_device exists.

set(HEAPBENCH_APP_APIS "" CACHE STRING
    "Allocators (a ;-list of API names) to build each heapbench_add_app() program for; empty: every one (docs/apps.md)")

function(hb_app_default_apis out_var)
  if(HEAPBENCH_APP_APIS)
    set(apis ${HEAPBENCH_APP_APIS})
  else()
    set(apis malloc bump ${HB_BUNDLED_API_NAMES} ${HB_ZOO_API_NAMES} ${HB_USER_API_NAMES})
  endif()
  set(${out_var} ${apis} PARENT_SCOPE)
endfunction()

function(heapbench_add_app name)
  cmake_parse_arguments(A "" "OUTPUT_DIR" "SOURCES;APIS;INCLUDE_DIRS;DEFINITIONS;OPTIONS;LIBRARIES" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "heapbench_add_app(${name}): no SOURCES")
  endif()
  if(NOT A_APIS)
    hb_app_default_apis(A_APIS)
  endif()
  if(NOT A_OUTPUT_DIR)
    set(A_OUTPUT_DIR ${CMAKE_BINARY_DIR}/apps/${name})
  endif()
  set(known malloc bump ${HB_BUNDLED_API_NAMES} ${HB_ZOO_API_NAMES} ${HB_USER_API_NAMES})
  set(targets "")
  foreach(api IN LISTS A_APIS)
    if(NOT api IN_LIST known)
      message(FATAL_ERROR "heapbench_add_app(${name}): '${api}' is no allocator of this build "
                          "(it has: ${known}; the zoo's need -DHEAPBENCH_ZOO, docs/zoo.md)")
    endif()
    set(t ${name}_${api})
    add_executable(${t} ${A_SOURCES})
    target_compile_definitions(${t} PRIVATE HEAPBENCH_APP_API="${api}" ${A_DEFINITIONS})
    target_include_directories(${t} PRIVATE ${A_INCLUDE_DIRS})
    # heapbench_device: the handles, their owners, and what the zoo's families need to compile.
    target_link_libraries(${t} PRIVATE heapbench_device heapbench_host CUDA::cudart nlohmann_json::nlohmann_json ${A_LIBRARIES})
    target_compile_options(${t} PRIVATE ${A_OPTIONS})
    set_target_properties(${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${A_OUTPUT_DIR}/${api} OUTPUT_NAME ${name})
    list(APPEND targets ${t})
  endforeach()
  set(HB_APP_${name}_TARGETS ${targets} PARENT_SCOPE)
endfunction()

# The suite of third-party programs (docs/apps.md): -DHEAPBENCH_APPS=<projects>
# fetches each project at its pinned commit (apps/<project>/app.cmake calls
# hb_app_fetch; offline, FETCHCONTENT_SOURCE_DIR_<PROJECT> names a local
# checkout), applies apps/<project>/patches/*.patch to a copy in
# build/_apps/<project> (routing its allocations through heapbench/app.cuh),
# and builds its programs once per allocator with heapbench_add_app.
set(HEAPBENCH_APPS "" CACHE STRING "Third-party programs' projects (a ;-list) to fetch, patch and build once per allocator (docs/apps.md)")
set(HB_APPS_DIR "${PROJECT_SOURCE_DIR}/apps")
file(GLOB HB_APP_PROJECT_FILES CONFIGURE_DEPENDS "${HB_APPS_DIR}/*/app.cmake")
set(HB_APPS_KNOWN "")
foreach(file IN LISTS HB_APP_PROJECT_FILES)
  get_filename_component(dir "${file}" DIRECTORY)
  get_filename_component(project "${dir}" NAME)
  list(APPEND HB_APPS_KNOWN ${project})
endforeach()
list(SORT HB_APPS_KNOWN)
set(HB_APP_PROGRAMS "")  # "<program>" per heapbench_add_app of a project, for the runner (scripts/apps)

# hb_app_fetch(<project> GIT_REPOSITORY <url> GIT_TAG <40-hex sha>): sets
# HB_APP_<project>_SOURCE_DIR to the patched copy and HB_APP_<project>_COMMIT.
function(hb_app_fetch project)
  cmake_parse_arguments(arg "" "GIT_REPOSITORY;GIT_TAG" "" ${ARGN})
  string(LENGTH "${arg_GIT_TAG}" n)
  if(NOT arg_GIT_REPOSITORY OR NOT arg_GIT_TAG MATCHES "^[0-9a-f]+$" OR NOT n EQUAL 40)
    message(FATAL_ERROR "hb_app_fetch(${project}): give GIT_REPOSITORY and GIT_TAG, a full commit (40 hex digits)")
  endif()
  FetchContent_Declare(${project} GIT_REPOSITORY "${arg_GIT_REPOSITORY}" GIT_TAG "${arg_GIT_TAG}"
                       SOURCE_SUBDIR heapbench-populate-only)
  FetchContent_MakeAvailable(${project})
  string(TOLOWER "${project}" lc)
  hb_zoo_copy_and_patch(${project} "${${lc}_SOURCE_DIR}" dir PATCH_DIR "${HB_APPS_DIR}/${project}/patches"
                        COPY_DIR "${CMAKE_BINARY_DIR}/_apps")
  set(HB_APP_${project}_SOURCE_DIR "${dir}" PARENT_SCOPE)
  set(HB_APP_${project}_COMMIT "${arg_GIT_TAG}" PARENT_SCOPE)
endfunction()

foreach(project IN LISTS HEAPBENCH_APPS)
  if(NOT project IN_LIST HB_APPS_KNOWN)
    message(FATAL_ERROR "HEAPBENCH_APPS=${HEAPBENCH_APPS}: no project named '${project}'; the known ones are: "
                        "${HB_APPS_KNOWN} (docs/apps.md)")
  endif()
  include("${HB_APPS_DIR}/${project}/app.cmake")
  if(NOT HB_APP_${project}_COMMIT)
    message(FATAL_ERROR "${HB_APPS_DIR}/${project}/app.cmake did not call hb_app_fetch(${project} ...)")
  endif()
  message(STATUS "heapbench: app project ${project} @ ${HB_APP_${project}_COMMIT}, built from ${HB_APP_${project}_SOURCE_DIR}")
endforeach()
hb_app_default_apis(hb_app_apis)
message(STATUS "heapbench: apps (HEAPBENCH_APPS=${HEAPBENCH_APPS}; known: ${HB_APPS_KNOWN}): ${HB_APP_PROGRAMS} x ${hb_app_apis}")
