set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; L=$OUT/logs; mkdir -p $L
for d in bis_*; do c=${d#bis_}
  (cd $d && HEAPBENCH_GIT_COMMIT=$c cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF && HEAPBENCH_GIT_COMMIT=$c ninja -j4 -C build heapbench) > $L/build_$c.log 2>&1 &
done; wait
echo "[$SECONDS s] built"
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
for k in 1 2; do for d in bis_*; do c=${d#bis_}
  [ -x $d/build/heapbench ] || { echo "$c no binary"; tail -3 $L/build_$c.log; continue; }
  $d/build/heapbench $ARGS --benchmark_out=/tmp/r.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/r.json'))
print('$c $k', ' '.join('%s=%.3g' % (b['name'].split('/')[0], b['allocs_per_s']) for b in d['benchmarks'] if 'allocs_per_s' in b))"
done; done
echo "[$SECONDS s] done"
