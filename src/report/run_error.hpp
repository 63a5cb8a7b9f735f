#pragma once
// A Google Benchmark run's error, whichever version built heapbench: 1.7 (Debian
// 12) marks a failed run with `error_occurred` and `error_message`, 1.8 and later
// (the GPU machine's) with `skipped` and `skip_message`.
#include <string>
#include <type_traits>
#include <utility>

namespace heapbench {
namespace detail {
template <class R, class = void>
struct HasErrorOccurred : std::false_type {};
template <class R>
struct HasErrorOccurred<R, std::void_t<decltype(std::declval<R>().error_occurred)>> : std::true_type {};
}  // namespace detail

// The run's error message, or nullptr when it did not fail.
template <class R>
const std::string* run_error(const R& run) {
  if constexpr (detail::HasErrorOccurred<R>::value) {
    return run.error_occurred ? &run.error_message : nullptr;
  } else {
    return run.skipped ? &run.skip_message : nullptr;
  }
}

// Marks `run` failed with `message`, in the fields of the version that built heapbench.
template <class R>
void mark_error(R& run, const std::string& message) {
  if constexpr (detail::HasErrorOccurred<R>::value) {
    run.error_occurred = true;
    run.error_message = message;
  } else {
    using Skipped = decltype(run.skipped);
    run.skipped = Skipped::SkippedWithError;
    run.skip_message = message;
  }
}

}  // namespace heapbench
