# Is the 4-6 % slowdown of some malloc-family cases (0e80daf -> 77114a7) noise or change? Both builds, ABAB.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
L=$OUT/logs; mkdir -p $L
step() { echo "[$(printf '%4d' $SECONDS) s] $*"; }
(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/.deps -DHEAPBENCH_BUILD_TESTS=ON && ninja -C build heapbench heapbench_gpu_tests) > $L/build_new.log 2>&1 &
(cd old0e8 && HEAPBENCH_GIT_COMMIT=0e80daf cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PWD/../.deps -DHEAPBENCH_BUILD_TESTS=OFF && HEAPBENCH_GIT_COMMIT=0e80daf ninja -C build heapbench) > $L/build_old.log 2>&1 &
wait
[ -x build/heapbench ] && [ -x old0e8/build/heapbench ] || { tail -20 $L/build_new.log $L/build_old.log; exit 1; }
step built
(cd build && timeout 60 ctest -R gpu_small_sweep_json --output-on-failure > $L/small_sweep.log 2>&1; echo "gpu_small_sweep_json rc=$?"; tail -3 $L/small_sweep.log)
ARGS="--patterns=per_thread,per_thread_latency,cross_kernel,per_thread_mixed --apis=malloc,new,aligned --sizes=64,4096 --aligns=16,4096 --threads=1024,65536 --heaps=1G"
for k in 1 2; do
  s=$SECONDS; HEAPBENCH_GIT_COMMIT=0e80daf timeout 120 old0e8/build/heapbench $ARGS --benchmark_out=$OUT/old$k.json > $L/old$k.txt 2>&1; echo "old$k rc=$? $((SECONDS-s)) s"
  s=$SECONDS; timeout 120 build/heapbench $ARGS --benchmark_out=$OUT/new$k.json > $L/new$k.txt 2>&1; echo "new$k rc=$? $((SECONDS-s)) s"
done
tar czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $L
step done
