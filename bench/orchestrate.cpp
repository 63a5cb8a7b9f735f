#include "orchestrate.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "heapbench/case.hpp"
#include "heapbench/merge.hpp"

extern char** environ;

namespace heapbench {
namespace {

// Runs one child to completion; returns "" if it exited with status 0, else how it ended.
std::string run_child(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  if (rc != 0) return fmt::format("could not be started: {}", std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return fmt::format("could not be waited for: {}", std::strerror(errno));
  }
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return {};
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
  std::vector<std::thread> threads;
  for (const auto& [device, groups] : by_device) {
    threads.emplace_back([&, device = device, groups = groups] {
      for (const ChildPlan* g : groups) {
        const fs::path file = work / fmt::format("device{}_heap{}.json", device, g->heap / kMiB);
        std::vector<std::string> child = {"heapbench"};
        child.insert(child.end(), args.begin(), args.end());
        child.push_back(fmt::format("--device={}", device));
        child.push_back(fmt::format("--only-heap={}", g->heap));
        child.push_back("--benchmark_out=" + file.string());
        const std::string death = run_child(child);
        std::lock_guard<std::mutex> lock(mutex);
        if (!death.empty()) {
          ++outcome.deaths;
          fmt::print(stderr, "heapbench: the child for the {} MiB heap on device {} {}; its unfinished cases are "
                     "error results\n", g->heap / kMiB, device, death);
        }
        merger.add(GroupResult{device, file.string(), g->expected, death});
        merger.write(out_path);
      }
    });
  }
  for (auto& t : threads) t.join();
  fs::remove_all(work);
  outcome.entries = merger.entries();
  return outcome;
}

}  // namespace heapbench
