#include "heapbench/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "heapbench/axis_values.hpp"
#include "heapbench/results_file.hpp"

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

// One entry per run: its name and repetition (aggregates have names of their own).
std::string key_of(const json& b) { return fmt::format("{}#{}", b.value("name", ""), b.value("repetition_index", 0)); }

json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return json();
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(fmt::format("'{}' is not a results file: {}", path, e.what()));
  }
}

}  // namespace

void ResultsMerger::add(const GroupResult& g) {
  const std::set<std::string> finished = add_runs(g.device, g.path);
  std::vector<std::string> missing;
  for (const auto& name : g.expected) {
    if (!finished.count(name)) missing.push_back(name);
  }
  add_missing(g.device, missing, g.death);
}

json ResultsMerger::runs_of(int device, const std::string& path) {
  const json child = read_json(path);
  if (!doc_.contains("context") && child.contains("context")) doc_["context"] = child["context"];
  if (tag_ && child.contains("context") &&
      std::find(devices_seen_.begin(), devices_seen_.end(), device) == devices_seen_.end()) {
    devices_seen_.push_back(device);
    json ctx = child["context"];
    ctx["gpu_index"] = std::to_string(device);
    doc_["context"]["devices"].push_back(ctx);
  }
  json runs = child.is_object() ? child.value("benchmarks", json::array()) : json::array();
  if (tag_) {
    for (json& b : runs) {
      const std::string run_name = b.value("run_name", b.value("name", ""));
      b["name"] = with_device(b.value("name", ""), device);
      if (b.contains("run_name")) b["run_name"] = with_device(run_name, device);
      b["gpu_index"] = device;
    }
  }
  return runs;
}

std::set<std::string> ResultsMerger::add_runs(int device, const std::string& path, bool skip_present) {
  const json runs = runs_of(device, path);
  live_.erase(device);
  std::set<std::string> present;
  if (skip_present) {
    for (const json& b : doc_["benchmarks"]) present.insert(key_of(b));
  }
  std::set<std::string> finished;
  for (const json& b : runs) {
    std::string run_name = b.value("run_name", b.value("name", ""));
    if (tag_) run_name = run_name.substr(0, run_name.size() - with_device("", device).size());
    finished.insert(run_name);
    if (skip_present && present.count(key_of(b))) continue;
    doc_["benchmarks"].push_back(b);
  }
  return finished;
}

std::size_t ResultsMerger::entries() const {
  std::size_t n = doc_["benchmarks"].size();
  for (const auto& [device, runs] : live_) n += runs.size();
  return n;
}

std::size_t ResultsMerger::peek(int device, const std::string& path) {
  json runs = runs_of(device, path);
  const std::size_t n = runs.size();
  live_[device] = std::move(runs);
  return n;
}

void ResultsMerger::add_missing(int device, const std::vector<std::string>& names, const std::string& death) {
  const std::string why = death.empty() ? "the child process exited without a result for this case"
                                        : fmt::format("the child process running this case's heap group {}", death);
  for (const auto& name : names) {
    json e = error_entry(tag_ ? with_device(name, device) : name, why);
    if (tag_) e["gpu_index"] = device;
    if (axis_values_of_) {
      if (json values = axis_values_of_(name); !values.is_null()) e[kAxisValuesKey] = std::move(values);
    }
    doc_["benchmarks"].push_back(std::move(e));
    ++errors_added_;
  }
}

void ResultsMerger::adopt(json doc) {
  doc_ = std::move(doc);
  if (!doc_.contains("benchmarks") || !doc_["benchmarks"].is_array()) doc_["benchmarks"] = json::array();
  errors_added_ = 0;  // counts what this merger adds, not what the document held
}

const json& ResultsMerger::document() const {
  composed_ = doc_;
  for (const auto& [device, runs] : live_) {
    for (const json& b : runs) composed_["benchmarks"].push_back(b);
  }
  for (const auto& [k, v] : extra_context_) composed_["context"][k] = v;
  return composed_;
}

void ResultsMerger::write(const std::string& path) const { write_atomically(path, document().dump(2) + '\n'); }

void RunManifest::write(const std::string& path) const {
  json children_json = json::array();
  for (const auto& [device, file] : children) children_json.push_back({{"device", device}, {"file", file}});
  write_atomically(path, json{{"tag_devices", tag_devices}, {"wrote_results", wrote_results},
                              {"children", children_json}}.dump(2));
}

RunManifest RunManifest::read(const std::string& path) {
  const json j = read_json(path);
  RunManifest m;
  if (!j.is_object()) return m;
  m.tag_devices = j.value("tag_devices", false);
  m.wrote_results = j.value("wrote_results", false);
  for (const json& c : j.value("children", json::array())) {
    m.children.emplace_back(c.value("device", 0), c.value("file", ""));
  }
  return m;
}

std::size_t recover_interrupted_run(const std::string& out_path, const std::string& groups_path) {
  const RunManifest m = RunManifest::read((std::filesystem::path(groups_path) / kManifestName).string());
  ResultsMerger merger(m.tag_devices);
  std::size_t before = 0;
  if (m.wrote_results) {
    const json doc = read_json(out_path);
    if (doc.is_object()) {
      merger.adopt(doc);
      before = merger.entries();
    }
  }
  for (const auto& [device, file] : m.children) merger.add_runs(device, file, /*skip_present=*/true);
  const std::size_t added = merger.entries() - before;
  if (added > 0) merger.write(out_path);
  return added;
}

}  // namespace heapbench
