# Where the heap lands vs malloc speed. Standalone; no heapbench.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
cd .gpu/place && nvcc -O3 -arch=sm_90 -o place place.cu other.cu || exit 1
L=$OUT/place.txt
for rep in 1 2 3; do
  for cfg in "0 none 0" "0 none 1" "2 before 0" "2 after 0" "1 before 0" "4 before 0" "8 before 0" "16 before 0" "32 before 0" "64 before 0" "256 before 0" "2 after 1" "6 after 0" "30 after 0" "100 after 0"; do
    set -- $cfg
    ./place r$rep $1 $2 $3 1024 65536 64 7 >> $L 2>&1
    CUDA_MODULE_LOADING=EAGER ./place E$rep $1 $2 $3 1024 65536 64 7 >> $L 2>&1
  done
done
echo "[$SECONDS s] done" >> $L
cat $L
