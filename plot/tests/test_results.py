import copy
import json

import pytest
from conftest import CONTEXT, H200, bench

from heapbench_plot.reader.heapbench_results import SchemaError, load, parse_name, rate_of, rates


def test_committed_h200_results_load_with_every_case_parsed():
    r = load(H200)
    assert r.schema_version == 1
    assert r.gpu == "NVIDIA H200"
    cases = r.cases()
    with open(H200) as f:
        entries = json.load(f)["benchmarks"]
    assert len(cases) == len(entries) > 400
    assert set(cases["pattern"]) >= {"per_thread", "per_thread_mixed", "per_thread_latency", "per_warp", "per_block",
                                     "cross_kernel", "cross_kernel_remote_free", "churn", "capacity", "printf"}
    assert {"malloc", "aligned", "cuda_std_aligned", "new", "bump", "alloca", "slab"} <= set(cases["api"])
    errors = cases[cases["error"]]
    assert list(errors["case"]) == [e["name"].removesuffix("/manual_time") for e in entries if e.get("error_occurred")]
    assert errors["allocs_per_s"].isna().all(), "an error case must never carry a number"
    ok = cases[~cases["error"]]
    heap = ok[ok["pattern"] != "printf"]  # printf cases allocate nothing
    assert (heap["allocs_per_s"] > 0).all()
    assert ok[ok["pattern"] == "printf"]["printf_per_s"].gt(0).all()
    assert ok[ok["api"] == "alloca"]["frees_per_s"].isna().all()


def test_names_parse_into_axes():
    assert parse_name("per_block/aligned/size:100/align:4096/threads:32/heap:1024/manual_time") == {
        "case": "per_block/aligned/size:100/align:4096/threads:32/heap:1024", "pattern": "per_block",
        "api": "aligned", "size": 100, "align": 4096, "threads": 32, "heap_mib": 1024, "limit": "malloc_heap"}
    assert parse_name("per_thread/malloc/size:16/threads:32/heap:8")["align"] == 0
    assert parse_name("printf/printf/size:8/threads:1024/fifo:8")["limit"] == "printf_fifo"
    assert parse_name("BM_something/8") is None


def test_axis_values_win_over_the_name(write_results):
    # A name that would parse to other axes: the field is what the reader believes.
    b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)
    b["name"] = b["run_name"] = "per_thread/malloc/size:16/threads:32/heap:8/iterations:3/manual_time"
    b["axis_values"] = {"pattern": "per_warp", "api": "aligned", "size": 100, "align": 256, "threads": 64,
                        "malloc_heap": 64 * 2**20}
    p = bench("printf/printf/size:8/threads:1024/fifo:8", 1e6)
    p["axis_values"] = {"pattern": "printf", "api": "printf", "size": 8, "threads": 1024, "printf_fifo": 2**20}
    p.update({"printf_per_s": 1e6, "loss_rate": 0.0})
    rows = load(write_results([b, p])).frame
    assert rows.iloc[0][["case", "pattern", "api", "size", "align", "threads", "heap_mib", "limit"]].tolist() == [
        "per_thread/malloc/size:16/threads:32/heap:8", "per_warp", "aligned", 100, 256, 64, 64, "malloc_heap"]
    assert rows.iloc[1][["pattern", "size", "align", "heap_mib", "limit"]].tolist() == ["printf", 8, 0, 1, "printf_fifo"]


def test_files_without_axis_values_fall_back_to_the_name(write_results):
    with_field = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)
    with_field["axis_values"] = {"pattern": "per_thread", "api": "malloc", "size": 16, "threads": 32,
                                 "malloc_heap": 8 * 2**20}
    old = bench("per_block/aligned/size:100/align:4096/threads:32/heap:1024", 1e6)
    rows = load(write_results([with_field, old])).frame
    assert rows[["case", "size", "align", "heap_mib", "limit"]].values.tolist() == [
        ["per_thread/malloc/size:16/threads:32/heap:8", 16, 0, 8, "malloc_heap"],
        ["per_block/aligned/size:100/align:4096/threads:32/heap:1024", 100, 4096, 1024, "malloc_heap"]]


