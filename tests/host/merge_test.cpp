#include "orchestrate/merge.hpp"
#include "cases/case_naming.hpp"

#include "cases/axis_values.hpp"
#include "heapbench/case.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

namespace heapbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json axes_of(const Case& c) { return json(axis_values(c)); }

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("heapbench_merge_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Its context names its device as a child's does (gpu_index, a string): the
  // N of a deviceN_ file, else none.
  std::string child(const std::string& file, const std::string& gpu, const std::vector<std::string>& finished) {
    json doc{{"context", {{"gpu_name", gpu}, {"heapbench_schema_version", "1"}}}, {"benchmarks", json::array()}};
    const std::string base = fs::path(file).filename().string();
    if (base.rfind("device", 0) == 0) doc["context"]["gpu_index"] = base.substr(6, base.find('_') - 6);
    for (const auto& n : finished) {
      doc["benchmarks"].push_back({{"name", n}, {"run_name", n}, {"run_type", "iteration"}, {"allocs_per_s", 1e6},
                                   {"axis_values", {{"size", 64}}}});
    }
    const auto p = (dir_ / file).string();
    std::ofstream(p) << doc.dump();
    return p;
  }
  // A child's file as SnapshotReporter writes it for real cases: each entry
  // named as the harness names it, with its case's axis values.
  std::string child_of(const std::string& file, const std::string& gpu, const std::vector<Case>& finished) {
    std::vector<std::string> names;
    for (const Case& c : finished) names.push_back(entry_name(c));
    const auto p = child(file, gpu, names);
    json doc = json::parse(std::ifstream(p));
    for (std::size_t i = 0; i < finished.size(); ++i) doc["benchmarks"][i]["axis_values"] = axes_of(finished[i]);
    std::ofstream(p) << doc.dump();
    return p;
  }
  static std::string entry_name(const Case& c) { return case_name(c) + "/manual_time"; }
  fs::path dir_;
};

// The harness makes error entries with Google Benchmark's writer
// (snapshot_reporter.hpp); this library's tests, which do not link it, with the
// fields that writer gives a failed run.
json stand_in_error_entry(const std::string& name, const std::string& message) {
  return {{"name", name},      {"run_name", name}, {"run_type", "iteration"}, {"repetitions", 1},
          {"repetition_index", 0}, {"threads", 1},   {"iterations", 0},         {"real_time", 0.0},
          {"cpu_time", 0.0},   {"time_unit", "ms"}, {"error_occurred", true},  {"error_message", message}};
}

// Planned cases by name, with the axis values child() gives every entry. The
// merger takes a child's cases as src/orchestrate/orchestrate.cpp gives them when the
// child ends: add_runs, whose names say what the child finished, then
// add_missing for the planned cases it did not (each with its axis values).
std::vector<PlannedEntry> planned(std::initializer_list<const char*> names) {
  std::vector<PlannedEntry> out;
  for (const char* n : names) out.push_back({n, {{"size", 64}}});
  return out;
}

// A case's planned record as the orchestrator makes it (entries()).
PlannedEntry planned_case(const Case& c) { return {case_name(c) + "/manual_time", axis_values(c)}; }

using Names = std::set<std::string>;

TEST_F(MergeTest, GroupsAppendInOrderAndKeepTheFirstContext) {
  ResultsMerger m(false, stand_in_error_entry);
  EXPECT_EQ(m.add_runs(0, child("a.json", "GPU A", {"x/heap:8/manual_time"})), Names{"x/heap:8/manual_time"});
  EXPECT_EQ(m.add_runs(0, child("b.json", "GPU B", {"x/heap:64/manual_time"})), Names{"x/heap:64/manual_time"});
  const json& d = m.document();
  ASSERT_EQ(m.entries(), 2u);
  EXPECT_EQ(d["benchmarks"][0]["name"], "x/heap:8/manual_time");
  EXPECT_EQ(d["benchmarks"][1]["name"], "x/heap:64/manual_time");
  EXPECT_EQ(d["context"]["gpu_name"], "GPU A");
  EXPECT_EQ(m.errors_added(), 0u);
}

