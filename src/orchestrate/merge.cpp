#include "orchestrate/merge.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fcntl.h>
#include <sys/file.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

#include "cases/axis_values.hpp"
#include "report/results_file.hpp"
#include "report/version.hpp"  // kSchemaVersion

namespace heapbench {
namespace {

using nlohmann::json;

std::string with_device(const std::string& name, int device) { return fmt::format("{}/device:{}", name, device); }


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

json ResultsMerger::runs_of(int device, const json& child, std::set<std::string>* names) {
  if (!doc_.contains("context") && child.contains("context")) doc_["context"] = child["context"];
  if (tag_ && child.contains("context") &&
      std::find(devices_seen_.begin(), devices_seen_.end(), device) == devices_seen_.end()) {
    devices_seen_.push_back(device);
    json ctx = child["context"];
    ctx["gpu_index"] = std::to_string(device);
    doc_["context"]["devices"].push_back(ctx);
  }
  json runs = child.is_object() ? child.value("benchmarks", json::array()) : json::array();
  for (json& b : runs) {
    // The names the child ran, as it planned them: taken before the device is
    // added to them, never cut back out of them.
    if (names) names->insert(b.value("run_name", b.value("name", "")));
    if (!tag_) continue;
    b["name"] = with_device(b.value("name", ""), device);
    if (b.contains("run_name")) b["run_name"] = with_device(b["run_name"].get<std::string>(), device);
    b["gpu_index"] = device;
  }
  return runs;
}

std::set<std::string> ResultsMerger::add_runs(int device, const std::string& path, bool skip_present) {
  return add_runs(device, read_json(path), skip_present);
}

std::set<std::string> ResultsMerger::add_runs(int device, const json& child, bool skip_present) {
  std::set<std::string> finished;
  const json runs = runs_of(device, child, &finished);
  live_.erase(device);
  std::set<std::string> present;
  if (skip_present) {
    for (const json& b : doc_["benchmarks"]) present.insert(entry_key(b));
  }
  for (const json& b : runs) {
    if (skip_present && present.count(entry_key(b))) continue;
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
  json runs = runs_of(device, read_json(path));
  const std::size_t n = runs.size();
  live_[device] = std::move(runs);
  return n;
}

void ResultsMerger::add_missing(int device, const std::vector<PlannedEntry>& cases, const std::string& death) {
  const std::string why = death.empty() ? "the child process exited without a result for this case"
                                        : fmt::format("the child process running this case's heap group {}", death);
  if (!cases.empty() && !error_entry_) throw std::logic_error("ResultsMerger::add_missing: this merger was given no error_entry");
  for (const auto& c : cases) {
    json e = error_entry_(tag_ ? with_device(c.name, device) : c.name, why);
    if (tag_) e["gpu_index"] = device;
    e[kAxisValuesKey] = c.axis_values;
    doc_["benchmarks"].push_back(std::move(e));
    ++errors_added_;
  }
}

void ResultsMerger::adopt(json doc) {
  doc_ = std::move(doc);
  texts_.clear();
  keys_.clear();
  if (!doc_.contains("benchmarks") || !doc_["benchmarks"].is_array()) doc_["benchmarks"] = json::array();
  errors_added_ = 0;  // counts what this merger adds, not what the document held
}

json ResultsMerger::head() const {
  json h = json::object();
  for (const auto& [k, v] : doc_.items()) {
    if (k != "benchmarks") h[k] = v;
  }
  h["benchmarks"] = json::array();
  for (const auto& [k, v] : extra_context_) h["context"][k] = v;
  add_declarations(h);
  return h;
}

void ResultsMerger::sync_texts() const {
  const json& entries = doc_["benchmarks"];
  for (std::size_t i = texts_.size(); i < entries.size(); ++i) {
    texts_.push_back(entry_text(entries[i]));
    keys_.insert(entry_key(entries[i]));
  }
}

std::set<std::string> ResultsMerger::own_keys() const {
  sync_texts();
  std::set<std::string> keys = keys_;
  for (const auto& [device, runs] : live_) {
    for (const json& b : runs) keys.insert(entry_key(b));
  }
  return keys;
}

const json& ResultsMerger::document() const {
  composed_ = head();
  json& out = composed_["benchmarks"];
  for_each_own([&](const json& b) { out.push_back(b); });
  const std::set<std::string> own = own_keys();
  for (const json& b : carried_) {
    if (!own.count(entry_key(b))) out.push_back(b);
  }
  return composed_;
}

void ResultsMerger::for_each_own(const std::function<void(const json&)>& f) const {
  for (const json& b : doc_["benchmarks"]) f(b);
  for (const auto& [device, runs] : live_) {
    for (const json& b : runs) f(b);
  }
}

void ResultsMerger::write(const std::string& path) const {
  // document(), as text: the entries added (their texts made once), then what
  // peek() shows and the carried entries this run has not (theirs by entry_key).
  const std::set<std::string> own = own_keys();
  std::vector<const std::string*> texts;
  texts.reserve(texts_.size());
  for (const auto& t : texts_) texts.push_back(&t);
  const auto by_key = [this](const json& b, const std::string& key) -> const std::string* {
    auto it = texts_by_key_.find(key);
    if (it == texts_by_key_.end()) it = texts_by_key_.emplace(key, entry_text(b)).first;
    return &it->second;
  };
  for (const auto& [device, runs] : live_) {
    for (const json& b : runs) texts.push_back(by_key(b, entry_key(b)));
  }
  for (const json& b : carried_) {
    const std::string key = entry_key(b);
    if (!own.count(key)) texts.push_back(by_key(b, "carried:" + key));
  }
  write_atomically(path, document_text(head().dump(2), texts) + '\n');
}

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
  try {
    m.tag_devices = j.value("tag_devices", false);
    m.wrote_results = j.value("wrote_results", false);
    for (const json& c : j.value("children", json::array())) {
      m.children.emplace_back(c.value("device", 0), c.value("file", ""));
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(fmt::format("'{}' is not a run manifest: {}", path, e.what()));
  }
  return m;
}

namespace {

namespace fs = std::filesystem;

// The names run_children gives its children's files: device, heap in MiB,
// attempt. The manifest says each file's device; a file it does not name is
// found by its name, and its device is what its own context says (never read
// from the name: a name is only a name).
const std::regex kChildFileName(R"(device\d{1,4}_heap\d{1,12}_\d{1,6}\.json)");
constexpr int kDeviceInContext = -1;

// The device a child's results document ran on, from its context's
// gpu_index; kDeviceInContext (and why) when it names none.
int context_device(const json& doc, std::string& why) {
  const json* index = nullptr;
  if (doc.contains("context") && doc["context"].is_object() && doc["context"].contains("gpu_index")) {
    index = &doc["context"]["gpu_index"];
  }
  int device = kDeviceInContext;
  if (index != nullptr && index->is_number_integer()) device = index->get<int>();
  if (index != nullptr && index->is_string()) {
    const std::string text = index->get<std::string>();
    const bool digits = std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!text.empty() && text.size() <= 4 && digits) device = std::stoi(text);
  }
  if (device < 0) why = "its context names no gpu_index, and the run's manifest does not name it";
  return device;
}

// An entry as heapbench writes it: a name, the case's axes and, where it says
// whether it is an error, a boolean ("no" is not false).
bool is_heapbench_entry(const json& b) {
  return b.is_object() && b.contains("name") && b["name"].is_string() && b.contains("axis_values") &&
         b["axis_values"].is_object() && (!b.contains("error_occurred") || b["error_occurred"].is_boolean());
}

// A child's results file as SnapshotReporter writes it: a document whose
// every entry has a name and the axis values of a registered case. Anything
// else (damaged, or not a child's file) is refused whole, with the reason.
// "" where the document's context names this heapbench's schema version (or
// none: a child killed before its context was written), else why not: a file
// of another version is never merged into this one's (issue 53, G13).
std::string other_schema(const json& doc) {
  if (!doc.contains("context") || !doc["context"].is_object() || !doc["context"].contains("heapbench_schema_version")) {
    return "";
  }
  const json& v = doc["context"]["heapbench_schema_version"];
  const std::string version = v.is_string() ? v.get<std::string>() : v.dump();
  if (version == std::to_string(kSchemaVersion)) return "";
  return fmt::format("heapbench_schema_version {:.20}, not this heapbench's {}", version, kSchemaVersion);
}

std::optional<json> read_child(const fs::path& file, std::string& why) {
  try {
    json doc = read_json(file.string());
    if (doc.is_null()) {
      why = "missing";
      return std::nullopt;
    }
    if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array()) {
      why = "not a results file";
      return std::nullopt;
    }
    if (doc.contains("context") && !doc["context"].is_object()) doc.erase("context");
    if (why = other_schema(doc); !why.empty()) return std::nullopt;
    for (const json& b : doc["benchmarks"]) {
      if (!is_heapbench_entry(b)) {
        why = fmt::format("an entry that is not one of heapbench's cases ({:.60})", b.dump());
        return std::nullopt;
      }
    }
    return doc;
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

// The folder's manifest, or nullopt with why in `skipped`.
std::optional<RunManifest> read_manifest(const fs::path& groups, std::vector<std::string>& skipped) {
  const fs::path manifest_path = groups / kManifestName;
  std::error_code ec;
  if (!fs::exists(manifest_path, ec)) {
    skipped.push_back(fmt::format("{} (missing: the files in the folder were read instead)", kManifestName));
    return std::nullopt;
  }
  try {
    return RunManifest::read(manifest_path.string());
  } catch (const std::exception& e) {
    skipped.push_back(fmt::format("{} ({})", kManifestName, e.what()));
    return std::nullopt;
  }
}

// A child's file and the device it ran on.
using ChildFile = std::pair<int, fs::path>;

// The children's files, each with its device: the manifest's (device, file)
// pairs in the order it started them, each a regular file in the folder
// (whatever its name), then the files in the folder with the names
// run_children gives them that the manifest does not name (all of them
// without one), whose device their context says (kDeviceInContext here). A
// manifest entry elsewhere is not this run's and is never read.
std::vector<ChildFile> child_files(const fs::path& groups, const std::optional<RunManifest>& m,
                                   std::vector<std::string>& skipped) {
  std::error_code ec;
  std::vector<ChildFile> files;
  auto named = [&](const fs::path& f) {
    return std::any_of(files.begin(), files.end(), [&](const ChildFile& c) { return c.second == f; });
  };
  if (m) {
    for (const auto& [device, file] : m->children) {
      const fs::path f(file);
      const bool here = f.parent_path().lexically_normal() == groups.lexically_normal();
      if (here && !fs::exists(f, ec)) continue;  // the child had not written it
      if (!here || !fs::is_regular_file(fs::symlink_status(f, ec))) {
        skipped.push_back(fmt::format("'{}' (named by {} but not one of its run's files: not read)", file,
                                      kManifestName));
        continue;
      }
      if (!named(groups / f.filename())) files.emplace_back(device, groups / f.filename());
    }
  }
  std::set<std::string> listed;  // sorted: the order they are read in
  for (const auto& e : fs::directory_iterator(groups, ec)) {
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, kChildFileName) && e.is_regular_file(ec) && !e.is_symlink(ec)) listed.insert(name);
  }
  for (const auto& name : listed) {
    if (!named(groups / name)) files.emplace_back(kDeviceInContext, groups / name);
  }
  return files;
}

}  // namespace

std::string why_not_heapbench_results(const json& doc) {
  if (!doc.is_object()) return "not a JSON object";
  if (!doc.contains("benchmarks") || !doc["benchmarks"].is_array()) return "no benchmarks list";
  if (!doc.contains("context") || !doc["context"].is_object() || !doc["context"].contains("heapbench_schema_version")) {
    return "its context does not name heapbench_schema_version: not a file heapbench wrote";
  }
  if (std::string why = other_schema(doc); !why.empty()) return why;
  for (const json& b : doc["benchmarks"]) {
    if (!is_heapbench_entry(b)) return fmt::format("an entry that is not one of heapbench's cases ({:.60})", b.dump());
  }
  return "";
}

std::string move_aside(const std::string& path, const std::string& what) {
  for (int n = 0; n < 1000; ++n) {
    const std::string to = n == 0 ? fmt::format("{}.{}", path, what) : fmt::format("{}.{}.{}", path, what, n);
    // RENAME_NOREPLACE: an earlier file of that name is never replaced.
    if (::renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return to;
    if (errno == EEXIST) continue;
    if (errno == EINVAL) {  // a file system without RENAME_NOREPLACE: a hard link refuses an existing name too
      if (::link(path.c_str(), to.c_str()) == 0) {
        ::unlink(path.c_str());
        return to;
      }
      if (errno == EEXIST) continue;
    }
    throw std::runtime_error(fmt::format("cannot move '{}' aside to '{}': {}", path, to, std::strerror(errno)));
  }
  throw std::runtime_error(fmt::format("cannot move '{}' aside: '{}.{}' and 999 more names are taken", path, path, what));
}

std::vector<std::string> remove_run_files(const std::string& groups_path) {
  static const std::regex own(R"((device\d{1,4}_heap\d{1,12}_\d{1,6}\.(json|plan)|run\.json)(\.partial|\.tmp)?)");
  std::error_code ec;
  std::vector<std::string> kept;
  for (const auto& e : fs::directory_iterator(groups_path, ec)) {
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, own) && !e.is_directory(ec)) {
      fs::remove(e.path(), ec);
    } else {
      kept.push_back(name);
    }
  }
  std::sort(kept.begin(), kept.end());
  if (kept.empty()) fs::remove(groups_path, ec);
  return kept;
}

