#pragma once
// Ouroboros-P-S (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// free pages in the queues, standard array queues (8 Mi entries each): they
// take 320 MiB of the heap, so it needs at least 321 MiB.
// detail/adapter.cuh declares its traits and handle; docs/zoo.md: upstream,
// pinned commit, patches, how it differs from docs/allocators.md's contract.
#include "detail/adapter.cuh"

HB_ZOO_OUROBOROS_ADAPTER(ouroboros_p_s, Pages, PageQueue, 321ull << 20)