TEST_F(MergeTest, EntriesKeepTheirAxisValuesAndMadeUpErrorsGetTheirCases) {
  const Case a = make_case("per_thread", "malloc", 16, 0, 32, 8 * kMiB);
  const Case b = make_case("printf", "printf", 8, 0, 32, 1 * kMiB);
  ResultsMerger m(true, stand_in_error_entry);
  EXPECT_EQ(m.add_runs(1, child_of("a.json", "GPU A", {a})), Names{planned_case(a).name})
      << "the names the child finished, untagged, as the orchestrator compares them with its plan";
  m.add_missing(1, {planned_case(b)}, "was killed by signal 9 (Killed)");
  const json& d = m.document();
  ASSERT_EQ(d["benchmarks"].size(), 2u);
  EXPECT_EQ(d["benchmarks"][0]["name"], planned_case(a).name + "/device:1");
  EXPECT_EQ(d["benchmarks"][0]["axis_values"], axes_of(a)) << "a device tag leaves the axes alone";
  EXPECT_EQ(d["benchmarks"][1]["name"], planned_case(b).name + "/device:1");
  EXPECT_EQ(d["benchmarks"][1]["gpu_index"], 1);
  EXPECT_EQ(d["benchmarks"][1]["axis_values"], axes_of(b)) << "a made-up error result carries its case's axes";
}

TEST_F(MergeTest, WhatADeadChildDidNotFinishBecomesErrorResults) {
  const Case done = make_case("per_thread", "malloc", 64, 0, 32, 8 * kMiB);
  const Case second = make_case("per_thread", "malloc", 128, 0, 32, 8 * kMiB);
  const Case third = make_case("per_thread", "malloc", 256, 0, 32, 8 * kMiB);
  const Case other_heap = make_case("per_thread", "malloc", 64, 0, 32, 64 * kMiB);
  ResultsMerger m(false, stand_in_error_entry);
  EXPECT_EQ(m.add_runs(0, child_of("a.json", "GPU A", {done})), Names{planned_case(done).name});
  m.add_missing(0, {planned_case(second), planned_case(third)}, "was killed by signal 6 (Aborted)");
  EXPECT_EQ(m.add_runs(0, (dir_ / "never_written.json").string()), Names{}) << "a child that wrote nothing finished nothing";
  m.add_missing(0, {planned_case(other_heap)}, "was killed by signal 9 (Killed)");
  const json& e = m.document()["benchmarks"];
  ASSERT_EQ(e.size(), 4u);
  EXPECT_FALSE(e[0].contains("error_occurred"));
  for (int i = 1; i < 4; ++i) {
    EXPECT_TRUE(e[i]["error_occurred"].get<bool>());
    EXPECT_FALSE(e[i].contains("allocs_per_s")) << "an error result carries no figure";
  }
  EXPECT_EQ(e[1]["name"], planned_case(second).name);
  EXPECT_EQ(e[2]["axis_values"], axes_of(third));
  EXPECT_NE(e[1]["error_message"].get<std::string>().find("signal 6"), std::string::npos);
  EXPECT_NE(e[3]["error_message"].get<std::string>().find("signal 9"), std::string::npos);
  EXPECT_EQ(m.errors_added(), 3u);
  EXPECT_EQ(m.runs_merged(), 1u);
}

TEST_F(MergeTest, DevicesAreTaggedSoTheSameCaseOnTwoGpusStaysTwoCases) {
  ResultsMerger m(true, stand_in_error_entry);
  m.add_runs(0, child("d0.json", "GPU A", {"x/manual_time"}));
  m.add_runs(1, child("d1.json", "GPU B", {"x/manual_time"}));
  const json& d = m.document();
  ASSERT_EQ(m.entries(), 2u);
  EXPECT_EQ(d["benchmarks"][0]["name"], "x/manual_time/device:0");
  EXPECT_EQ(d["benchmarks"][1]["run_name"], "x/manual_time/device:1");
  EXPECT_EQ(d["benchmarks"][1]["gpu_index"], 1);
  ASSERT_EQ(d["context"]["devices"].size(), 2u);
  EXPECT_EQ(d["context"]["devices"][1]["gpu_name"], "GPU B");
  EXPECT_EQ(d["context"]["devices"][1]["gpu_index"], "1");
}

TEST_F(MergeTest, WriteIsAtomicAndReadable) {
  ResultsMerger m(false, stand_in_error_entry);
  m.add_runs(0, child("a.json", "GPU A", {"a/manual_time"}));
  const auto out = (dir_ / "merged.json").string();
  m.write(out);
  std::ifstream in(out);
  EXPECT_EQ(json::parse(in)["benchmarks"].size(), 1u);
  EXPECT_FALSE(fs::exists(out + ".tmp"));
}