namespace {

// The children's documents that can be read, by device; what cannot is added to `skipped`.
std::vector<std::pair<int, json>> readable_children(const std::vector<ChildFile>& files,
                                                    std::vector<std::string>& skipped) {
  std::vector<std::pair<int, json>> children;
  for (const auto& [device, f] : files) {
    std::string why;
    auto doc = read_child(f, why);
    const int on = doc && device == kDeviceInContext ? context_device(*doc, why) : device;
    if (doc && on >= 0) {
      children.emplace_back(on, std::move(*doc));
    } else if (why != "missing") {
      skipped.push_back(fmt::format("{} ({})", f.filename().string(), why));
    }
  }
  return children;
}

// <out_path>, the killed run's merged results if it wrote them. Without a
// manifest that is not known: a results document there is kept, and the
// children's cases are added to it. A file that is not heapbench's results
// (not JSON, another program's) is never merged: it is moved aside, kept,
// before the cases are written.
struct EarlierFile {
  std::optional<json> doc;   // heapbench's results, to be kept
  std::string unrecognised;  // else why it is not heapbench's results ("" when there is none)
  std::string aside_as;      // what to call it when it is moved aside
};

EarlierFile earlier_file(const std::string& out_path) {
  EarlierFile e;
  if (!fs::exists(fs::symlink_status(out_path))) return e;
  json doc;
  try {
    doc = read_json(out_path);
    e.unrecognised = why_not_heapbench_results(doc);
    e.aside_as = "foreign";
  } catch (const std::exception& ex) {
    e.unrecognised = ex.what();
    e.aside_as = "damaged";
  }
  if (e.unrecognised.empty()) e.doc = std::move(doc);
  return e;
}

// Whether the killed run tagged its entries with their device: its manifest
// says; without one, it did if its children ran on several devices or the
// results it wrote (`adopted`) carry a gpu_index.
bool tags_devices(const std::optional<RunManifest>& m, const std::vector<std::pair<int, json>>& children,
                  const json* adopted) {
  if (m) return m->tag_devices;
  std::set<int> devices;
  for (const auto& [device, doc] : children) devices.insert(device);
  bool tag = devices.size() > 1;
  if (adopted) {
    for (const json& b : (*adopted)["benchmarks"]) tag = tag || (b.is_object() && b.contains("gpu_index"));
  }
  return tag;
}

}  // namespace

