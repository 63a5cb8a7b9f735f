#pragma once
// Ouroboros-P-S as ouroboros_p_s.cuh, but one instance per case: not rebuilt
// before every round, so each round takes its pages from the queues the rounds
// before it freed into, as the GPUMemManSurvey's harness keeps it (initialised
// once, then rounds). Beside ouroboros_p_s it shows what a cold start costs.
#include "detail/adapter.cuh"

HB_ZOO_OUROBOROS_KEPT_ADAPTER(ouroboros_p_s_kept, Pages, PageQueue, 321ull << 20)
