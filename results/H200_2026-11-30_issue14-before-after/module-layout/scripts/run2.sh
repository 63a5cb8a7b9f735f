set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; L=$OUT; 
(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF && ninja -j8 -C build heapbench) > $L/build_head.log 2>&1 &
(cd .gpu/bis_9f9f435 && HEAPBENCH_GIT_COMMIT=9f9f435 cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF && HEAPBENCH_GIT_COMMIT=9f9f435 ninja -j8 -C build heapbench) > $L/build_old.log 2>&1 &
(cd .gpu/place && nvcc -O3 -arch=sm_90 -o place2 place2.cu) 
for p in 1 2 3; do .gpu/place/place2 4 15 p$p >> $L/place2.txt 2>&1; done
wait
echo "[$SECONDS s] built" >> $L/place2.txt
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
for k in 1 2 3; do for b in .gpu/bis_9f9f435/build build; do
  [ -x $b/heapbench ] || { echo "$b missing"; continue; }
  $b/heapbench $ARGS --benchmark_out=/tmp/r.json > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('/tmp/r.json'))
print('$b $k', ' '.join('%s=%.3g@%.0fMHz' % (b['name'].split('/')[0], b['allocs_per_s'], b.get('sm_clock_mhz',0)) for b in d['benchmarks'] if 'allocs_per_s' in b))" >> $L/place2.txt
  .gpu/place/place2 1 15 after_$k >> $L/place2.txt 2>&1
done; done
echo "[$SECONDS s] done" >> $L/place2.txt
cat $L/place2.txt
