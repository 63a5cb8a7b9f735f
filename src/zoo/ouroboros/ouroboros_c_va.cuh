#pragma once
// Ouroboros-C-VA (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// chunks with free pages in the queues, virtualized array queues: at least 1 MiB
// of heap.
// detail/adapter.cuh declares its traits and handle; docs/zoo.md: upstream,
// pinned commit, patches, how it differs from docs/allocators.md's contract.
#include "detail/adapter.cuh"

HB_ZOO_OUROBOROS_ADAPTER(ouroboros_c_va, Chunks, ChunkQueueVA, 1ull << 20)
