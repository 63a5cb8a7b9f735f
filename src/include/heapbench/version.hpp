#pragma once
// Version strings recorded in every results file.
namespace heapbench {

// Bumped whenever a counter, a context key or the meaning of one changes;
// plot/ refuses files whose schema it does not know.
inline constexpr int kSchemaVersion = 1;

extern const char* const kVersion;    // project version from CMakeLists.txt
extern const char* const kGitCommit;  // commit of the build, "-dirty" if the tree had changes

}  // namespace heapbench