TEST_F(MergeTest, AChildFileThatIsNotJsonIsAnError) {
  const auto p = (dir_ / "bad.json").string();
  std::ofstream(p) << "{ half";
  ResultsMerger m(false, stand_in_error_entry);
  EXPECT_THROW(m.add_runs(0, p), std::runtime_error);
}


TEST_F(MergeTest, ARunningChildsCasesShowAsTheyLandAndAreTakenOnceWhenItEnds) {
  ResultsMerger m(false, stand_in_error_entry);
  m.add_runs(0, child("a.json", "GPU A", {"a/heap:8"}));
  const auto running = child("b.json", "GPU A", {"b1/heap:64"});
  EXPECT_EQ(m.peek(0, running), 1u);
  EXPECT_EQ(m.entries(), 2u);
  child("b.json", "GPU A", {"b1/heap:64", "b2/heap:64"});  // the child replaced its file
  EXPECT_EQ(m.peek(0, running), 2u);
  EXPECT_EQ(m.entries(), 3u);
  EXPECT_EQ(m.document()["benchmarks"][2]["name"], "b2/heap:64");
  EXPECT_EQ(m.add_runs(0, running), (Names{"b1/heap:64", "b2/heap:64"}));
  m.add_missing(0, planned({"b3/heap:64"}), "was killed by signal 9 (Killed)");
  EXPECT_EQ(m.entries(), 4u) << "what peek showed is replaced by the child's final file, not added to it";
  EXPECT_EQ(m.runs_merged(), 3u);
}

TEST_F(MergeTest, NothingFinishedMeansNoRunsMerged) {
  // An interrupt before the first case: only made-up error results, which must not replace an earlier file.
  ResultsMerger m(false, stand_in_error_entry);
  EXPECT_EQ(m.add_runs(0, (dir_ / "never_written.json").string()), Names{});
  m.add_missing(0, planned({"a", "b"}), "was killed by signal 2 (Interrupt)");
  EXPECT_EQ(m.entries(), 2u);
  EXPECT_EQ(m.runs_merged(), 0u);
}

TEST_F(MergeTest, RecoveryKeepsTheKilledRunsMergedFileAndAddsWhatItHadNotSeen) {
  const auto out = (dir_ / "r.json").string();
  const fs::path groups = dir_ / "r.json.groups";
  fs::create_directories(groups);
  const auto f0 = child("r.json.groups/device0_heap8_0.json", "GPU", {"a"});
  const auto f1 = child("r.json.groups/device1_heap8_0.json", "GPU", {"a", "b"});
  // The killed run had merged device 0's case and device 1's first one, and an error result.
  const json axes{{"size", 64}};
  json merged{{"context", {{"gpu_name", "GPU"}, {"heapbench_schema_version", "1"}}},
              {"benchmarks",
               {{{"name", "a/device:0"}, {"axis_values", axes}},
                {{"name", "a/device:1"}, {"axis_values", axes}},
                {{"name", "c/device:0"}, {"axis_values", axes}, {"error_occurred", true}}}}};
  std::ofstream(out) << merged.dump();
  RunManifest manifest;
  manifest.tag_devices = true;
  manifest.wrote_results = true;
  manifest.children = {{0, f0}, {1, f1}};
  manifest.write((groups / kManifestName).string());
  EXPECT_EQ(recover_interrupted_run(out, groups.string()).added, 1u);
  std::ifstream in(out);
  const json doc = json::parse(in);
  std::vector<std::string> names;
  for (const auto& b : doc["benchmarks"]) names.push_back(b["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"a/device:0", "a/device:1", "c/device:0", "b/device:1"}));
}

TEST_F(MergeTest, RecoveryTakesEachChildsDeviceFromTheManifestNotItsFileName) {
  // Issue 54: the manifest holds (device, file) pairs, but recovery read the
  // device out of the file's name. Device 1's file renamed: once to a name
  // that says device 0, once to one that says none; its cases stay device 1's.
  const auto out = (dir_ / "r.json").string();
  const fs::path groups = dir_ / "r.json.groups";
  for (const char* renamed : {"device0_heap8_1.json", "group.json"}) {
    SCOPED_TRACE(renamed);
    fs::remove(out);
    fs::remove_all(groups);
    fs::create_directories(groups);
    const auto f0 = child("r.json.groups/device0_heap8_0.json", "GPU", {"a"});
    const auto f1 = child("r.json.groups/device1_heap8_0.json", "GPU", {"a", "b"});
    const std::string moved = (groups / renamed).string();
    fs::rename(f1, moved);
    RunManifest manifest;
    manifest.tag_devices = true;
    manifest.children = {{0, f0}, {1, moved}};
    manifest.write((groups / kManifestName).string());
    const Recovery r = recover_interrupted_run(out, groups.string());
    EXPECT_EQ(r.added, 3u);
    EXPECT_TRUE(r.skipped.empty()) << r.skipped.front();
    const json doc = json::parse(std::ifstream(out));
    std::vector<std::pair<std::string, int>> got;
    for (const auto& b : doc["benchmarks"]) got.emplace_back(b["name"], b["gpu_index"]);
    EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{{"a/device:0", 0}, {"a/device:1", 1}, {"b/device:1", 1}}));
  }
}

