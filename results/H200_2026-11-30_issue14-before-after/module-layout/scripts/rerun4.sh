# run4 again, keeping every results file: which module's kernel first calls malloc (356f626 variants).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; O=$OUT/rerun; mkdir -p $O; L=$O/rerun4.txt
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF"
for v in base v2 v3 v4 v5 old; do
  c=356f626-variant-$v; [ $v = base ] && c=356f626; [ $v = old ] && c=9f9f435
  (cd .gpu/r/$v && export HEAPBENCH_GIT_COMMIT=$c && cmake -S . -B build $B && ninja -j3 -C build heapbench) > $O/build_$v.log 2>&1 &
done
wait
echo "[$SECONDS s] built" >> $L
ARGS="--patterns=per_thread,cross_kernel --apis=malloc --sizes=64 --threads=65536 --heaps=1G"
for k in 1 2; do for v in old base v2 v3 v4 v5; do
  b=.gpu/r/$v/build; f=$O/${v}_$k.json
  [ -x $b/heapbench ] || { echo "$v missing" >> $L; continue; }
  $b/heapbench $ARGS --benchmark_out=$f > /dev/null 2>&1
  python3 -c "
import json
d={b['name'].split('/')[0]: b.get('allocs_per_s',0) for b in json.load(open('$f'))['benchmarks']}
print('$v $k per_thread=%.3g cross_kernel=%.3g' % (d.get('per_thread',0), d.get('cross_kernel',0)))" >> $L
done; done
PA="--patterns=printf --apis=printf --sizes=64 --threads=32768 --heaps=1M --kernel-budget-ms=15000"
for v in old base v2 v3 v4 v5; do
  b=.gpu/r/$v/build; f=$O/printf_$v.json
  [ -x $b/heapbench ] || continue
  $b/heapbench $PA --benchmark_out=$f > /dev/null 2>&1
  python3 -c "
import json
b=json.load(open('$f'))['benchmarks'][0]
print('printf $v real=%.4g ms err=%s' % (b.get('real_time',0), b.get('error_message','')[:80]))" >> $L
done
echo "[$SECONDS s] done" >> $L
cat $L
(cd $OUT && tar czf rerun.tgz rerun && rm -rf rerun)
