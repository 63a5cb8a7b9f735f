#include "report/results_file.hpp"
#include "orchestrate/merge.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace heapbench {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("heapbench_rf_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// The document a run writes after every case, made from texts each entry got
// once, is the same bytes as dump(2) of the whole document (issue 39: the
// rewrite used to serialise every entry again).
template <class Json>
void expect_document_text_is_dump(Json doc) {
  Json head = doc;
  head["benchmarks"] = Json::array();
  std::vector<std::string> texts;
  for (const auto& e : doc["benchmarks"]) texts.push_back(entry_text(e));
  std::vector<const std::string*> ptrs;
  for (const auto& t : texts) ptrs.push_back(&t);
  EXPECT_EQ(document_text(head.dump(2), ptrs), doc.dump(2));
}

TEST(DocumentText, IsDumpOfTheWholeDocument) {
  const char* text = R"({"context": {"a": "x\ny", "benchmarks": []}, "benchmarks": [
      {"name": "p/a/size:1", "counters": {"b": [1, 2, {"c": "line\nbreak"}]}, "axis_values": {}},
      {"name": "two", "empty": {}, "list": [], "n": 1.5e300}], "counters": {"z": 1}, "apis": {}})";
  expect_document_text_is_dump(nlohmann::json::parse(text));
  expect_document_text_is_dump(nlohmann::ordered_json::parse(text));
  expect_document_text_is_dump(nlohmann::ordered_json::parse(R"({"context": {}, "benchmarks": [{"name": "one"}]})"));
  // No entries: the head as it is; a head without the list is a program error.
  const auto none = nlohmann::json::parse(R"({"context": {}, "benchmarks": []})");
  EXPECT_EQ(document_text(none.dump(2), {}), none.dump(2));
  EXPECT_THROW(document_text(nlohmann::json::parse(R"({"context": {}})").dump(2), {}), std::logic_error);
}

TEST_F(ResultsFileTest, AnExistingFileSurvivesARunThatFinishedNoCase) {
  const auto path = dir_ / "results.json";
  std::ofstream(path) << "old results";
  ResultsFile f(path.string());
  std::ofstream(f.partial_path()) << "half a run";
  f.discard();
  EXPECT_EQ(slurp(path), "old results");
  EXPECT_FALSE(fs::exists(f.partial_path()));
}

TEST_F(ResultsFileTest, AnUnwritablePathIsRefusedUpFront) {
  try {
    ResultsFile f((dir_ / "no_such_dir" / "results.json").string());
    FAIL() << "accepted a path in a missing directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_dir"), std::string::npos) << e.what();
  }
}


