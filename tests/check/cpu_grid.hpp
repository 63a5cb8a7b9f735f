#pragma once
// The battery's grid on the CPU (check/check_battery.hpp): a launch runs
// the body for thread indices 0 ... n-1 on a few std::threads, which take the
// indices from a shared counter, and a watchdog waits for them at most the
// timeout. The threads are detached: a body stuck in an allocator that never
// returns cannot be stopped, so a launch that times out throws check::Hang and
// the row's process reports it and exits (bench/subcommands/check.cpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "check/check_battery.hpp"

namespace heapbench::check::cpu {

class Grid {
 public:
  Grid(double timeout_s, unsigned workers, std::function<void(const Hang&)> on_hang = {})
      : timeout_s_(timeout_s), workers_(std::max(1u, workers)), on_hang_(std::move(on_hang)) {}

  template <class T>
  struct Buf {
    std::shared_ptr<std::vector<T>> v;
    T* data() const { return v->data(); }
  };
  template <class T>
  Buf<T> buffer(std::size_t n) {
    return {std::make_shared<std::vector<T>>(n)};  // value-initialised: zero, as the device's are
  }
  template <class T>
  std::vector<T> to_host(const Buf<T>& b) const {
    return *b.v;
  }
  std::uint64_t deadline_ns(double seconds) const {
    return body::now_ns() + static_cast<std::uint64_t>(seconds * 1e9);
  }

  template <class F>
  double launch(std::uint64_t n, F f, const char* during) {
    const auto t0 = std::chrono::steady_clock::now();
    if (n == 0) return 0;
    struct State {
      std::atomic<std::uint64_t> next{0};
      unsigned finished = 0;
      std::mutex m;
      std::condition_variable cv;
    };
    auto st = std::make_shared<State>();
    const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(workers_, n));
    for (unsigned w = 0; w < workers; ++w) {
      std::thread([st, f, n] {
        for (std::uint64_t i; (i = st->next.fetch_add(1)) < n;) f(i);
        std::lock_guard<std::mutex> lock(st->m);
        ++st->finished;
        st->cv.notify_all();
      }).detach();
    }
    std::unique_lock<std::mutex> lock(st->m);
    const bool done = st->cv.wait_for(lock, std::chrono::duration<double>(timeout_s_),
                                      [&] { return st->finished == workers; });
    if (!done) {
      const Hang h(timeout_s_, std::string(during) + " launch still running");
      if (on_hang_) on_hang_(h);
      throw h;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  double timeout_s_;
  unsigned workers_;
  std::function<void(const Hang&)> on_hang_;
};

}  // namespace heapbench::check::cpu
