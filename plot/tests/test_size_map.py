"""Class boundaries, advice and the size-map outputs on synthetic data."""
import json

import pandas as pd
import pytest

from conftest import bench

from heapbench_plot.reader import size_classes
from heapbench_plot.tools import size_map


def synthetic(noise=0.0, outlier=None):
    """Four classes: 16-64 (one 80-byte block), 80-512 (a 64-byte header),
    528-2048 (40x slower, one 2304-byte block), 2064-4096 (fast again)."""
    rows = []
    for k, s in enumerate(range(16, 4097, 16)):
        t = 4000.0 if 528 <= s <= 2048 else 100.0
        t *= 1 + (noise if k % 2 else -noise)
        if s == outlier:
            t *= 3
        stride = 80 if s <= 64 else s + 64 if s <= 512 else 2304 if s <= 2048 else s + 320
        rows.append({"size": s, "alloc_ns": t, "free_ns": t / 4, "stride_bytes": float(stride), "fail_rate": 0.0})
    return pd.DataFrame(rows)


def ranges(classes):
    return [(c.lo, c.hi) for c in classes]


def test_boundaries_where_time_or_stride_jump():
    assert ranges(size_classes.find_classes(synthetic())) == [(16, 64), (80, 512), (528, 2048), (2064, 4096)]


def test_noise_and_a_single_outlier_open_no_class():
    assert ranges(size_classes.find_classes(synthetic(noise=0.15, outlier=3008))) == [
        (16, 64), (80, 512), (528, 2048), (2064, 4096)]


def test_thresholds_decide():
    # With a threshold above the 40x step only the stride jumps remain.
    assert ranges(size_classes.find_classes(synthetic(), time_threshold=50)) == [(16, 64), (80, 512), (528, 4096)]


def test_class_figures_and_table():
    c = size_classes.find_classes(synthetic())[2]
    assert (c.sizes, c.alloc_ns, c.free_ns, c.stride_lo, c.stride_hi) == (96, 4000.0, 1000.0, 2304.0, 2304.0)
    table = size_classes.class_table(size_classes.find_classes(synthetic()))
    assert list(table["bytes per block"]) == ["80", "144-576", "2304", "2384-4416"]
    assert list(table["size range (B)"])[2] == "528-2048"


def test_advice_names_the_slow_range_and_the_size_to_round_up_to():
    lines = size_classes.advice(size_classes.find_classes(synthetic()))
    assert len(lines) == 1
    assert lines[0].startswith("requests of 528-2048 bytes are 40.0 times slower than 2064 bytes on this GPU: "
                               "round up to 2064")


def write_run(tmp_path, write_results, strides=True):
    run = tmp_path / "run"
    run.mkdir()
    df = synthetic()
    benches = []
    for r in df.itertuples():
        extra = {"stride_bytes": r.stride_bytes} if strides else {}
        benches.append(bench(f"size_map/malloc/size:{r.size}/threads:1024/heap:4096", 1e9 / r.alloc_ns, **extra))
        benches[-1]["frees_per_s"] = 1e9 / r.free_ns
    (run / "size_map.json").write_text(write_results(benches).read_text())
    advice = {"heapbench_advice_version": 1, "workload": {"threads": 100000, "size": "1000", "pattern": "per_thread",
                                                          "api": "malloc", "demand_bytes": 100000000},
              "min_heap_mib": 208, "max_failing_heap_mib": 205, "utilization": 0.4585, "margin": 0.1,
              "advised_heap_mib": 229, "code": "cudaDeviceSetLimit(cudaLimitMallocHeapSize, size_t{229} << 20);",
              "default_heap": {"fail_rate": 0.95}, "probes": [{}, {}], "seconds": 12.5}
    (run / "advice_pt1000.json").write_text(json.dumps(advice))
    below = bench("per_thread/malloc/size:1000/threads:100000/heap:187", 1e5, fail_rate=0.04)
    (run / "check_pt1000_below.json").write_text(write_results([below], name="below.json").read_text())
    return run


def test_main_writes_table_advice_and_figure(tmp_path, write_results, capsys):
    run = write_run(tmp_path, write_results)
    out = tmp_path / "out"
    assert size_map.main([str(run), "-o", str(out)]) == 0
    md = (out / "size_map_classes.md").read_text()
    assert "round up to 2064" in md and "| 528-2048 |" in md
    assert (out / "size_map.png").stat().st_size > 0 and (out / "size_map.svg").exists()
    assert len(pd.read_csv(out / "size_map_classes.csv")) == 4
    adv = (out / "advice.md").read_text()
    assert "**229 MiB**" in adv and "| below | 187 | 0.04 |" in adv


def test_main_refuses_a_file_without_strides(tmp_path, write_results, capsys):
    run = write_run(tmp_path, write_results, strides=False)
    assert size_map.main([str(run), "-o", str(tmp_path / "out")]) == 2
    assert "stride_bytes" in capsys.readouterr().err


def test_the_json_that_sweep_size_map_writes_is_read_directly(tmp_path):
    # Issue 26: the tool needed a folder holding a file named size_map.json.
    import tarfile

    from conftest import ROOT
    from heapbench_plot.tools.size_map import main as size_map_main
    with tarfile.open(ROOT / "results" / "H200" / "answers" / "answers.tar.gz") as t:
        t.extract("answers/size_map.json", tmp_path, filter="data")
    renamed = tmp_path / "h200_sizes.json"
    (tmp_path / "answers" / "size_map.json").rename(renamed)
    assert size_map_main([str(renamed), "-o", str(tmp_path / "out")]) == 0
    assert "| 1920-2192 | 18 |" in (tmp_path / "out" / "size_map_classes.md").read_text()
    assert (tmp_path / "out" / "size_map.png").exists()
