#include "orchestrate/child_plan.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

#include "cases/axes.hpp"
#include "cases/axis_values.hpp"
#include "cases/case_input.hpp"
#include "report/results_file.hpp"
#include "cases/parse.hpp"  // name_of_file

namespace heapbench {
namespace {

using nlohmann::json;
using Refuse = std::function<std::runtime_error(const std::string&)>;

// 2: "inputs", the content hash of each file its cases read. 3: "run", the
// parent's measuring settings; the cases that read a file by index, with its
// hash (the path is the child's --child-input). 4: run.benchmark_flags, what
// the Google Benchmark flags heapbench checks say (the child parsed them again).
constexpr int kChildPlanVersion = 4;

json flags_json(const BenchmarkFlags& f) {
  return {{"format", f.format},
          {"repetitions", f.repetitions},
          {"color", f.color ? json(*f.color) : json(nullptr)},
          {"counters_tabular", f.counters_tabular}};
}

// run.benchmark_flags.<key>, present and as `ok` says, else the why.
const json& flag_field(const json& j, const char* key, bool (*ok)(const json&), const Refuse& refuse) {
  if (!j.contains(key) || !ok(j[key])) {
    throw refuse(fmt::format("run.benchmark_flags.{} is missing or of the wrong type", key));
  }
  return j[key];
}

BenchmarkFlags flags_from_json(const json& j, const Refuse& refuse) {
  if (!j.is_object()) throw refuse("run.benchmark_flags is missing or not an object");
  BenchmarkFlags f;
  f.format = flag_field(j, "format", [](const json& v) {
               const auto& formats = benchmark_formats();
               return v.is_string() && std::find(formats.begin(), formats.end(), v.get<std::string>()) != formats.end();
             }, refuse).get<std::string>();
  f.repetitions = flag_field(j, "repetitions", [](const json& v) {
                    // What the parent's --benchmark_repetitions takes: a whole number of at least 1, an int.
                    return v.is_number_integer() && v.get<long long>() >= 1 &&
                           v.get<long long>() <= std::numeric_limits<int>::max();
                  }, refuse).get<int>();
  const json& color = flag_field(j, "color", [](const json& v) { return v.is_null() || v.is_boolean(); }, refuse);
  if (color.is_boolean()) f.color = color.get<bool>();
  f.counters_tabular = flag_field(j, "counters_tabular", [](const json& v) { return v.is_boolean(); }, refuse).get<bool>();
  return f;
}

json run_json(const ChildRun& r) {
  return {{"device", r.device},
          {"max_noise", r.rule.max_noise},
          {"min_rounds", r.rule.min_rounds},
          {"max_time_s", r.rule.max_time_s},
          {"kernel_budget_s", r.kernel_budget_s},
          {"profile_iterations", r.profile_iterations},
          {"sweep", r.sweep},
          {"benchmark_args", r.benchmark_args},
          {"benchmark_flags", flags_json(r.benchmark_flags)},
          {"parent_args", r.parent_args}};
}

// The plan's "run", each field of its type, else the why.
ChildRun run_from_json(const json& j, const Refuse& refuse) {
  const auto need = [&](const char* key, bool ok) {
    if (!ok) throw refuse(fmt::format("run.{} is missing or of the wrong type", key));
  };
  need("device", j.contains("device") && j["device"].is_number_integer());
  for (const char* key : {"max_noise", "max_time_s", "kernel_budget_s"}) need(key, j.contains(key) && j[key].is_number());
  for (const char* key : {"min_rounds", "profile_iterations"}) {
    need(key, j.contains(key) && j[key].is_number_integer());
  }
  need("sweep", j.contains("sweep") && j["sweep"].is_string());
  for (const char* key : {"benchmark_args", "parent_args"}) {
    bool strings = j.contains(key) && j[key].is_array();
    if (strings) {
      for (const json& a : j[key]) strings = strings && a.is_string();
    }
    need(key, strings);
  }
  ChildRun r;
  r.device = j["device"].get<int>();
  r.rule.max_noise = j["max_noise"].get<double>();
  r.rule.min_rounds = j["min_rounds"].get<int>();
  r.rule.max_time_s = j["max_time_s"].get<double>();
  r.kernel_budget_s = j["kernel_budget_s"].get<double>();
  r.profile_iterations = j["profile_iterations"].get<int>();
  r.sweep = j["sweep"].get<std::string>();
  r.benchmark_args = j["benchmark_args"].get<std::vector<std::string>>();
  r.parent_args = j["parent_args"].get<std::vector<std::string>>();
  if (r.benchmark_args.empty()) throw refuse("run.benchmark_args has no program name");
  r.benchmark_flags = flags_from_json(j.contains("benchmark_flags") ? j["benchmark_flags"] : json(), refuse);
  return r;
}

}  // namespace

ChildRun child_run_of(const Options& o) {
  ChildRun r;
  r.rule = o.rule;
  r.kernel_budget_s = o.kernel_budget_s;
  r.profile_iterations = o.profile ? o.profile_iterations : 0;
  r.sweep = o.sweep;
  r.benchmark_args = o.benchmark_args;
  r.benchmark_flags = o.benchmark_flags;
  r.parent_args = o.raw_args;
  return r;
}

void take_child_run(ChildRun r, Options& o) {
  o.device = r.device;
  o.rule = r.rule;
  o.kernel_budget_s = r.kernel_budget_s;
  o.profile = r.profile_iterations > 0;
  if (o.profile) o.profile_iterations = r.profile_iterations;
  o.sweep = std::move(r.sweep);
  o.benchmark_args = std::move(r.benchmark_args);
  o.benchmark_flags = r.benchmark_flags;
  o.raw_args = std::move(r.parent_args);
}

std::string child_input_of(const ChildPlan& plan) {
  for (const Case& c : plan.cases) {
    if (!input_path(c).empty()) return input_path(c);
  }
  return {};
}

void write_child_plan(const std::string& path, const ChildPlan& plan) {
  json cases = json::array();
  json reading = json::array();  // the cases that read the run's one --trace or --graph file
  std::string hash;              // its content hash, as the parent read it: the child's rounds are pinned to it
  const std::string input = child_input_of(plan);
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    const Case& c = plan.cases[i];
    cases.push_back(json(axis_values(c)));
    if (input_path(c).empty()) continue;
    if (input_path(c) != input || (!hash.empty() && input_hash(c) != hash)) {
      throw std::logic_error("a child plan's cases read one file, at one content hash");
    }
    reading.push_back(i);
    hash = input_hash(c);
  }
  const json doc = {{"heapbench_child_plan", kChildPlanVersion},
                    {"context_and_header", plan.context_and_header},
                    {"name_width", plan.name_width},
                    {"run", run_json(plan.run)},
                    {"input", {{"content_hash", hash}, {"cases", std::move(reading)}}},
                    {"cases", std::move(cases)}};
  write_atomically(path, doc.dump(1) + '\n');
}

