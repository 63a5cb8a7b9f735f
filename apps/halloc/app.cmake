# halloc (Andrew V. Adinetz and Dirk Pleiter, canonizer/halloc, MIT): its
# samples, with hamalloc/hafree routed through heapbench/app.cuh
# (patches/*.patch; docs/apps.md says what each changes and why).
hb_app_fetch(halloc GIT_REPOSITORY https://github.com/canonizer/halloc.git
             GIT_TAG b91804ec468c19224cb295f11d26fdf117100fa4)
# grid-points: a list node per point pushed by atomicExch into its grid cell,
# the lists walked by a kernel that does not allocate, freed by chain.
heapbench_add_app(grid_points SOURCES ${HB_APP_halloc_SOURCE_DIR}/samples/grid-points/grid-points.cu)
list(APPEND HB_APP_PROGRAMS grid_points)
# add-strings: two arrays of 31-character strings allocated, concatenated
# pairwise into new blocks, hashed by a kernel that does not allocate, freed.
heapbench_add_app(add_strings SOURCES ${HB_APP_halloc_SOURCE_DIR}/samples/add-strings/add-strings.cu)
list(APPEND HB_APP_PROGRAMS add_strings)
