#pragma once
// The readers of --trace and --graph files the program hands the options
// parser (plan/input_files.hpp): replay/'s trace reader and workloads/'
// Matrix Market reader, from up here where both may be included.
#include "plan/input_files.hpp"

namespace heapbench {

InputReaders file_readers();

}  // namespace heapbench
