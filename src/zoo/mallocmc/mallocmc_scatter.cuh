#pragma once
// mallocmc_scatter: mallocMC (alpaka-group/mallocMC) with its Scatter creation
// policy -- ScatterAlloc's algorithm -- in its default configuration (4 KiB
// pages, 16 pages a region, waste factor 2) but for 8 MiB access blocks (see
// below), no distribution policy (each thread calls on its own), NULL when out
// of memory, its pool an alpaka buffer as large as the case's heap, 16-byte
// alignment (docs/zoo.md; docs/allocators.md is the contract).
#include "heapbench/api_traits.hpp"

namespace heapbench_user {

// Scatter divides its pool into access blocks and divides by their number: a
// pool smaller than one access block (2 GiB by default) divides by zero on the
// device. 8 MiB -- CUDA's default heap, the smallest heap heapbench's sweeps
// use -- is heapbench's choice, and the smallest heap it takes.
inline constexpr unsigned long long mallocmc_access_block_bytes = 8ull * 1024 * 1024;

// Its device calls carry the (padded) size as a 32-bit number.
inline constexpr unsigned long long mallocmc_max_size = (1ull << 32) - 16;

inline constexpr heapbench::ApiTraits mallocmc_scatter_traits = heapbench::with_max_size(
    heapbench::with_min_heap(
        heapbench::ApiTraits{
            "mallocmc_scatter",            // the name in case names, JSON and plots
            heapbench::Source::own_arena,  // its pool: an alpaka buffer as large as the case's heap, its page table inside
            false,                         // the Shrink alignment policy: 16 bytes, the align argument is not taken
        },
        mallocmc_access_block_bytes),
    mallocmc_max_size);

}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/common.cuh"

namespace heapbench_zoo_mallocmc {
// DefaultScatterConfig's values but the access block (see mallocmc_access_block_bytes).
struct ScatterConfig {
  static constexpr auto pagesize = mallocMC::CreationPolicies::ScatterConf::DefaultScatterConfig::pagesize;
  static constexpr auto accessblocksize = static_cast<unsigned>(heapbench_user::mallocmc_access_block_bytes);
  static constexpr auto regionsize = mallocMC::CreationPolicies::ScatterConf::DefaultScatterConfig::regionsize;
  static constexpr auto wastefactor = mallocMC::CreationPolicies::ScatterConf::DefaultScatterConfig::wastefactor;
  static constexpr auto resetfreedpages = mallocMC::CreationPolicies::ScatterConf::DefaultScatterConfig::resetfreedpages;
};
using ScatterAllocator = mallocMC::Allocator<
    Acc, mallocMC::CreationPolicies::Scatter<ScatterConfig, mallocMC::CreationPolicies::ScatterConf::DefaultScatterHashingParams>,
    mallocMC::DistributionPolicies::Noop,
                        mallocMC::OOMPolicies::ReturnNull, mallocMC::ReservePoolPolicies::AlpakaBuf<Acc>,
                        mallocMC::AlignmentPolicies::Shrink<ShrinkConfig>>;
}  // namespace heapbench_zoo_mallocmc

namespace heapbench_user {

struct mallocmc_scatter {
  static constexpr const heapbench::ApiTraits& traits = mallocmc_scatter_traits;
  static constexpr std::size_t min_alignment = heapbench_zoo_mallocmc::ShrinkConfig::dataAlignment;
  heapbench_zoo_mallocmc::ScatterAllocator::DevAllocator* h = nullptr;

  __device__ void* allocate(std::size_t size, std::size_t) const {
    return heapbench_zoo_mallocmc::Handle<heapbench_zoo_mallocmc::ScatterAllocator>{h}.allocate(size);
  }
  __device__ void deallocate(void* p) const {
    heapbench_zoo_mallocmc::Handle<heapbench_zoo_mallocmc::ScatterAllocator>{h}.deallocate(p);
  }

  struct Owner : heapbench_zoo_mallocmc::Owner<heapbench_zoo_mallocmc::ScatterAllocator> {
    using heapbench_zoo_mallocmc::Owner<heapbench_zoo_mallocmc::ScatterAllocator>::Owner;
    mallocmc_scatter handle() const { return mallocmc_scatter{raw_handle()}; }
  };
};

}  // namespace heapbench_user
#endif
