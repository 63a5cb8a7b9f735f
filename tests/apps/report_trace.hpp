#pragma once
// What tests/apps/report_trace.cpp calls of report_trace_kernels.cu.
namespace report_trace {
void set_up();
void launch_grow();          // 2-D: grid (4, 2), block (8, 4); each thread allocates
void launch_release_half();  // the first 128 blocks freed ...
void launch_grow_half();     // ... and allocated again by a kernel of another shape
void launch_nothing();       // calls no allocator
void launch_release_all();   // frees every block
unsigned long long released();
unsigned long long nulls();
}  // namespace report_trace
