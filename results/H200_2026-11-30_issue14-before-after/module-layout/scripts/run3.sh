set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; L=$OUT/run3.txt
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF"
(cmake -S . -B build $B && ninja -j5 -C build heapbench) > $OUT/b_head.log 2>&1 &
for v in v1 v2 bis_9f9f435; do (cd .gpu/$v && HEAPBENCH_GIT_COMMIT=$v cmake -S . -B build $B && HEAPBENCH_GIT_COMMIT=$v ninja -j4 -C build heapbench) > $OUT/b_$v.log 2>&1 & done
(cd .gpu/place && nvcc -O3 -arch=sm_90 -o place2 place2.cu)
for p in 1 2; do .gpu/place/place2 3 15 s$p 1 >> $L 2>&1; done
wait
echo "[$SECONDS s] built" >> $L
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
for k in 1 2; do for b in build .gpu/v1/build .gpu/v2/build .gpu/bis_9f9f435/build; do
  [ -x $b/heapbench ] || { echo "$b missing" >> $L; continue; }
  $b/heapbench $ARGS --benchmark_out=/tmp/r.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/r.json'))
print('$b $k', ' '.join('%s=%.3g' % (b['name'].split('/')[0], b['allocs_per_s']) for b in d['benchmarks'] if 'allocs_per_s' in b))" >> $L
done; done
for b in build .gpu/bis_9f9f435/build; do CUDA_MODULE_LOADING=EAGER $b/heapbench $ARGS --benchmark_out=/tmp/r.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/r.json'))
print('EAGER $b', ' '.join('%s=%.3g' % (b['name'].split('/')[0], b['allocs_per_s']) for b in d['benchmarks'] if 'allocs_per_s' in b))" >> $L; done
echo "[$SECONDS s] done" >> $L
cat $L
