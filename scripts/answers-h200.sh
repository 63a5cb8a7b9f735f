#!/usr/bin/env bash
# Issue 15 on a GPU: heap-size advice for three workloads, each checked by
# separate ordinary runs, then the size-class map in the time left.
#
#   scripts/answers-h200.sh OUTDIR      (from the repository root, after building build/heapbench)
#
# Writes only OUTDIR/answers.tar.gz (every JSON and log, in answers/) and
# OUTDIR/answers.log (this script's own log, also in the tar). Turn them into
# the class table, the advice and the figure with
#   .venv/bin/python plot/size_map.py OUTDIR/answers.tar.gz -o results/<GPU>_<date>_answers
#
# About 5 minutes on an H200: the advice and its checks first (each bounded by
# `timeout`), then the size map with what is left of DEADLINE_S (default 285 s;
# a map cut short keeps every size it finished, smallest first).
#
# Environment: HEAPBENCH (default build/heapbench; tests pass the stand-in
# device's program), DEADLINE_S, SIZE_MAP_ARGS (extra flags for the size map).
set -uo pipefail
out=${1:?usage: scripts/answers-h200.sh OUTDIR}
hb=${HEAPBENCH:-build/heapbench}
deadline=${DEADLINE_S:-285}
# Everything is written beside OUTDIR and only the tar and the log go into it:
# the GPU machine sends back at most 8 files.
mkdir -p "$out"
scratch=$(mktemp -d)
w="$scratch/answers"
mkdir -p "$w"
log="$w/answers.log"
say() { echo "[$(printf '%4d' "$SECONDS") s] $*" | tee -a "$log"; }

say "heapbench: $hb, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >>"$log" 2>&1 || true

# name | advise flags. per_block's size is bytes per thread, as everywhere in
# heapbench: thread 0 asks 256 x 64 B = 16 KiB for each of 1024 blocks.
workloads=(
  "pt1000|--threads=100000 --size=1000"
  "mixed16_256|--threads=65536 --size=16-256"
  "blk16k|--threads=262144 --size=64 --pattern=per_block"
)

for entry in "${workloads[@]}"; do
  name=${entry%%|*}
  flags=${entry#*|}
  say "advise $name: $flags"
  # shellcheck disable=SC2086  # flags are words
  timeout 90 "$hb" advise $flags --kernel-budget-ms=10000 --out="$w/advice_$name.json" >"$w/advice_$name.log" 2>&1
  say "advise $name: exit $? ($(grep -E '^advice|^smallest' "$w/advice_$name.log" | tr '\n' ' '))"
  [[ -s "$w/advice_$name.json" ]] || continue
  # The case the advice ran and its heaps: advised (with the margin), the
  # smallest that held everything, and 10 % below that.
  read -r pattern api size threads advised min < <(python3 - "$w/advice_$name.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
pattern, api, size, threads = d["workload"]["case"].split("/")
print(pattern, api, size.split(":")[1], threads.split(":")[1], d.get("advised_heap_mib") or 0, d.get("min_heap_mib") or 0)
EOF
  )
  [[ "$min" -gt 0 ]] || continue
  below=$(( min * 9 / 10 ))
  for check in "advised:$advised" "min:$min" "below:$below"; do
    label=${check%%:*}
    heap=${check#*:}
    say "check $name at $heap MiB ($label)"
    timeout 60 "$hb" --patterns="$pattern" --apis="$api" --sizes="$size" --threads="$threads" --heaps="${heap}M" \
      --min-rounds=3 --max-time=1 --kernel-budget-ms=20000 --benchmark_out="$w/check_${name}_$label.json" \
      >"$w/check_${name}_$label.log" 2>&1
    say "check $name $label: exit $?"
  done
done

left=$(( deadline - SECONDS ))
(( left < 60 )) && left=60
say "size map: --sweep=size_map, $left s at most"
# shellcheck disable=SC2086
timeout "$left" "$hb" --sweep=size_map --max-time=0.1 --min-rounds=3 --max-noise=2 ${SIZE_MAP_ARGS:-} \
  --benchmark_out="$w/size_map.json" >"$w/size_map.log" 2>&1
say "size map: exit $? ($(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['benchmarks']), 'cases')" "$w/size_map.json" 2>/dev/null || echo 'no file'))"

say "wrote $out/answers.tar.gz"
tar -czf "$out/answers.tar.gz" -C "$scratch" answers
cp "$log" "$out/answers.log"
rm -rf "$scratch"
