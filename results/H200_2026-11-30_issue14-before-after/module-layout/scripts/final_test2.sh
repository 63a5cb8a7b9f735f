set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps"
(cd .gpu/p3 && export HEAPBENCH_GIT_COMMIT=8046298-variant-p3 && cmake -S . -B build $B && ninja -j16 -C build heapbench_gpu_tests) > $OUT/build_p3.log 2>&1 || tail -20 $OUT/build_p3.log
echo "[$SECONDS s] built"
.gpu/p3/build/tests/heapbench_gpu_tests --gtest_filter='HeapSessionGpu.*' > $OUT/heap_session_test_without_touch.log 2>&1; echo "p3 rc=$?"
grep -E "OK|FAILED|Failure|no kernel|Expected|Which is" $OUT/heap_session_test_without_touch.log | head -20