def stride_cases(strides, allocs=1e6):
    """The same point at each stride, the stride an axis only axis_values names (as an
    axis heapbench adds after plot/ was written would be)."""
    out = []
    for stride in strides:
        b = bench(f"per_thread/malloc/size:16/threads:32/heap:8/stride:{stride}", allocs * stride)
        b["axis_values"] = {"pattern": "per_thread", "api": "malloc", "size": 16, "threads": 32,
                            "stride": stride, "malloc_heap": 8 * 2**20}
        out.append(b)
    return out


def test_an_axis_plot_does_not_know_keeps_its_cases_apart(write_results):
    res = load(write_results(stride_cases([1, 4])))
    assert res.extra_axes == ["stride"] and res.axes[-1] == "stride"
    assert "stride" not in res.counters
    cases = res.cases()
    assert cases[["stride", "allocs_per_s"]].values.tolist() == [[1, 1e6], [4, 4e6]]


def test_an_axis_plot_does_not_know_reaches_export_and_compare(write_results):
    from heapbench_plot.reader import comparison
    from heapbench_plot.tools import export

    res = load(write_results(stride_cases([1, 4])))
    assert export.tidy(res)["stride"].tolist() == [1, 4]
    assert [a["name"] for a in export.nvbench(res)["benchmarks"][0]["axes"]] == [
        "size", "align", "threads", "stride", "heap_mib"]
    other = load(write_results(stride_cases([1, 4], allocs=2e6), name="o.json"))
    pair = comparison.compare_pair(res, other)
    assert len(pair) == 2


def test_pooled_files_keep_an_axis_only_a_later_one_has(write_results):
    from heapbench_plot.reader.heapbench_results import pooled_context

    plain = load(write_results([bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)], name="a.json"))
    strided = load(write_results(stride_cases([4]), name="b.json"))
    assert pooled_context([plain, strided])["heapbench_extra_axes"] == ["stride"]


def test_an_axis_that_is_also_a_counter_is_refused(write_results):
    b = stride_cases([1])[0]
    b["stride"] = 3.0
    with pytest.raises(SchemaError, match="both an axis"):
        load(write_results([b]))


def test_a_context_value_titles_print_must_be_a_text(write_results):
    # hypothesis found it: a gpu_name that was an object reached a figure's title as "{'...': None}",
    # too wide for the canvas. It is refused in one line; a long name is cut in titles, kept whole elsewhere.
    b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)
    for key, value in (("gpu_name", {"H200": None}), ("heapbench_version", [1, 2]), ("date", True)):
        with pytest.raises(SchemaError, match=f"the context's {key} is .*, not a text"):
            load(write_results([b], **{key: value}))
    long = load(write_results([b], gpu_name="NVIDIA " + "X" * 80))
    assert long.gpu == "NVIDIA " + "X" * 80
    assert long.title_suffix().startswith("NVIDIA " + "X" * 40 + "\u2026,")
    assert load(write_results([b], cuda_runtime_version=13000)).title_suffix().endswith("CUDA 13.0, heapbench 0.1.0")


def test_axis_values_without_a_limit_are_refused(write_results):
    b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)
    b["axis_values"] = {"pattern": "per_thread", "api": "malloc", "size": 16, "threads": 32}
    with pytest.raises(SchemaError, match="axis_values"):
        load(write_results([b]))


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["context"].pop("heapbench_schema_version"), "not written by heapbench"),
    (lambda d: d["context"].update(heapbench_schema_version="99"), "schema version 99"),
    (lambda d: d.pop("benchmarks"), "not a Google Benchmark results file"),
    (lambda d: d["benchmarks"].append({"name": "BM_other"}), "naming scheme"),
])
def test_files_that_are_not_heapbench_results_are_refused(write_results, mutate, message):
    p = write_results([bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)])
    d = json.loads(p.read_text())
    mutate(d)
    p.write_text(json.dumps(d))
    with pytest.raises(SchemaError, match=message):
        load(p)


