# Final call: build 19709e3 (with tests) and the layout variants, GPU tests, variants, default sweep.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
D=2026-11-30; C=19709e3; R=$PWD
L=$OUT/logs; mkdir -p $L
step() { echo "[$(printf '%4d' $SECONDS) s] $*" | tee -a $L/steps.txt; }
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps"
export HEAPBENCH_GIT_COMMIT=$C
(cmake -S . -B build $B && ninja -j8 -C build) > $L/build.log 2>&1 &
(export HEAPBENCH_GIT_COMMIT=$C-variant-noslab; cmake -S . -B build_noslab $B -DHEAPBENCH_BUILD_TESTS=OFF -DHEAPBENCH_BUNDLED_ALLOCATORS=OFF && ninja -j3 -C build_noslab heapbench) > $L/build_noslab.log 2>&1 &
for v in p1 p3; do (cd .gpu/$v && export HEAPBENCH_GIT_COMMIT=$C-variant-$v && cmake -S . -B build $B -DHEAPBENCH_BUILD_TESTS=OFF && ninja -j3 -C build heapbench) > $L/build_$v.log 2>&1 & done
wait
step built
for b in build build_noslab .gpu/p1/build .gpu/p3/build; do [ -x $b/heapbench ] || { echo "MISSING $b"; tail -20 $L/build*.log; }; done
V=$L/variants.txt
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
mkdir -p $OUT/variants
for k in 1 2; do for b in build build_noslab .gpu/p1/build .gpu/p3/build; do
  f=$OUT/variants/$(echo $b | tr '/.' '__')_$k.json
  $b/heapbench $ARGS --benchmark_out=$f > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('$f'))
print('$b $k', ' '.join('%s=%.3g' % (b['name'].split('/')[0], b['allocs_per_s']) for b in d['benchmarks'] if 'allocs_per_s' in b))" >> $V
done; done
PA="--patterns=printf --apis=printf --sizes=64 --threads=32768 --heaps=1M --kernel-budget-ms=15000"
for b in build build_noslab .gpu/p1/build .gpu/p3/build; do
  f=$OUT/variants/printf_$(echo $b | tr '/.' '__').json
  $b/heapbench $PA --benchmark_out=$f > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('$f'))
print('printf $b', ' '.join('real=%.4g ms printf_per_s=%.3g err=%s' % (b.get('real_time',0), b.get('printf_per_s',0), b.get('error_message','')[:80]) for b in d['benchmarks']))" >> $V
done
cat $V
step variants
(cd build && timeout 200 ctest -L gpu --output-on-failure > $OUT/H200_${D}_gpu_tests_$C.log 2>&1; echo "gpu tests rc=$?"; grep -E "Test +#|tests passed" $OUT/H200_${D}_gpu_tests_$C.log)
step tested
s=$SECONDS; timeout 330 build/heapbench --benchmark_out=$OUT/H200_${D}_default-sweep_$C.json > $OUT/H200_${D}_default-sweep_$C.txt 2> $L/default-sweep.err; echo "rc=$? wall=$((SECONDS-s))"; tail -2 $L/default-sweep.err
python3 .gpu/analyze.py $OUT/H200_${D}_default-sweep_$C.json $((SECONDS-s)) > $L/analyze.txt; head -14 $L/analyze.txt
step swept
(cd $OUT && tar czf variants.tgz variants logs && rm -rf variants)
