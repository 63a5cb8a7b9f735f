#pragma once
// Allocators that run on the CPU, for `heapbench check` in CI: one correct,
// and four that break one property each, on purpose. tests/check/check_test.py
// runs the battery against all five and pins which rows each must fail.
//
// The correct one ("reference") is a size-class allocator over one arena:
// blocks of a power of two (16 B and up) after a 16-byte header that holds the
// class, carved from the arena's top; a freed block goes on its class's free
// list; when the last live block is freed the whole arena is empty again. One
// mutex guards it all: slow, simple, correct under any number of threads.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace heapbench::check::cpu {

enum class Bug {
  none,
  double_alloc,    // every 1000th allocation returns the last block of its size class again, still live
  never_null,      // when full, starts over at the arena's start instead of answering NULL
  hang_when_full,  // when full, waits for a free that never comes (in the fill, nobody frees)
  leak,            // every 8th free is dropped: the block never comes back
};

class Heap {
 public:
  Heap(std::uint64_t bytes, Bug bug)
      : bytes_(bytes), arena_(static_cast<unsigned char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))), bug_(bug),
        free_(64) {}
  ~Heap() { std::free(arena_); }
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  void* allocate(std::uint64_t size) {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(m_);
        ++calls_;
        unsigned c = 4;
        while ((1ull << c) < size) ++c;
        if (bug_ == Bug::double_alloc && calls_ % 1000 == 0 && last_[c] != nullptr) {
          ++live_;
          return last_[c];
        }
        const std::uint64_t block = 16 + (1ull << c);
        if (block > bytes_) return nullptr;  // larger than the arena: every allocator says NULL
        void* p = nullptr;
        if (!free_[c].empty()) {
          p = free_[c].back();
          free_[c].pop_back();
        } else if (top_ + block <= bytes_) {
          p = carve(c, block);
        } else if (bug_ == Bug::never_null) {
          top_ = 0;  // "there is always room": start over, over live blocks
          p = carve(c, block);
        } else if (bug_ != Bug::hang_when_full) {
          return nullptr;
        }
        if (p != nullptr) {
          ++live_;
          last_[c] = p;
          return p;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // hang_when_full: wait for a free
    }
  }

  void deallocate(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(m_);
    if (bug_ == Bug::leak && ++frees_ % 8 == 0) return;
    const auto c = *reinterpret_cast<std::uint64_t*>(static_cast<unsigned char*>(p) - 16);
    if (c >= free_.size()) return;  // a header overwritten (never_null's blocks overlap): not a block any more
    free_[c].push_back(p);
    if (--live_ == 0) empty();
  }

  // The owner's reset: everything free.
  void reset() {
    std::lock_guard<std::mutex> lock(m_);
    live_ = 0;
    empty();
  }

 private:
  void* carve(unsigned c, std::uint64_t block) {
    unsigned char* h = arena_ + top_;
    top_ += block;
    *reinterpret_cast<std::uint64_t*>(h) = c;
    return h + 16;
  }
  void empty() {
    top_ = 0;
    for (auto& list : free_) list.clear();
    for (void*& p : last_) p = nullptr;
  }

  std::uint64_t bytes_;
  unsigned char* arena_;
  Bug bug_;
  std::mutex m_;
  std::uint64_t top_ = 0, live_ = 0, calls_ = 0, frees_ = 0;
  void* last_[64] = {};  // per class
  std::vector<std::vector<void*>> free_;
};

// The handle the bodies call, as a device handle would be: trivially copyable.
struct Handle {
  Heap* heap;
  void* allocate(std::size_t size, std::size_t) const { return heap->allocate(size); }
  void deallocate(void* p) const { heap->deallocate(p); }
};

}  // namespace heapbench::check::cpu