TEST_F(MergeTest, AChildFileNoManifestNamesTakesItsDeviceFromItsContextNeverItsName) {
  // Issue 54: without a manifest, recovery read a file's device out of its
  // name. Device 1's file under a name that says device 0: its context says 1,
  // and its cases are device 1's; a file whose context names no device is skipped, with why.
  const auto out = (dir_ / "r.json").string();
  const fs::path groups = dir_ / "r.json.groups";
  fs::create_directories(groups);
  child("r.json.groups/device0_heap8_0.json", "GPU", {"a"});
  const auto f1 = child("r.json.groups/device1_heap8_0.json", "GPU", {"a", "b"});
  fs::rename(f1, groups / "device0_heap16_0.json");
  json nameless{{"context", {{"gpu_name", "GPU"}, {"heapbench_schema_version", "1"}}}, {"benchmarks", json::array()}};
  nameless["benchmarks"].push_back({{"name", "z"}, {"run_name", "z"}, {"run_type", "iteration"}, {"axis_values", {{"size", 64}}}});
  std::ofstream((groups / "device0_heap32_0.json").string()) << nameless.dump();
  const Recovery r = recover_interrupted_run(out, groups.string());
  ASSERT_EQ(r.skipped.size(), 2u);
  EXPECT_NE(r.skipped[0].find("run.json (missing"), std::string::npos) << r.skipped[0];
  EXPECT_NE(r.skipped[1].find("device0_heap32_0.json (its context names no gpu_index"), std::string::npos) << r.skipped[1];
  const json doc = json::parse(std::ifstream(out));
  std::vector<std::pair<std::string, int>> got;
  for (const auto& b : doc["benchmarks"]) got.emplace_back(b["name"], b["gpu_index"]);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{{"a/device:1", 1}, {"b/device:1", 1}, {"a/device:0", 0}}));
}

