// A child of --isolate/--devices runs the cases its parent hands it: each case
// written as its axis_values (the axis table) and made again from them, the
// same case, with the run's measuring settings beside them; a damaged plan
// file is refused in one line naming it.
#include "orchestrate/child_plan.hpp"
#include "cases/case_naming.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cases/axes.hpp"
#include "cases/case_input.hpp"
#include "cases/axis_values.hpp"
#include "cases/catalog.hpp"
#include "plan/sweep.hpp"

namespace heapbench {
namespace {

namespace fs = std::filesystem;

// Every field a pattern's rounds read, compared (the file names too).
void expect_same_case(const Case& a, const Case& b) {
  EXPECT_EQ(a.pattern, b.pattern);
  EXPECT_EQ(a.api, b.api);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.align, b.align);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.limit_bytes, b.limit_bytes);
  EXPECT_EQ(a.size_min, b.size_min);
  EXPECT_EQ(a.axis("writes"), b.axis("writes"));
  EXPECT_EQ(a.axis("load_pct"), b.axis("load_pct"));
  EXPECT_EQ(a.graph, b.graph);
  EXPECT_EQ(input_path(a), input_path(b));
  EXPECT_EQ(a.trace, b.trace);
  EXPECT_EQ(input_hash(a), input_hash(b));
}

TEST(ChildPlan, EveryPlannedCaseOfEverySweepIsMadeAgainFromItsAxisValues) {
  for (const auto& sweeps : {default_sweep(), quick_sweep(), workloads_sweep(), size_map_sweep()}) {
    const std::vector<Case> cases = plan_cases(sweeps);
    ASSERT_FALSE(cases.empty());
    for (const Case& c : cases) {
      const Case back = case_from_axis_values(nlohmann::json(axis_values(c)));
      SCOPED_TRACE(case_name(c));
      EXPECT_EQ(case_name(back), case_name(c));
      expect_same_case(back, c);
    }
  }
}