def test_not_json_is_refused(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{ half a file")
    with pytest.raises(SchemaError, match="not JSON"):
        load(p)


def test_repetitions_are_averaged_and_aggregates_ignored(write_results):
    name = "per_thread/malloc/size:16/threads:32/heap:8"
    rows = [bench(name, v, rep=i, reps=3) for i, v in enumerate([1.0, 2.0, 3.0])]
    rows.append({**bench(name, 99.0), "name": f"{name}/manual_time_mean", "run_type": "aggregate",
                 "aggregate_name": "mean"})
    cases = load(write_results(rows)).cases()
    assert len(cases) == 1
    assert cases.iloc[0]["allocs_per_s"] == pytest.approx(2.0)
    assert cases.iloc[0]["repetitions"] == 3


def test_missing_counters_are_nan_not_zero(write_results):
    row = bench("per_thread/alloca/size:64/threads:32/heap:8", 1e9)
    other = bench("per_thread/malloc/size:64/threads:32/heap:8", 1e9)
    del row["frees_per_s"]
    cases = load(write_results([row, other])).cases()
    assert cases.iloc[0]["frees_per_s"] != cases.iloc[0]["frees_per_s"]  # NaN
    # A counter no entry carries is a column only where the file declares it.
    del other["frees_per_s"]
    assert "frees_per_s" not in load(write_results([row, other])).cases()


def test_device_tagged_entries_stay_separate_cases(write_results):
    rows = []
    for gpu in (0, 1):
        b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6 * (gpu + 1))
        b["name"] += f"/device:{gpu}"
        b["run_name"] += f"/device:{gpu}"
        b["gpu_index"] = gpu
        rows.append(b)
    cases = load(write_results(rows)).cases()
    assert len(cases) == 2
    assert sorted(cases["gpu_index"]) == [0, 1]
    assert sorted(cases["allocs_per_s"]) == [1e6, 2e6]


@pytest.mark.parametrize("value", ["no", 0, 1, "false", [], {}])
def test_error_occurred_must_be_true_or_false(write_results, value):
    # Issue 35, E16: error_occurred "no" was read as true.
    b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)
    b["error_occurred"] = value
    with pytest.raises(SchemaError, match="error_occurred .* not true or false"):
        load(write_results([b]))


@pytest.mark.parametrize("key", ["threads", "size", "malloc_heap", "writes"])
def test_an_axis_beyond_int64_is_refused(write_results, key):
    # Issue 35, E10: threads 10^400 raised OverflowError.
    b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6)
    b["axis_values"] = {"pattern": "per_thread", "api": "malloc", "size": 16, "threads": 32, "malloc_heap": 8 << 20}
    b["axis_values"][key] = 10 ** 400
    with pytest.raises(SchemaError, match="out of range"):
        load(write_results([b]))
    b["axis_values"][key] = -1
    with pytest.raises(SchemaError, match="out of range"):
        load(write_results([b]))


@pytest.mark.parametrize("field, value", [("order", "first"), ("order", True), ("baseline", "yes"),
                                          ("display_name", 3), ("inner", [])])
def test_an_apis_field_of_the_wrong_type_is_refused(tmp_path, field, value):
    # Issue 35, E10: apis.order of the wrong type broke figures, the page and the report.
    from conftest import CONTEXT
    p = tmp_path / "r.json"
    apis = {"malloc": {"order": 0, "baseline": False, "display_name": "malloc", field: value}}
    p.write_text(json.dumps({"context": CONTEXT, "benchmarks": [bench("per_thread/malloc/size:16/threads:32/heap:8",
                                                                      1e6)], "apis": apis}))
    with pytest.raises(SchemaError, match=f"apis.malloc.{field}"):
        load(p)


