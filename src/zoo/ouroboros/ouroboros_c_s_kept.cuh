#pragma once
// Ouroboros-C-S as ouroboros_c_s.cuh, but one instance per case: not rebuilt
// before every round, so each round takes its chunks from the queues the rounds
// before it freed into, as the GPUMemManSurvey's harness keeps it (initialised
// once, then rounds). Beside ouroboros_c_s it shows what a cold start costs.
#include "detail/adapter.cuh"

HB_ZOO_OUROBOROS_KEPT_ADAPTER(ouroboros_c_s_kept, Chunks, ChunkQueue, 321ull << 20)