TEST(ChildPlan, AWrittenPlanReadsBackWithItsRunAndTheChildsOwnFile) {
  const fs::path dir = fs::temp_directory_path() / ("heapbench_plan_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // --graph=FILE: the parent read it; the child is handed its path on its own command line.
  std::vector<Sweep> sweeps = workloads_sweep();
  Sweep file_part = sweeps[2];
  ASSERT_EQ(file_part.patterns, std::vector<std::string>{"graph"});
  file_part.graphs = {"road"};
  file_part.graph_file = "/data/road.mtx";
  file_part.input_hash = "0123456789abcdef";  // as the parent read the file
  file_part.set("threads", {100});
  sweeps.push_back(file_part);
  ChildPlan plan;
  plan.cases = plan_cases(sweeps);
  plan.context_and_header = false;
  plan.name_width = 71;
  plan.run.device = 3;
  plan.run.rule.max_noise = 0.0125;
  plan.run.rule.min_rounds = 7;
  plan.run.rule.max_time_s = 0.1;  // not exact in binary: it must come back the same double
  plan.run.kernel_budget_s = 2.5;
  plan.run.profile_iterations = 4;
  plan.run.sweep = "workloads";
  plan.run.benchmark_args = {"/opt/heapbench", "--benchmark_min_time=1x", "--benchmark_repetitions=3"};
  plan.run.benchmark_flags.format = "json";
  plan.run.benchmark_flags.repetitions = 3;
  plan.run.benchmark_flags.color = false;
  plan.run.benchmark_flags.counters_tabular = true;
  plan.run.parent_args = {"--sweep=workloads", "--graph=/data/road.mtx", "--benchmark_out=r.json"};
  EXPECT_EQ(child_input_of(plan), "/data/road.mtx");
  const std::string path = (dir / "device3_heap1024_0.plan").string();
  write_child_plan(path, plan);
  const ChildPlan back = read_child_plan(path, "/elsewhere/road.mtx");
  EXPECT_FALSE(back.context_and_header);
  EXPECT_EQ(back.name_width, 71u);
  EXPECT_EQ(back.run.device, 3);
  EXPECT_EQ(back.run.rule.max_noise, 0.0125);
  EXPECT_EQ(back.run.rule.min_rounds, 7);
  EXPECT_EQ(back.run.rule.max_time_s, 0.1);
  EXPECT_EQ(back.run.kernel_budget_s, 2.5);
  EXPECT_EQ(back.run.profile_iterations, 4);
  EXPECT_EQ(back.run.sweep, "workloads");
  EXPECT_EQ(back.run.benchmark_args, plan.run.benchmark_args);
  EXPECT_EQ(back.run.benchmark_flags.format, "json");
  EXPECT_EQ(back.run.benchmark_flags.repetitions, 3);
  EXPECT_EQ(back.run.benchmark_flags.color, false);
  EXPECT_TRUE(back.run.benchmark_flags.counters_tabular);
  EXPECT_EQ(back.run.parent_args, plan.run.parent_args);
  ASSERT_EQ(back.cases.size(), plan.cases.size());
  std::size_t reading = 0;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    SCOPED_TRACE(case_name(plan.cases[i]));
    Case expected = plan.cases[i];
    if (!input_path(expected).empty()) {
      // The child's own path, never the plan's; the parent's content hash (issue 53, G6).
      set_input(expected, "/elsewhere/road.mtx", input_hash(expected));
      EXPECT_EQ(input_hash(back.cases[i]), "0123456789abcdef");
      ++reading;
    } else {
      EXPECT_TRUE(input_hash(back.cases[i]).empty());
      EXPECT_EQ(back.cases[i].input, nullptr);
    }
    expect_same_case(back.cases[i], expected);
  }
  EXPECT_GT(reading, 0u);
  // Its cases read a file: without one, or with a file of another name, the plan is refused.
  EXPECT_THROW(read_child_plan(path, ""), std::runtime_error);
  try {
    read_child_plan(path, "/data/rail.mtx");
    ADD_FAILURE() << "a file of another name was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("reads 'road', not this file"), std::string::npos) << e.what();
  }
  // A plan whose cases read no file refuses one.
  ChildPlan plain;
  plain.cases = plan_cases(default_sweep());
  plain.run.benchmark_args = {"heapbench"};
  write_child_plan(path, plain);
  EXPECT_EQ(child_input_of(plain), "");
  EXPECT_EQ(read_child_plan(path, "").cases.size(), plain.cases.size());
  EXPECT_THROW(read_child_plan(path, "/data/road.mtx"), std::runtime_error);
  fs::remove_all(dir);
}

std::string refusal_of(const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("heapbench_badplan_" + std::to_string(::getpid()));
  std::ofstream(p) << text;
  std::string why;
  try {
    read_child_plan(p.string(), "");
  } catch (const std::runtime_error& e) {
    why = e.what();
  }
  fs::remove(p);
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  EXPECT_EQ(why.rfind("--child-plan=", 0), 0u) << why;
  return why;
}

