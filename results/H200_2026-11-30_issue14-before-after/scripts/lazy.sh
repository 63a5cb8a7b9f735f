# Is it module loading? 9f9f435 (before the registry) and HEAD, each with CUDA_MODULE_LOADING=LAZY and EAGER.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; L=$OUT/logs; mkdir -p $L
(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF && ninja -j8 -C build heapbench) > $L/build_head.log 2>&1 &
(cd bis_9f9f435 && HEAPBENCH_GIT_COMMIT=9f9f435 cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF && HEAPBENCH_GIT_COMMIT=9f9f435 ninja -j8 -C build heapbench) > $L/build_old.log 2>&1 &
wait
echo "[$SECONDS s] built"
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
for k in 1 2; do for m in LAZY EAGER; do for b in bis_9f9f435/build build; do
  [ -x $b/heapbench ] || { echo "$b missing"; continue; }
  CUDA_MODULE_LOADING=$m $b/heapbench $ARGS --benchmark_out=/tmp/r.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/r.json'))
print('$b $m $k', ' '.join('%s=%.3g' % (b['name'].split('/')[0], b['allocs_per_s']) for b in d['benchmarks'] if 'allocs_per_s' in b))"
done; done; done
echo "[$SECONDS s] done"
