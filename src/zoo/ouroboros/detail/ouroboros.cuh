#pragma once
// What the six Ouroboros adapters share (docs/zoo.md): a handle over one
// Ouroboros instance in device memory and its Owner. Not an adapter itself
// (it lies below the family's folder, which cmake/zoo.cmake globs for them);
// each <api>.cuh names its variant with detail/adapter.cuh's macro, which
// includes this under __CUDACC__.
//
// Ouroboros (Winter, Mlakar, Parger, Steinberger, ICS'20) serves 16 B ... 8 KiB
// from 8 KiB chunks in one cudaMalloc allocation; its queues of free pages (or
// chunks) take the end of the same allocation. The variants differ in what the
// queues hold (pages or chunks) and how they are stored (a standard array, a
// virtualized array, a virtualized linked list).
#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "../../common/owned.cuh"
#include "device/MemoryInitialization.cuh"
#include "device/Ouroboros_impl.cuh"
#include "heapbench/case.hpp"
#include "heapbench/cuda_error.hpp"  // heapbench::CudaError

namespace heapbench_zoo::ouroboros {

// The instances of upstream's InstanceDefinitions.cuh (as the survey built
// them), under names of our own: that header declares short global names (PQ, CQ).
template <template <class> class Queue>
using Pages = ::Ouroboros<OuroborosPages<Queue, Chunk<CHUNK_SIZE>, SMALLEST_PAGE_SIZE, NUM_QUEUES>>;
template <template <class> class Queue>
using Chunks = ::Ouroboros<OuroborosChunks<Queue, Chunk<CHUNK_SIZE>, SMALLEST_PAGE_SIZE, NUM_QUEUES>>;

// The largest request an instance serves itself: upstream relays larger ones to
// CUDA's malloc, which the adapters do not measure as Ouroboros (they return
// nullptr instead; patches/0003 drops the heap limit that relay needed).
template <class O>
inline constexpr std::size_t kMaxBytes = O::ConcreteOuroboros::LargestPageSize_;

// The least arena an instance can be set up on: its queues (a fixed size per
// variant, at the end of the allocation) and a chunk for each size class.
// Upstream's size arithmetic wraps around below it; each adapter's traits give
// a min_heap at least this large (checked where the adapter is compiled), so
// heapbench reports a smaller case as an error with the reason.
template <class O>
constexpr std::size_t least_arena() {
  using Chunk = typename O::ChunkBase;
  return Ouro::alignment<std::size_t>(O::size_() + O::ConcreteOuroboros::memoryManagerSize(), Chunk::size()) +
         (O::ConcreteOuroboros::NumberQueues_ + 1) * Chunk::size();
}

// An adapter's traits against its instance: least heap and largest block.
template <class H>
constexpr bool traits_match() {
  return H::traits.min_heap >= least_arena<typename H::Instance>() && H::traits.max_size == H::max_bytes;
}

// Derived: the adapter's handle type (heapbench_user::<stem>); O: the instance;
// Rebuild: a fresh instance before every round (true), or one instance per case
// whose queues carry over from round to round, as the GPUMemManSurvey's harness
// keeps it (false: the `_kept` adapters).
template <class Derived, class O, bool Rebuild = true>
struct Handle {
  // Chunks of 128 B of metadata + 8 KiB every 8,320 B from an 8 KiB-aligned
  // start, pages of 16 B << k after the metadata: 16-byte aligned at least.
  static constexpr std::size_t min_alignment = 16;
  static constexpr std::size_t max_bytes = kMaxBytes<O>;
  using Instance = O;

  O* ouro = nullptr;  // the instance's copy in device memory (the start of its allocation)

  __device__ void* allocate(std::size_t size, std::size_t) const {
    if (size > max_bytes) return nullptr;  // not Ouroboros's any more (see kMaxBytes)
    return ouro->malloc(size);
  }
  __device__ void deallocate(void* p) const { ouro->free(p); }

