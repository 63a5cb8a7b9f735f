#include "orchestrate.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <mutex>
#include <thread>

#include "heapbench/case.hpp"
#include "families.hpp"
#include "heapbench/merge.hpp"


extern char** environ;

namespace heapbench {
namespace {

// A SIGINT/SIGTERM/SIGHUP to the parent is passed on to the running children
// (one per device at most), which die of it leaving their finished cases in
// their files; the parent merges those, starts no further group and then dies
// of the same signal. Lock-free atomics only: the handler may touch nothing else.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> g_running[kMaxChildren];
std::atomic<int> g_stop{0};
static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void forward_to_children(int sig) {
  g_stop.store(sig);
  for (auto& pid : g_running) {
    const pid_t p = pid.load();
    if (p > 0) kill(p, sig);
  }
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_handler = forward_to_children;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

constexpr const char* kStoppedAfterDeviceError = "stopped after a device error";

// Runs one child to completion; returns "" if it exited with status 0, else how it ended.
std::string run_child(const std::vector<std::string>& args, int slot) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  if (rc != 0) return fmt::format("could not be started: {}", std::strerror(rc));
  g_running[slot].store(pid);
  if (const int sig = g_stop.load()) kill(pid, sig);  // a signal that came while it was being started
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      g_running[slot].store(0);
      return fmt::format("could not be waited for: {}", std::strerror(errno));
    }
  }
  g_running[slot].store(0);
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == kExitDeviceError) return kStoppedAfterDeviceError;
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return {};
}

// A --benchmark_filter that selects exactly `names`.
std::string exactly(const std::vector<std::string>& names) {
  std::string re = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) re += '|';
    for (char ch : names[i]) {
      if (std::strchr(".^$|()[]{}*+?\\", ch) != nullptr) re += '\\';
      re += ch;
    }
  }
  return re + ")$";
}

}  // namespace

ChildrenOutcome run_children(const std::vector<std::string>& args, const std::vector<ChildPlan>& plan,
                             const std::string& out_path, bool tag_devices) {
  namespace fs = std::filesystem;
  const fs::path work = out_path + ".groups";
  fs::create_directories(work);
  ResultsMerger merger(tag_devices);
  std::mutex mutex;
  ChildrenOutcome outcome;

  std::map<int, std::vector<const ChildPlan*>> by_device;
  for (const auto& p : plan) by_device[p.device].push_back(&p);
  if (by_device.size() > static_cast<std::size_t>(kMaxChildren)) {
    throw std::runtime_error(fmt::format("--devices: at most {} devices at once", kMaxChildren));
  }
  install_forwarding();
  std::vector<std::thread> threads;
  int slot = 0;
  for (const auto& [device, groups] : by_device) {
    threads.emplace_back([&, device = device, groups = groups, slot = slot++] {
      for (const ChildPlan* g : groups) {
        if (g_stop.load() != 0) break;
        // A child that stops after a device error (its context may be
        // unusable) is followed by a new one for the cases it did not reach.
        std::vector<std::string> remaining = g->expected;
        for (int attempt = 0; !remaining.empty(); ++attempt) {
          const fs::path file = work / fmt::format("device{}_heap{}_{}.json", device, g->heap / kMiB, attempt);
          std::vector<std::string> child = {"heapbench"};
          child.insert(child.end(), args.begin(), args.end());
          child.push_back(fmt::format("--device={}", device));
          child.push_back(fmt::format("--only-heap={}", g->heap));
          child.push_back("--benchmark_out=" + file.string());
          if (attempt > 0) child.push_back("--benchmark_filter=" + exactly(remaining));
          const std::string death = run_child(child, slot);
          std::lock_guard<std::mutex> lock(mutex);
          const std::set<std::string> done = merger.add_runs(device, file.string());
          std::vector<std::string> left;
          for (const auto& n : remaining) {
            if (!done.count(n)) left.push_back(n);
          }
          const bool resume = death == kStoppedAfterDeviceError && !left.empty() && left.size() < remaining.size() &&
                              g_stop.load() == 0;
          // Stopping after a device error in the group's last case is no death: nothing was left undone.
          const std::string shown = death == kStoppedAfterDeviceError && left.empty() ? "" : death;
          if (resume) {
            fmt::print(stderr, "heapbench: the child for the {} MiB heap on device {} stopped after a device error; "
                       "a new process runs its {} remaining case(s)\n", g->heap / kMiB, device, left.size());
          } else {
            if (!shown.empty()) {
              ++outcome.deaths;
              fmt::print(stderr, "heapbench: the child for the {} MiB heap on device {} {}; its unfinished cases are "
                         "error results\n", g->heap / kMiB, device, shown);
            }
            merger.add_missing(device, left, shown);
            left.clear();
          }
          merger.write(out_path);
          remaining = std::move(left);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  fs::remove_all(work);
  outcome.entries = merger.entries();
  outcome.signal = g_stop.load();
  return outcome;
}

}  // namespace heapbench
