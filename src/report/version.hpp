#pragma once
// Version strings recorded in every results file.
namespace heapbench {

// Bumped whenever a counter, a context key or the meaning of one changes;
// plot/ refuses files whose schema it does not know.
inline constexpr int kSchemaVersion = 1;

extern const char* const kVersion;    // project version from CMakeLists.txt
extern const char* const kGitCommit;  // commit of the build (40 hex digits), "-dirty" if the tree had changes
// The build (cmake/git_version.cmake), for the results' context: CMake's
// build type, each compiler's id and version, the flags CMake gives every
// file (CMAKE_<LANG>_FLAGS and those of the build type), the CUDA architectures.
extern const char* const kBuildType;
extern const char* const kCxxCompiler;
extern const char* const kCxxFlags;
extern const char* const kCudaCompiler;
extern const char* const kCudaFlags;
extern const char* const kCudaArchitectures;

}  // namespace heapbench