Recovery recover_interrupted_run(const std::string& out_path, const std::string& groups_path) {
  const fs::path groups(groups_path);
  Recovery r;
  const std::optional<RunManifest> m = read_manifest(groups, r.skipped);
  const std::vector<std::pair<int, json>> children = readable_children(child_files(groups, m, r.skipped), r.skipped);
  EarlierFile earlier = earlier_file(out_path);
  const bool adopt = earlier.doc && (m ? m->wrote_results : true);
  ResultsMerger merger(tags_devices(m, children, adopt ? &*earlier.doc : nullptr));
  std::size_t before = 0;
  if (adopt) {
    merger.adopt(*earlier.doc);
    before = merger.entries();
  }
  for (const auto& [device, doc] : children) merger.add_runs(device, doc, /*skip_present=*/true);
  r.added = merger.entries() - before;
  if (r.added > 0 && !earlier.unrecognised.empty()) {
    r.moved_aside = move_aside(out_path, earlier.aside_as);
    r.moved_why = earlier.unrecognised;
  }
  if (r.added > 0) merger.write(out_path);
  r.carry = adopt || r.added > 0;
  return r;
}

namespace {

// A child of a killed run dies with it (PR_SET_PDEATHSIG), but may still be
// between the signal and its end; each child holds a lock on its own scratch
// file until it ends. Waits a few seconds at most for them.
void wait_for_children_of_a_dead_run(const fs::path& groups) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(groups, ec)) {
    if (e.path().extension() != ".partial") continue;
    const int fd = open_scratch(e.path().string(), O_RDONLY);
    if (fd < 0) continue;
    for (int i = 0; i < 50 && ::flock(fd, LOCK_EX | LOCK_NB) != 0; ++i) ::usleep(100 * 1000);
    ::close(fd);
  }
}

}  // namespace

