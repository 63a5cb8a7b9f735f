set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; C=8046298; D=2026-11-30
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps"
(export HEAPBENCH_GIT_COMMIT=$C; cmake -S . -B build $B && ninja -j10 -C build) > $OUT/build.log 2>&1 &
(cd .gpu/p3 && export HEAPBENCH_GIT_COMMIT=$C-variant-p3 && cmake -S . -B build $B && ninja -j6 -C build heapbench_gpu_tests) > $OUT/build_p3.log 2>&1 &
wait
echo "[$SECONDS s] built"
(cd build && timeout 200 ctest -L gpu --output-on-failure > $OUT/H200_${D}_gpu_tests_$C.log 2>&1; echo "gpu tests rc=$?"; grep -E "Test +#|tests passed" $OUT/H200_${D}_gpu_tests_$C.log)
echo "[$SECONDS s] tested"
.gpu/p3/build/tests/heapbench_gpu_tests --gtest_filter='HeapSessionGpu.*' > $OUT/heap_session_test_without_touch.log 2>&1; echo "p3 rc=$?"
grep -E "OK|FAILED|Failure|no kernel" $OUT/heap_session_test_without_touch.log | head
build/tests/heapbench_gpu_tests --gtest_filter='HeapSessionGpu.*' > $OUT/heap_session_test_with_touch.log 2>&1; echo "main rc=$?"
grep -E "OK|FAILED" $OUT/heap_session_test_with_touch.log | head
