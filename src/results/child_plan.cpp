#include "results/child_plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "cases/axes.hpp"
#include "cases/axis_values.hpp"
#include "results/results_file.hpp"

namespace heapbench {
namespace {

using nlohmann::json;

constexpr int kChildPlanVersion = 2;  // 2: "inputs", the content hash of each file its cases read

// The --graph and --trace files of the child's own command line, by the names
// the planner gave their cases (sweep.cpp).
void attach_files(Case& c, const std::vector<Sweep>& sweeps) {
  for (const Sweep& s : sweeps) {
    if (!c.graph.empty() && !s.graph_file.empty() &&
        std::find(s.graphs.begin(), s.graphs.end(), c.graph) != s.graphs.end()) {
      c.graph_file = s.graph_file;
    }
    if (!c.trace.empty() && s.trace == c.trace) c.trace_file = s.trace_file;
  }
}

// The file a case reads ("": none).
const std::string& input_of(const Case& c) { return !c.trace_file.empty() ? c.trace_file : c.graph_file; }

}  // namespace

void write_child_plan(const std::string& path, const ChildPlan& plan) {
  json cases = json::array();
  json inputs = json::object();  // path -> content hash, as the parent read it: the child's rounds are pinned to it
  for (const Case& c : plan.cases) {
    cases.push_back(json(axis_values(c)));
    if (!input_of(c).empty()) inputs[input_of(c)] = c.input_hash;
  }
  const json doc = {{"heapbench_child_plan", kChildPlanVersion},
                    {"context_and_header", plan.context_and_header},
                    {"name_width", plan.name_width},
                    {"inputs", std::move(inputs)},
                    {"cases", std::move(cases)}};
  write_atomically(path, doc.dump(1) + '\n');
}

ChildPlan read_child_plan(const std::string& path, const std::vector<Sweep>& sweeps) {
  const auto refuse = [&](const std::string& why) {
    return std::runtime_error(fmt::format("--child-plan={}: {}", path, why));
  };
  std::ifstream in(path);
  if (!in) throw refuse("cannot be read");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw refuse(fmt::format("not JSON: {}", e.what()));
  }
  if (!doc.is_object() || doc.value("heapbench_child_plan", 0) != kChildPlanVersion || !doc.contains("cases") ||
      !doc["cases"].is_array() || !doc.value("context_and_header", json()).is_boolean() ||
      !doc.value("name_width", json()).is_number_unsigned() || !doc.value("inputs", json()).is_object()) {
    throw refuse(fmt::format("not a plan this heapbench writes (heapbench_child_plan {})", kChildPlanVersion));
  }
  ChildPlan plan;
  plan.context_and_header = doc["context_and_header"].get<bool>();
  plan.name_width = doc["name_width"].get<std::size_t>();
  for (const json& v : doc["cases"]) {
    try {
      plan.cases.push_back(case_from_axis_values(v));
    } catch (const std::invalid_argument& e) {
      throw refuse(fmt::format("case {}: {}", plan.cases.size() + 1, e.what()));
    }
    Case& c = plan.cases.back();
    attach_files(c, sweeps);
    if (!input_of(c).empty()) {
      const json& hash = doc["inputs"].value(input_of(c), json());
      if (!hash.is_string()) throw refuse(fmt::format("case {}: no content hash for {}", plan.cases.size(), input_of(c)));
      c.input_hash = hash.get<std::string>();  // the parent's, never this child's own read of the file
    }
  }
  if (plan.cases.empty()) throw refuse("no case");
  return plan;
}

}  // namespace heapbench
