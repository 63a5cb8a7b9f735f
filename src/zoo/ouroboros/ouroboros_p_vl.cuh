#pragma once
// Ouroboros-P-VL (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// free pages in the queues, virtualized linked-list queues: at least 1 MiB of heap.
// detail/adapter.cuh declares its traits and handle; docs/zoo.md: upstream,
// pinned commit, patches, how it differs from docs/allocators.md's contract.
#include "detail/adapter.cuh"

HB_ZOO_OUROBOROS_ADAPTER(ouroboros_p_vl, Pages, PageQueueVL, 1ull << 20)