TEST(ChildPlan, ADamagedPlanIsRefusedInOneLine) {
  const std::string run = R"("run": {"device": 0, "max_noise": 0.005, "min_rounds": 5, "max_time_s": 0.5, "kernel_budget_s": 5, "profile_iterations": 0, "sweep": "default", "benchmark_args": ["heapbench"], "benchmark_flags": {"format": "console", "repetitions": 1, "color": null, "counters_tabular": false}, "parent_args": []})";
  const std::string head = R"({"heapbench_child_plan": 4, "context_and_header": true, "name_width": 0, )" + run +
                           R"(, "input": {"content_hash": "", "cases": []}, "cases": )";
  const std::string good = R"({"pattern": "per_thread", "api": "malloc", "size": 64, "threads": 32, "malloc_heap": 8388608})";
  EXPECT_NE(refusal_of("{ half").find("not JSON"), std::string::npos);
  EXPECT_NE(refusal_of(R"({"cases": []})").find("not a plan this heapbench writes"), std::string::npos);
  EXPECT_NE(refusal_of(head + "[]}").find("no case"), std::string::npos);
  EXPECT_NE(refusal_of(head + "[" + good + ", 7]}").find("case 2:"), std::string::npos);
  EXPECT_NE(refusal_of(head + R"([{"pattern": "per_thread", "api": "nope", "size": 64, "threads": 32, "malloc_heap": 8}]})")
                .find("no API 'nope'"), std::string::npos);
  // A key that is no axis, a value of the wrong type, an axis the pattern does not take, a missing one.
  EXPECT_NE(refusal_of(head + R"([{"pattern": "per_thread", "api": "malloc", "size": 64, "threads": 32, "malloc_heap": 8, "colour": 1}]})")
                .find("'colour' is not an axis"), std::string::npos);
  EXPECT_NE(refusal_of(head + R"([{"pattern": "per_thread", "api": "malloc", "size": "64", "threads": 32, "malloc_heap": 8}]})")
                .find("axis 'size' must be an integer"), std::string::npos);
  EXPECT_NE(refusal_of(head + R"([{"pattern": "per_thread", "api": "malloc", "size": 64, "threads": 32, "malloc_heap": 8, "load_pct": 50}]})")
                .find("is not a case's axis_values"), std::string::npos);
  EXPECT_NE(refusal_of(head + R"([{"pattern": "per_thread", "api": "malloc", "size": 64, "malloc_heap": 8}]})")
                .find("is not a case's axis_values"), std::string::npos);
  EXPECT_NE(refusal_of(head + R"([{"pattern": "printf", "api": "printf", "size": 8, "threads": 32, "malloc_heap": 8}]})")
                .find("is not a case's axis_values"), std::string::npos);
  // The run: a field missing or of the wrong type; an input case that is none of the plan's.
  std::string no_device = head;
  no_device.replace(no_device.find(R"("device": 0, )"), 13, "");
  EXPECT_NE(refusal_of(no_device + "[" + good + "]}").find("run.device is missing or of the wrong type"),
            std::string::npos);
  std::string bad_args = head;
  bad_args.replace(bad_args.find(R"(["heapbench"])"), 13, "[7]");
  EXPECT_NE(refusal_of(bad_args + "[" + good + "]}").find("run.benchmark_args is missing"), std::string::npos);
  // The checked Google Benchmark flags: the child takes them from the plan, never parses them again.
  std::string bad_format = head;
  bad_format.replace(bad_format.find(R"("format": "console")"), 19, R"("format": "xml")");
  EXPECT_NE(refusal_of(bad_format + "[" + good + "]}").find("run.benchmark_flags.format"), std::string::npos);
  std::string no_reps = head;
  no_reps.replace(no_reps.find(R"("repetitions": 1)"), 16, R"("repetitions": 0)");
  EXPECT_NE(refusal_of(no_reps + "[" + good + "]}").find("run.benchmark_flags.repetitions"), std::string::npos);
  // As many repetitions as the parent's parser takes (an int) reach the child.
  std::string many = head;
  many.replace(many.find(R"("repetitions": 1)"), 16, R"("repetitions": 2000000)");
  {
    const fs::path path = fs::temp_directory_path() / ("heapbench_manyreps_" + std::to_string(::getpid()));
    std::ofstream(path) << many + "[" + good + "]}";
    EXPECT_EQ(read_child_plan(path.string(), "").run.benchmark_flags.repetitions, 2000000);
    fs::remove(path);
  }
  std::string too_many = head;
  too_many.replace(too_many.find(R"("repetitions": 1)"), 16, R"("repetitions": 4294967296)");
  EXPECT_NE(refusal_of(too_many + "[" + good + "]}").find("run.benchmark_flags.repetitions"), std::string::npos);
  std::string stray = head;
  stray.replace(stray.find(R"("cases": []})"), 12, R"("cases": [4]})");
  EXPECT_NE(refusal_of(stray + "[" + good + "]}").find("its cases read a file"), std::string::npos);
}