TEST_F(MergeTest, RecoveryReadsEachChildFileOnItsOwnAndNothingOutsideTheFolder) {
  // Issue 24 (D9): one damaged child file, a deleted manifest or one pointing
  // elsewhere cost every case of the run.
  const auto out = (dir_ / "r.json").string();
  const fs::path groups = dir_ / "r.json.groups";
  fs::create_directories(groups);
  child("r.json.groups/device0_heap8_0.json", "GPU", {"a", "b"});
  std::ofstream((groups / "device0_heap16_0.json").string()) << R"({"context": {}, "benchmarks": [{"na)";
  const auto foreign = child("foreign.json", "GPU", {"BM_Foo/8"});
  RunManifest manifest;
  manifest.wrote_results = false;
  manifest.children = {{0, (groups / "device0_heap8_0.json").string()}, {0, foreign}};
  manifest.write((groups / kManifestName).string());
  const Recovery r = recover_interrupted_run(out, groups.string());
  EXPECT_EQ(r.added, 2u);
  ASSERT_EQ(r.skipped.size(), 2u);
  EXPECT_NE(r.skipped[0].find("foreign.json"), std::string::npos) << r.skipped[0];
  EXPECT_NE(r.skipped[1].find("device0_heap16_0.json"), std::string::npos) << r.skipped[1];
  std::ifstream in(out);
  const json doc = json::parse(in);
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  EXPECT_EQ(doc["benchmarks"][1]["name"], "b");

  // Without the manifest, the files in the folder are read, and the file's cases kept.
  fs::remove(groups / kManifestName);
  child("r.json.groups/device0_heap8_1.json", "GPU", {"c"});
  const Recovery again = recover_interrupted_run(out, groups.string());
  EXPECT_EQ(again.added, 1u);
  EXPECT_TRUE(again.carry);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(MergeTest, AResultsFileThatIsNotHeapbenchsIsMovedAsideNeverMergedAndNeverTheReasonToDropTheCases) {
  // Issue 35 (E3, E5): a FILE that is not JSON made recovery drop every case
  // of FILE.groups/; another program's Google Benchmark JSON was merged.
  const json foreign{{"context", {{"executable", "./bench_other"}}},
                     {"benchmarks", {{{"name", "BM_Other/8"}, {"run_name", "BM_Other/8"}, {"real_time", 1.0}}}}};
  const std::string broken = R"({"context": {"heapbench_schema_version": "1"}, "benchm)";
  const json no_is_not_false{{"context", {{"heapbench_schema_version", "1"}}},
                             {"benchmarks", {{{"name", "x"}, {"axis_values", {{"size", 64}}}, {"error_occurred", "no"}}}}};
  for (const auto& [content, aside] : {std::pair{foreign.dump(), "foreign"}, std::pair{broken, "damaged"},
                                       std::pair{no_is_not_false.dump(), "foreign"}}) {
    SCOPED_TRACE(aside);
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "r.json.groups");
    const auto out = (dir_ / "r.json").string();
    std::ofstream(out) << content;
    const auto f0 = child("r.json.groups/device0_heap8_0.json", "GPU", {"a", "b"});
    RunManifest manifest;
    manifest.wrote_results = true;  // the killed run had written FILE: the file there now is another
    manifest.children = {{0, f0}};
    manifest.write((dir_ / "r.json.groups" / kManifestName).string());
    const Recovery r = recover_interrupted_run(out, (dir_ / "r.json.groups").string());
    EXPECT_EQ(r.added, 2u);
    EXPECT_EQ(r.moved_aside, out + "." + aside);
    EXPECT_FALSE(r.moved_why.empty());
    EXPECT_EQ(slurp(r.moved_aside), content) << "kept byte for byte";
    const json doc = json::parse(slurp(out));
    ASSERT_EQ(doc["benchmarks"].size(), 2u) << doc.dump();
    EXPECT_EQ(doc["benchmarks"][0]["name"], "a");
    EXPECT_EQ(doc["benchmarks"][1]["name"], "b");
    EXPECT_TRUE(fs::exists(f0)) << "recovery leaves the folder to its caller";
  }
}