  struct Owner {
    // reset() runs upstream's initialize(), which waits for the device: the
    // harness must not hold the stream around a batch (src/device/allocators.cuh).
    static constexpr bool reset_synchronizes = Rebuild;
    explicit Owner(const heapbench::Case& c) : bytes_(c.arena_bytes()) {
      const char* name = Derived::traits.name.data();
      using Chunk = typename O::ChunkBase;
      // heapbench does not make a case below the traits' min_heap; this guards
      // the arithmetic below all the same.
      const std::size_t fixed = Ouro::alignment<std::size_t>(O::size_() + O::ConcreteOuroboros::memoryManagerSize(), Chunk::size());
      if (bytes_ < least_arena<O>()) {
        throw heapbench::CudaError(std::string(name) + ": an arena of " + std::to_string(bytes_) +
                                   " bytes is too small: its queues and a chunk per size class take " +
                                   std::to_string(least_arena<O>()) + " (docs/zoo.md)");
      }
      // initialize() takes this many bytes in one cudaMalloc that it does not
      // check (a failure then exits the process); it allocates only when given
      // no memory, so allocate them here, checked. The arithmetic is
      // initialize()'s, and what it reports afterwards is checked against it.
      const std::size_t chunks = (Ouro::alignment<std::size_t>(bytes_, Chunk::size()) - fixed) / Chunk::size();
      alloc_bytes_ = Ouro::alignment<std::size_t>(
          fixed + Ouro::alignment<std::size_t>(chunks * Chunk::size()) +
              Ouro::alignment<std::size_t>(ChunkLocator::size(static_cast<unsigned>(chunks)), Chunk::size()),
          Chunk::size());
      check(cudaGetLastError(), name, "before initialize");
      memory_t* memory = nullptr;
      check(cudaMalloc(reinterpret_cast<void**>(&memory), alloc_bytes_), name, "cudaMalloc");
      instance_.replace(std::make_unique<O>());
      instance_->memory.d_memory = memory;  // Memory's destructor frees it from here on
      initialize();  // if it throws, instance_ is dropped with the rest of the owner
    }

    Derived handle() const {
      Derived h;
      h.ouro = instance_->getDeviceMemoryManager();
      return h;
    }
    // Upstream has no reset: a fresh instance is initialised over the same
    // allocation (initialize() allocates only when it has none): every chunk
    // free, every queue empty, as before the first round. Without Rebuild,
    // nothing: every round frees what it allocated, into the queues the next
    // round takes its pages from.
    void reset() {
      if constexpr (!Rebuild) return;
      auto fresh = std::make_unique<O>();
      fresh->memory.d_memory = instance_->memory.d_memory;
      instance_->memory.d_memory = nullptr;  // so the old instance's destructor frees nothing
      instance_.replace(std::move(fresh));
      initialize();
    }

   private:
    // Memory's destructor cudaFrees the allocation, and exit()s if that fails
    // -- as it does in a context a trap has broken. There, the allocation is
    // left to the device reset that follows a device error.
    struct Disarm {
      void operator()(std::unique_ptr<O>& o) const { o->memory.d_memory = nullptr; }
    };
    void initialize() {
      const char* name = Derived::traits.name.data();
      instance_->initialize(bytes_);
      check(cudaDeviceSynchronize(), name, "initialize");
      check(cudaGetLastError(), name, "initialize");
      if (instance_->memory.allocationSize != alloc_bytes_) {
        throw heapbench::CudaError(std::string(name) + ": initialize() laid out " +
                                   std::to_string(instance_->memory.allocationSize) + " bytes, not the " +
                                   std::to_string(alloc_bytes_) + " the adapter allocated");
      }
    }

    std::size_t bytes_;
    std::size_t alloc_bytes_ = 0;
    heapbench_zoo::Owned<O, Disarm> instance_;
  };
};

}  // namespace heapbench_zoo::ouroboros