std::string refusal(const std::string& path) {
  try {
    ResultsFile f(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(ResultsFileTest, WhatIsNotARegularFileIsRefusedAndLeftAlone) {
  // A rename over /dev/null replaced the device node (as root); one over a
  // directory failed only after every case had run.
  const auto dir = dir_ / "adir";
  fs::create_directories(dir);
  EXPECT_NE(refusal(dir.string()).find("--benchmark_out=" + dir.string() + ": exists and is a directory"),
            std::string::npos);
  // As root, a private node like /dev/null: a wrong build then harms only the copy.
  std::string null = (dir_ / "null").string();
  if (mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) null = "/dev/null";
  EXPECT_NE(refusal(null).find("--benchmark_out=" + null + ": exists and is a character device"), std::string::npos);
  const auto fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(refusal(fifo.string()).find("a pipe"), std::string::npos);
  EXPECT_TRUE(fs::is_character_file(null));
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_FALSE(fs::exists(dir.string() + ".partial"));
}

TEST_F(ResultsFileTest, ALinkToAResultsFileIsFollowedSoTheLinkSurvives) {
  const auto target = dir_ / "real.json";
  const auto link = dir_ / "link.json";
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  ResultsFile f(link.string());
  EXPECT_EQ(f.path(), fs::canonical(target).string());
  write_atomically(f.path(), "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(link), "new");
}

TEST_F(ResultsFileTest, TwoRunsCannotWriteOneFile) {
  const auto path = (dir_ / "r.json").string();
  ResultsFile first(path);
  EXPECT_NE(refusal(path).find("another heapbench run is writing it"), std::string::npos);
}

TEST_F(ResultsFileTest, AFailedWriteKeepsTheLastFileAndLeavesNoScratch) {
  const auto path = (dir_ / "r.json").string();
  write_atomically(path, "complete");
  // A file size limit stands in for a full disk: writes past it fail with EFBIG.
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string why;
  try {
    write_atomically(path, std::string(1000, 'x'));
  } catch (const ResultsWriteError& e) {
    why = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(why.find("cannot write"), std::string::npos) << why;
  EXPECT_EQ(slurp(path), "complete");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// heapbench/atomic_file.hpp, the one writer under write_atomically and the
// trace Recorder (which streams to "<path>.partial"): a link planted at the
// scratch name is removed, not written through; a file never committed leaves
// nothing; the path appears only at commit.
TEST_F(ResultsFileTest, AnAtomicFileNeverWritesThroughALinkAndAppearsOnlyWhole) {
  const auto target = dir_ / "target.txt";
  std::ofstream(target) << "keep me";
  const auto path = (dir_ / "trace.hbt").string();
  fs::create_symlink(target, path + ".partial");
  {
    AtomicFile f(path, ".partial");
    EXPECT_FALSE(fs::is_symlink(f.scratch_path()));
    f.write("part one, ");
    f.write(std::string("part two"));
    EXPECT_FALSE(fs::exists(path));
    f.commit();
  }
  EXPECT_EQ(slurp(target), "keep me");
  EXPECT_EQ(slurp(path), "part one, part two");
  EXPECT_FALSE(fs::exists(path + ".partial"));
  {
    AtomicFile abandoned(path, ".partial");
    abandoned.write("never committed");
  }
  EXPECT_EQ(slurp(path), "part one, part two");
  EXPECT_FALSE(fs::exists(path + ".partial"));
}

TEST_F(ResultsFileTest, AnAtomicFileInAFolderThatDoesNotExistSaysSoInOneLine) {
  const auto path = (dir_ / "no-such-folder" / "r.json").string();
  try {
    AtomicFile f(path);
    FAIL() << "opened " << f.scratch_path();
  } catch (const WriteError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + path + ".tmp': No such file or directory");
  }
}

TEST_F(ResultsFileTest, LeftoversOfAKilledRunAreRecoveredThenRemoved) {
  const auto path = (dir_ / "r.json").string();
  std::ofstream(path) << R"({"benchmarks": [{"name": "old"}]})";
  const fs::path groups = path + ".groups";
  fs::create_directories(groups);
  std::ofstream(groups / "device0_heap8_0.json")
      << R"({"context": {"gpu_name": "G"}, "benchmarks": [{"name": "a", "run_name": "a", "run_type": "iteration", "axis_values": {"size": 64}}]})";
  RunManifest m;
  m.children = {{0, (groups / "device0_heap8_0.json").string()}};
  m.write((groups / kManifestName).string());
  std::ofstream(path + ".tmp") << "{\"half";
  ResultsFile f(path);
  const std::string said = clean_leftovers(f);
  EXPECT_NE(said.find("recovered 1 finished case"), std::string::npos) << said;
  EXPECT_FALSE(fs::exists(groups));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  // The killed run had not written the file yet: its one case replaces the
  // older results, which are not heapbench's (no axis_values), so they are
  // moved aside, kept.
  const auto doc = nlohmann::json::parse(slurp(path));
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  EXPECT_EQ(doc["benchmarks"][0]["name"], "a");
  EXPECT_NE(said.find("moved aside to '" + path + ".foreign'"), std::string::npos) << said;
  EXPECT_EQ(slurp(path + ".foreign"), R"({"benchmarks": [{"name": "old"}]})");
  EXPECT_EQ(clean_leftovers(f), "") << "nothing left the second time";
}

TEST_F(ResultsFileTest, AFileNamedLikeTheGroupsFolderIsRefusedAndKept) {
  // Issue 35 (E6): a regular file named FILE.groups was removed as "left by an interrupted run".
  const auto path = (dir_ / "r.json").string();
  std::ofstream(path + ".groups") << "mine";
  EXPECT_NE(refusal(path).find("r.json.groups' exists and is a regular file"), std::string::npos) << refusal(path);
  EXPECT_EQ(slurp(path + ".groups"), "mine");
  EXPECT_FALSE(fs::exists(path + ".partial"));
}

TEST_F(ResultsFileTest, WhatHeapbenchDidNotWriteStaysInTheGroupsFolder) {
  const auto path = (dir_ / "r.json").string();
  const fs::path groups = path + ".groups";
  fs::create_directories(groups);
  std::ofstream(groups / "notes.txt") << "mine";
  std::ofstream(groups / "run.json") << R"({"children": []})";
  ResultsFile f(path);
  const std::string said = clean_leftovers(f);
  EXPECT_NE(said.find("it also holds notes.txt"), std::string::npos) << said;
  EXPECT_EQ(slurp((groups / "notes.txt").string()), "mine");
  EXPECT_FALSE(fs::exists(groups / "run.json"));
}

}  // namespace
}  // namespace heapbench