namespace {

// The plan file as JSON, of the shape write_child_plan writes, else the why.
json plan_document(const std::string& path, const Refuse& refuse) {
  std::ifstream in(path);
  if (!in) throw refuse("cannot be read");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw refuse(fmt::format("not JSON: {}", e.what()));
  }
  const json none;
  if (!doc.is_object() || doc.value("heapbench_child_plan", 0) != kChildPlanVersion || !doc.contains("cases") ||
      !doc["cases"].is_array() || !doc.value("context_and_header", none).is_boolean() ||
      !doc.value("name_width", none).is_number_unsigned() || !doc.value("run", none).is_object() ||
      !doc.value("input", none).is_object() || !doc["input"].value("content_hash", none).is_string() ||
      !doc["input"].value("cases", none).is_array()) {
    throw refuse(fmt::format("not a plan this heapbench writes (heapbench_child_plan {})", kChildPlanVersion));
  }
  return doc;
}

// The plan's cases that read a file (`reading`, by index) read `input`, at the parent's `hash`.
void attach_input(std::vector<Case>& cases, const json& reading, const std::string& hash, const std::string& input,
                  const Refuse& refuse) {
  if (reading.empty() != input.empty()) {
    throw refuse(reading.empty() ? fmt::format("--child-input={}: no case of the plan reads a file", input)
                                 : std::string("its cases read a file: give it as --child-input"));
  }
  for (const json& i : reading) {
    if (!i.is_number_unsigned() || i.get<std::size_t>() >= cases.size()) {
      throw refuse(fmt::format("input.cases: {} is no case of the plan's", i.dump()));
    }
    Case& c = cases[i.get<std::size_t>()];
    // The file's name is the case's trace or graph name: the file the parent read.
    const std::string& name = !c.trace.empty() ? c.trace : c.graph;
    if (name.empty() || name != name_of_file(input)) {
      throw refuse(fmt::format("--child-input={}: case {} reads '{}', not this file", input,
                               i.get<std::size_t>() + 1, name));
    }
    set_input(c, input, hash);  // the parent's hash, never this child's own read of the file
  }
}

}  // namespace

ChildPlan read_child_plan(const std::string& path, const std::string& input) {
  const Refuse refuse = [&](const std::string& why) {
    return std::runtime_error(fmt::format("--child-plan={}: {}", path, why));
  };
  const json doc = plan_document(path, refuse);
  ChildPlan plan;
  plan.context_and_header = doc["context_and_header"].get<bool>();
  plan.name_width = doc["name_width"].get<std::size_t>();
  plan.run = run_from_json(doc["run"], refuse);
  for (const json& v : doc["cases"]) {
    try {
      plan.cases.push_back(case_from_axis_values(v));
    } catch (const std::invalid_argument& e) {
      throw refuse(fmt::format("case {}: {}", plan.cases.size() + 1, e.what()));
    }
  }
  if (plan.cases.empty()) throw refuse("no case");
  attach_input(plan.cases, doc["input"]["cases"], doc["input"]["content_hash"].get<std::string>(), input, refuse);
  return plan;
}

}  // namespace heapbench
