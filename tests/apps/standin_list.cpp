// An app-shaped program on heapbench's stand-in device (issue 51): what a
// program ported to heapbench/app.cuh does -- a timed section of launches, some
// allocating, one that only reads the blocks, its output hashed, its NULLs
// counted, a report written through heapbench::app's own Report -- with its
// "kernels" run on the CPU and its times from the CPU's clock, so that CI runs
// the real report writer under the real runner (heapbench-apps) where no GPU is:
// plot/tests/test_apps.py, test_a_real_program_on_the_stand_in_device_*.
//
// The shape is halloc's grid-points: 20,000 points pushed onto the lists of 64
// cells (a node allocated per point), the lists walked and summed (nothing
// allocated), every node freed. Built once per stand-in allocator
// (tests/CMakeLists.txt) into standin-apps/apps/standin_list/<name>/, with
// HB_STANDIN_<NAME> defined:
//   malloc   the C library's, as CUDA's heap is the reference of a real run;
//   pool     nodes packed side by side in one arena of HEAPBENCH_APP_HEAP_MIB, a free list;
//   overlap  a defective allocator: each block 8 bytes past the last, overlapping it (the output changes);
//   nulls    returns NULL for one call in 1,000 (the program skips that point and counts it);
//   crash    ends the program with SIGSEGV's default action in the free kernel.
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "heapbench/app_report.hpp"

namespace {

// The stand-in device's clock: the CPU's, read when an event is recorded.
struct CpuClock {
  using Event = const std::chrono::steady_clock::time_point*;
  static Event make() { return new std::chrono::steady_clock::time_point(); }
  static void record(Event e) { *const_cast<std::chrono::steady_clock::time_point*>(e) = std::chrono::steady_clock::now(); }
  static double ms(Event from, Event to) { return std::chrono::duration<double, std::milli>(*to - *from).count(); }
  static void destroy(Event e) { delete e; }
  static void check_launch(const char*, bool) {}  // the CPU's kernels report no asynchronous error
};

struct Node {
  Node* next;
  std::uint64_t value;
};

constexpr int kPoints = 20000;
constexpr int kCells = 64;

// The stand-in allocators, one per build.
enum class Kind { kMalloc, kPool, kOverlap, kNulls, kCrash };
constexpr Kind kKind =
#if defined(HB_STANDIN_POOL)
    Kind::kPool;
#elif defined(HB_STANDIN_OVERLAP)
    Kind::kOverlap;
#elif defined(HB_STANDIN_NULLS)
    Kind::kNulls;
#elif defined(HB_STANDIN_CRASH)
    Kind::kCrash;
#else
    Kind::kMalloc;
#endif

class Allocator {
 public:
  explicit Allocator(std::size_t bytes) : arena_(kKind == Kind::kPool || kKind == Kind::kOverlap ? bytes / 16 : 0) {}
  void* allocate() {
    ++calls_;
    if (kKind == Kind::kNulls && calls_ % 1000 == 0) return nullptr;
    if (kKind != Kind::kPool && kKind != Kind::kOverlap) return std::malloc(sizeof(Node));
    if (free_ != nullptr) {
      Node* n = free_;
      free_ = n->next;
      return n;
    }
    // pool: 16-byte blocks side by side; overlap: 8 bytes apart, each block's first half the last one's second.
    const std::size_t step = kKind == Kind::kPool ? 16 : 8;
    if (used_ + sizeof(Node) > arena_.size() * 16) return nullptr;
    void* p = reinterpret_cast<unsigned char*>(arena_.data()) + used_;
    used_ += step;
    return p;
  }
  void deallocate(void* p) {
    if (kKind == Kind::kCrash) {
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (kKind != Kind::kPool && kKind != Kind::kOverlap) return std::free(p);
    auto* n = static_cast<Node*>(p);
    n->next = free_;
    free_ = n;
  }

 private:
  struct alignas(16) Block {
    unsigned char bytes[16];
  };
  std::vector<Block> arena_;
  std::size_t used_ = 0;
  std::uint64_t calls_ = 0;
  Node* free_ = nullptr;
};

std::size_t heap_bytes() {
  const char* mib = std::getenv("HEAPBENCH_APP_HEAP_MIB");
  return (mib != nullptr && std::atoi(mib) > 0 ? static_cast<std::size_t>(std::atoi(mib)) : 64) << 20;
}

}  // namespace

int main() {
  try {
    Allocator heap(heap_bytes());
    std::vector<Node*> cells(kCells, nullptr);
    std::vector<std::uint64_t> sums(kCells, 0);
    unsigned long long nulls = 0;
    heapbench::app::BasicReport<CpuClock> report("standin_list");
    report.begin();
    report.launch("push_points", true, [&] {
      for (int i = 0; i < kPoints; ++i) {
        auto* n = static_cast<Node*>(heap.allocate());
        if (n == nullptr) {
          ++nulls;
          continue;
        }
        n->value = static_cast<std::uint64_t>(i) * 2654435761u % 1000003u;
        n->next = cells[i % kCells];
        cells[i % kCells] = n;
      }
    });
    report.launch("cell_sums", false, [&] {
      for (int c = 0; c < kCells; ++c) {
        for (const Node* n = cells[c]; n != nullptr; n = n->next) sums[c] += n->value;
      }
    });
    report.launch("free_points", true, [&] {
      for (Node*& head : cells) {
        while (head != nullptr) {
          Node* next = head->next;
          heap.deallocate(head);
          head = next;
        }
      }
    });
    report.end();
    report.output(heapbench::app::fnv1a(sums.data(), sums.size() * sizeof sums[0]));
    report.figure("points", kPoints);
    report.write(nulls);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "standin_list: %s\n", e.what());
    return 1;
  }
  return 0;
}