def test_workload_axes_are_columns_strings_too(write_results):
    # The workloads' axes (size_min, writes, load_pct, and graph, a name) need no edit in plot/.
    b = bench("graph/malloc/size:64/size_min:16/graph:rmat/threads:32/load_pct:50/writes:1/heap:8", 1e6)
    b["axis_values"] = {"pattern": "graph", "api": "malloc", "size": 64, "size_min": 16, "graph": "rmat",
                        "threads": 32, "load_pct": 50, "writes": 1, "malloc_heap": 8 << 20}
    c = copy.deepcopy(b)
    c["axis_values"]["graph"] = "grid"
    c["name"] = c["run_name"] = b["name"].replace("rmat", "grid")
    res = load(write_results([b, c]))
    assert res.extra_axes == ["size_min", "graph", "load_pct", "writes"]
    cases = res.cases()
    assert cases["graph"].tolist() == ["rmat", "grid"] and cases["size_min"].tolist() == [16, 16]


def test_per_round_samples_are_kept_apart_from_the_counters(write_results):
    b = bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6, round_seconds=[0.001, 0.0011, 0.0009])
    res = load(write_results([b]))
    assert "round_seconds" not in res.counters
    assert res.frame["round_seconds"].iloc[0].tolist() == [0.001, 0.0011, 0.0009]
    b["round_seconds"] = ["fast"]
    with pytest.raises(SchemaError, match="round_seconds"):
        load(write_results([b]))


def test_a_file_read_in_parts_reads_as_json_does(write_results, tmp_path):
    # decode.walk hands the entries over one at a time; what it reads must be what json.loads reads.
    from heapbench_plot.reader.decode import walk
    p = write_results([bench(f"per_thread/malloc/size:{s}/threads:32/heap:8", 1e6) for s in (16, 32, 64)])
    text = "  \n" + p.read_text().replace(",", " ,\n ") + "\n"
    seen = []
    doc = walk(text, seen.append)
    expected = json.loads(text)
    assert seen == expected["benchmarks"] and doc["context"] == expected["context"] and doc["benchmarks"] == 3
    for bad in ('{"benchmarks": [1, 2,]}', '{"a": 1} x', '{"benchmarks": [1 2]}', '{"a" 1}'):
        with pytest.raises(json.JSONDecodeError):
            walk(bad, lambda e: None)


def test_the_declared_headline_is_a_patterns_rate_whatever_the_names_order(tmp_path):
    # printf's cases carry flush_lines_per_s (host lines/s) and printf_per_s (GPU calls/s); the
    # file's counters come in name order. With the field, the headline; without it (files before
    # it), calls/s before lines/s; and a file whose only rate is the host's draws in that.
    p = bench("printf/printf/size:8/threads:1024/fifo:8", 1e6)
    del p["allocs_per_s"], p["frees_per_s"], p["bytes_per_s"]
    p.update({"printf_per_s": 4e6, "flush_lines_per_s": 5e6, "loss_rate": 0.0})
    rate = {"unit": "calls/s", "scale": "per_s", "higher_is_better": True, "description": "d"}
    for headline, expected in ((True, "printf_per_s"), (False, "printf_per_s")):
        declared = {"flush_lines_per_s": dict(rate, unit="lines/s"), "printf_per_s": dict(rate)}
        if headline:
            declared["printf_per_s"]["headline"] = True
        f = tmp_path / f"h{int(headline)}.json"
        f.write_text(json.dumps({"context": CONTEXT, "counters": declared, "benchmarks": [p]}))
        res = load(f)
        assert rate_of(res, res.cases()) == expected
    # A file from before the declarations (results/H200/printf.json, seams/before.json): by name.
    f = tmp_path / "undeclared.json"
    f.write_text(json.dumps({"context": CONTEXT, "benchmarks": [dict(sorted(p.items()))]}))
    res = load(f)
    assert rates(res, res.cases()) == ["printf_per_s", "flush_lines_per_s"]
    only_host = {"flush_lines_per_s": dict(rate, unit="lines/s")}
    f = tmp_path / "host.json"
    f.write_text(json.dumps({"context": CONTEXT, "counters": only_host, "benchmarks": [p]}))
    res = load(f)
    assert rate_of(res, res.cases()) == "flush_lines_per_s"