TEST(AxisTable, NamesAxisValuesAndTheSchemaFollowTheRowsInOrder) {
  const Case c = make_case("per_block", "aligned", 100, 4096, 32, 1024 * kMiB);
  std::vector<std::string> keys;
  const nlohmann::ordered_json values = axis_values(c);
  for (const auto& [k, v] : values.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"pattern", "api", "size", "align", "threads", "malloc_heap"}));
  const nlohmann::ordered_json schema = axis_values_schema();
  std::vector<std::string> rows;
  for (const AxisDecl& a : axis_table()) rows.emplace_back(a.key);
  std::vector<std::string> properties;
  for (const auto& [k, v] : schema["properties"].items()) properties.push_back(k);
  EXPECT_EQ(properties, rows);
  EXPECT_EQ(schema["required"], nlohmann::ordered_json({"pattern", "api", "size", "threads"}));
  EXPECT_EQ(schema["oneOf"].size(), 2u);
  EXPECT_EQ(schema["properties"]["writes"]["enum"], nlohmann::ordered_json({0, 1}));
}

TEST(AxisTable, EachRowsKindAgreesWithItsValueItsNameAndItsSchema) {
  for (const AxisDecl& a : axis_table()) {
    SCOPED_TRACE(std::string(a.key));
    // Names are strings a case holds; every other kind an integer, a field or kept by key.
    EXPECT_EQ(a.text(), a.text_of != nullptr);
    if (a.text()) EXPECT_EQ(a.field, nullptr);
    // A heap is whole MiB, and its name says MiB; no other axis divides its value.
    EXPECT_EQ(a.kind == ValueKind::whole_mib, a.name_divisor == kMiB);
    EXPECT_EQ(a.kind == ValueKind::switch01, a.schema == R"({"enum": [0, 1]})");
    // A swept axis's flag takes integers.
    if (a.is_swept()) EXPECT_FALSE(a.text());
  }
  EXPECT_EQ(find_axis("align")->kind, ValueKind::power_of_two);
}

TEST(AxisTable, EveryAxisAPatternNamesIsARowItTakesAndKeyedValuesRoundTrip) {
  for (const PatternTraits* p : kPatternTraits) {
    for (std::string_view key : p->axes) {
      if (key.empty()) continue;
      const AxisDecl* a = find_axis(key);
      ASSERT_NE(a, nullptr) << p->name << " names '" << key << "', no row of the axis table";
      EXPECT_EQ(a->presence, AxisPresence::pattern_takes) << p->name << ": " << key;
    }
  }
  std::size_t keyed = 0;
  for (const AxisDecl& a : axis_table()) keyed += a.keyed() ? 1 : 0;
  EXPECT_LE(keyed, Case{}.keyed_axes.size());
  // An unset keyed axis reads as its row's default; a set one as set, in the name and axis_values too.
  Case h = make_case("hash", "malloc", 64, 0, 1000, 64 * kMiB);
  EXPECT_EQ(h.axis("load_pct"), 100u);
  h.set_axis("load_pct", 250);
  h.size_min = 16;
  EXPECT_EQ(h.axis("load_pct"), 250u);
  EXPECT_NE(case_name(h).find("/load_pct:250/"), std::string::npos) << case_name(h);
  EXPECT_EQ(axis_values(h)["load_pct"], 250);
  EXPECT_EQ(case_from_axis_values(nlohmann::json(axis_values(h))).axis("load_pct"), 250u);
  EXPECT_EQ(Case{}.axis("writes"), 1u);
  EXPECT_THROW(h.axis("size"), std::invalid_argument) << "size is a field of its own";
  EXPECT_THROW(h.axis("load_pcts"), std::invalid_argument);
}

}  // namespace
}  // namespace heapbench
