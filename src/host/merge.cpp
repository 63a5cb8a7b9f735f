#include "heapbench/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

namespace heapbench {
namespace {

using nlohmann::json;

// The fields Google Benchmark writes for a run that reported an error.
json error_entry(const std::string& name, const std::string& message) {
  return json{{"name", name},           {"run_name", name},   {"run_type", "iteration"},
              {"repetitions", 1},       {"repetition_index", 0}, {"threads", 1},
              {"iterations", 0},        {"real_time", 0.0},   {"cpu_time", 0.0},
              {"time_unit", "ms"},      {"error_occurred", true}, {"error_message", message}};
}

std::string with_device(const std::string& name, int device) { return fmt::format("{}/device:{}", name, device); }

}  // namespace

void ResultsMerger::add(const GroupResult& g) {
  const std::set<std::string> finished = add_runs(g.device, g.path);
  std::vector<std::string> missing;
  for (const auto& name : g.expected) {
    if (!finished.count(name)) missing.push_back(name);
  }
  add_missing(g.device, missing, g.death);
}

std::set<std::string> ResultsMerger::add_runs(int device, const std::string& path) {
  json child;
  if (std::ifstream in(path); in) {
    try {
      child = json::parse(in);
    } catch (const json::parse_error& e) {
      throw std::runtime_error(fmt::format("'{}' is not a results file: {}", path, e.what()));
    }
  }
  if (!doc_.contains("context") && child.contains("context")) doc_["context"] = child["context"];
  if (tag_ && child.contains("context") &&
      std::find(devices_seen_.begin(), devices_seen_.end(), device) == devices_seen_.end()) {
    devices_seen_.push_back(device);
    json ctx = child["context"];
    ctx["gpu_index"] = std::to_string(device);
    doc_["context"]["devices"].push_back(ctx);
  }
  json& out = doc_["benchmarks"];
  if (out.is_null()) out = json::array();
  std::set<std::string> finished;
  const json runs = child.is_object() ? child.value("benchmarks", json::array()) : json::array();
  for (json b : runs) {
    const std::string run_name = b.value("run_name", b.value("name", ""));
    finished.insert(run_name);
    if (tag_) {
      b["name"] = with_device(b.value("name", ""), device);
      if (b.contains("run_name")) b["run_name"] = with_device(run_name, device);
      b["gpu_index"] = device;
    }
    out.push_back(std::move(b));
  }
  return finished;
}

void ResultsMerger::add_missing(int device, const std::vector<std::string>& names, const std::string& death) {
  json& out = doc_["benchmarks"];
  if (out.is_null()) out = json::array();
  const std::string why = death.empty() ? "the child process exited without a result for this case"
                                        : fmt::format("the child process running this case's heap group {}", death);
  for (const auto& name : names) {
    json e = error_entry(tag_ ? with_device(name, device) : name, why);
    if (tag_) e["gpu_index"] = device;
    out.push_back(std::move(e));
    ++errors_added_;
  }
}

void ResultsMerger::write(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << doc_.dump(2) << '\n';
    f.flush();
    if (!f) throw std::runtime_error(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error(fmt::format("cannot move '{}' to '{}': {}", tmp, path, std::strerror(errno)));
  }
}

}  // namespace heapbench