TEST_F(MergeTest, RecoveryNeverMergesAFileOfAnotherSchemaVersion) {
  // Issue 53 (G13): a leftover child file of heapbench_schema_version 99, with
  // edited figures, was merged into a schema-1 results file.
  const auto out = (dir_ / "r.json").string();
  const fs::path groups = dir_ / "r.json.groups";
  fs::create_directories(groups);
  child("r.json.groups/device0_heap8_0.json", "GPU", {"a"});
  json future{{"context", {{"gpu_name", "GPU"}, {"heapbench_schema_version", "99"}}},
              {"benchmarks", {{{"name", "b"}, {"run_name", "b"}, {"allocs_per_s", 9e99}, {"axis_values", {{"size", 64}}}}}}};
  std::ofstream((groups / "device0_heap16_0.json").string()) << future.dump();
  const Recovery r = recover_interrupted_run(out, groups.string());
  EXPECT_EQ(r.added, 1u);
  ASSERT_EQ(r.skipped.size(), 2u);  // no manifest, and the other version's file
  EXPECT_NE(r.skipped[1].find("heapbench_schema_version 99, not this heapbench's 1"), std::string::npos) << r.skipped[1];
  const json doc = json::parse(slurp(out));
  ASSERT_EQ(doc["benchmarks"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["benchmarks"][0]["name"], "a");

  // An earlier results file of another version is moved aside, not adopted.
  future["benchmarks"][0]["name"] = "z";
  std::ofstream(out, std::ios::trunc) << future.dump();
  fs::remove(groups / "device0_heap16_0.json");
  child("r.json.groups/device0_heap8_1.json", "GPU", {"c"});
  const Recovery again = recover_interrupted_run(out, groups.string());
  EXPECT_EQ(again.moved_aside, out + ".foreign");
  EXPECT_NE(again.moved_why.find("heapbench_schema_version 99"), std::string::npos) << again.moved_why;
  for (const json& b : json::parse(slurp(out))["benchmarks"]) EXPECT_NE(b["name"], "z");
}

TEST_F(MergeTest, MovingAsideNeverReplacesAFile) {
  const auto out = (dir_ / "r.json").string();
  std::ofstream(out) << "third";
  std::ofstream(out + ".damaged") << "first";
  std::ofstream(out + ".damaged.1") << "second";
  EXPECT_EQ(move_aside(out, "damaged"), out + ".damaged.2");
  EXPECT_EQ(slurp(out + ".damaged"), "first");
  EXPECT_EQ(slurp(out + ".damaged.1"), "second");
  EXPECT_EQ(slurp(out + ".damaged.2"), "third");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(MergeTest, OnlyTheFilesARunWritesAreRemovedFromItsFolder) {
  const fs::path groups = dir_ / "r.json.groups";
  fs::create_directories(groups / "sub");
  for (const char* name : {"run.json", "run.json.tmp", "device0_heap8_0.json", "device1_heap1024_3.json.partial",
                           "device0_heap8_0.json.tmp", "notes.txt", "device0_heap8_0.json.bak"}) {
    std::ofstream(groups / name) << "x";
  }
  EXPECT_EQ(remove_run_files(groups.string()), (std::vector<std::string>{"device0_heap8_0.json.bak", "notes.txt", "sub"}));
  EXPECT_TRUE(fs::exists(groups / "notes.txt"));
  EXPECT_FALSE(fs::exists(groups / "run.json"));
  fs::remove_all(groups / "sub");
  fs::remove(groups / "notes.txt");
  fs::remove(groups / "device0_heap8_0.json.bak");
  EXPECT_TRUE(remove_run_files(groups.string()).empty());
  EXPECT_FALSE(fs::exists(groups)) << "an emptied folder goes";
}

TEST_F(MergeTest, CarriedEntriesStayUntilTheRunHasTheSameCase) {
  ResultsMerger m(false, stand_in_error_entry);
  m.carry(json::array({{{"name", "a"}, {"repetition_index", 0}, {"old", true}}, {{"name", "b"}, {"old", true}}}));
  m.add_runs(0, child("a.json", "GPU", {"a"}));
  std::vector<std::string> names;
  for (const auto& b : m.document()["benchmarks"]) names.push_back(b["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(m.document()["benchmarks"][0].contains("old")) << "this run's result replaces the carried one";
  EXPECT_EQ(m.runs_merged(), 1u) << "carried entries are not this run's";
}

// Each write assembles the file from texts each entry got once (issue 39: it
// used to compose and serialise the whole document at every case); the file
// must be what document() holds, whatever was added, peeked, carried or adopted.
TEST_F(MergeTest, TheWrittenFileIsTheDocumentAtEveryStep) {
  const auto out = (dir_ / "out.json").string();
  auto written = [&] {
    std::ifstream in(out);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  for (const bool tag : {false, true}) {
    ResultsMerger m(tag, stand_in_error_entry);
    m.carry(json::array({{{"name", "b1/heap:64"}, {"repetition_index", 0}, {"old", true}},
                         {{"name", "z"}, {"old", true}}}));
    const auto check = [&](const char* step) {
      m.set_context("heapbench_wall_s", step);
      m.write(out);
      EXPECT_EQ(written(), m.document().dump(2) + "\n") << step << (tag ? " (tagged)" : "");
    };
    m.add_runs(0, child("a.json", "GPU A", {"a/heap:8"}));
    m.add_missing(0, planned({"a2/heap:8"}), "");
    check("added, one missing");
    const auto running = child("b.json", "GPU A", {"b1/heap:64"});
    m.peek(0, running);
    check("peeked");
    child("b.json", "GPU A", {"b1/heap:64", "b2/heap:64"});
    m.peek(0, running);
    check("peeked again");
    m.add_runs(0, running);
    check("the child ended");
    m.adopt(json::parse(written()));
    m.add_runs(1, child("c.json", "GPU B", {"c/heap:8"}), true);
    check("adopted");
  }
}

}  // namespace
}  // namespace heapbench
