#include "subcommand.hpp"

#include <filesystem>

#include "orchestrate/exit_codes.hpp"
#include "report/version.hpp"

namespace heapbench {

std::optional<DeviceInfo> probe_for(const char* name, const DeviceHooks& hooks, int device) {
  try {
    return hooks.probe(device);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench {}: {}\n", name, e.what());
    return std::nullopt;
  }
}

bool SubcommandFile::open(const std::optional<std::string>& path) {
  if (!path) return true;
  try {
    file_.emplace(*path, flag_);
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench {}: {}\n", subcommand_, e.what());
    return false;
  }
  file_->remove_scratch_on_signal();
  return true;
}

int SubcommandFile::write(const std::string& content) const {
  if (!file_) return kExitOk;
  try {
    write_atomically(file_->path(), content);
  } catch (const ResultsWriteError& e) {
    fmt::print(stderr, "heapbench {}: {}; {} keeps its earlier content\n", subcommand_, e.what(), file_->path());
    return kExitCannotWrite;
  }
  return kExitOk;
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

nlohmann::json device_context(const DeviceInfo& device) {
  return {{"gpu_name", device.name},
          {"gpu_index", device.index},
          {"gpu_memory_bytes", device.total_memory},
          {"cuda_driver_version", device.driver_version},
          {"cuda_runtime_version", device.runtime_version},
          {"heapbench_version", kVersion},
          {"heapbench_git_commit", kGitCommit}};
}

}  // namespace heapbench