std::string clean_leftovers(ResultsFile& out) {
  const std::string path = out.path(), groups = out.groups_path();
  std::string said;
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(groups, ec))) {
    wait_for_children_of_a_dead_run(groups);
    Recovery r;
    try {
      r = recover_interrupted_run(path, groups);
    } catch (const std::exception& e) {
      // Its cases are still there: the folder is left as it is, for a run that can write them.
      throw std::runtime_error(fmt::format("could not recover the cases of an interrupted run from '{}': {}; the "
                                           "folder is kept as it was",
                                           groups, e.what()));
    }
    if (!r.moved_aside.empty()) {
      said = fmt::format("'{}' was not heapbench's results ({}): moved aside to '{}', kept; ", path, r.moved_why,
                         r.moved_aside);
    }
    if (r.added > 0) {
      said += fmt::format("recovered {} finished case(s) of an interrupted run from '{}' into '{}'", r.added, groups,
                          path);
    } else {
      said += fmt::format("removed '{}', left by an interrupted run (no case in it that '{}' lacked)", groups, path);
    }
    for (const auto& s : r.skipped) said += fmt::format("; not recovered from: {}", s);
    if (r.carry) {
      // The killed run's cases stay in the file through this run (until it
      // has results of its own for them).
      const nlohmann::json doc = nlohmann::json::parse(std::ifstream(path), nullptr, false);
      if (doc.is_object() && doc.contains("benchmarks") && doc["benchmarks"].is_array()) out.carry(doc["benchmarks"]);
    }
    if (const auto kept = remove_run_files(groups); !kept.empty()) {
      said += fmt::format("; kept '{}': it also holds {}, which heapbench did not write", groups, fmt::join(kept, ", "));
    }
  }
  // A snapshot never renamed over <path>: possibly incomplete, and at most the
  // one case that was being written when the run was killed ahead of <path>.
  fs::remove(path + ".tmp", ec);
  return said;
}

}  // namespace heapbench
