set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; L=$OUT/run4.txt
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF"
(cmake -S . -B build $B && ninja -j3 -C build heapbench) > $OUT/b_head.log 2>&1 &
for v in v2 v3 v4 v5 bis_9f9f435; do (cd .gpu/$v && HEAPBENCH_GIT_COMMIT=$v cmake -S . -B build $B && HEAPBENCH_GIT_COMMIT=$v ninja -j3 -C build heapbench) > $OUT/b_$v.log 2>&1 & done
wait
echo "[$SECONDS s] built" >> $L
T=".gpu/bis_9f9f435/build build .gpu/v2/build .gpu/v3/build .gpu/v4/build .gpu/v5/build"
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
for k in 1 2; do for b in $T; do
  [ -x $b/heapbench ] || { echo "$b missing" >> $L; continue; }
  $b/heapbench $ARGS --benchmark_out=/tmp/r.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/r.json'))
print('$b $k', ' '.join('%s=%.3g' % (b['name'].split('/')[0], b['allocs_per_s']) for b in d['benchmarks'] if 'allocs_per_s' in b))" >> $L
done; done
PA="--patterns=printf --apis=printf --sizes=64 --threads=32768 --heaps=1M --kernel-budget-ms=15000"
for b in $T; do
  [ -x $b/heapbench ] || continue
  $b/heapbench $PA --benchmark_out=/tmp/p.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/p.json'))
print('printf $b', ' '.join('%s real=%.4g ms printf_per_s=%.3g err=%s' % (b['name'], b.get('real_time',0), b.get('printf_per_s',0), b.get('error_message','')[:80]) for b in d['benchmarks']))" >> $L
done
echo "[$SECONDS s] done" >> $L
cat $L
