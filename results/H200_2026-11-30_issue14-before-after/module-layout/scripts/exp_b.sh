# Which heap set-up order keeps both CUDA malloc (64 B x 65,536) and the sub-us bump kernels where they were?
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD; L=$OUT/exp_b.txt
B="-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$R/.deps -DHEAPBENCH_BUILD_TESTS=OFF"
(export HEAPBENCH_GIT_COMMIT=19709e3; cmake -S . -B build $B && ninja -j4 -C build heapbench) > $OUT/b_a.log 2>&1 &
for v in pb pd p3; do (cd .gpu/$v && export HEAPBENCH_GIT_COMMIT=19709e3-variant-$v && cmake -S . -B build $B && ninja -j4 -C build heapbench) > $OUT/b_$v.log 2>&1 & done
wait
echo "[$SECONDS s] built" >> $L
ARGS="--patterns=per_thread,per_warp,cross_kernel --apis=bump,malloc --sizes=64 --threads=1024,65536 --heaps=1G"
mkdir -p $OUT/exp
for k in 1 2; do for b in build .gpu/pb/build .gpu/pd/build .gpu/p3/build; do
  f=$OUT/exp/$(echo $b | tr '/.' '__')_$k.json
  $b/heapbench $ARGS --benchmark_out=$f > /dev/null 2>&1
  python3 -c "
import json
d=json.load(open('$f'))
print('$b $k', ' '.join('%s/%s/%s=%.3g' % (b['name'].split('/')[0][:6], b['name'].split('/')[1], b['name'].split('/')[3].split(':')[1], b.get('allocs_per_s',0)) for b in d['benchmarks']))" >> $L
done; done
echo "[$SECONDS s] done" >> $L
cat $L
