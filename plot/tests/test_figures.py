import json

from conftest import H200, bench, figure_warnings

from heapbench_plot.tools.figures import main, make_figures


def test_h200_results_make_every_figure_kind_and_a_summary(tmp_path):
    # Drawn once for both this test and the readability checks (no figure warning),
    # which test_readability makes on the two-GPU file: the sweep's figures take
    # 20 s to draw on the 2-core machine (issue 36).
    written, figure_problems = figure_warnings(lambda: make_figures(H200, tmp_path))
    assert figure_problems == []
    names = {p.name for p in written}
    for stem in ("throughput_vs_size_per_thread", "throughput_vs_threads_per_thread", "fail_rate_per_thread_malloc",
                 "throughput_vs_size_churn"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names, stem
    for p in written:
        assert p.stat().st_size > 0, p
    summary = (tmp_path / "summary.md").read_text()
    assert "NVIDIA H200" in summary
    assert "heapbench 0.1.0" in summary
    with open(H200) as f:
        entries = json.load(f)["benchmarks"]
    errors = [e["name"].removesuffix("/manual_time") for e in entries if e.get("error_occurred")]
    assert f"- cases: {len(entries)}, errors: {len(errors)}" in summary
    assert all(name in summary for name in errors)  # the errors are listed (a file with some: the next test)
    assert "![throughput_vs_size_per_thread](throughput_vs_size_per_thread.png)" in summary


def test_single_case_with_errors_and_missing_counters_still_summarises(write_results, tmp_path):
    p = write_results([
        bench("per_thread/malloc/size:16/threads:32/heap:8", 1e6),
        bench("per_thread/malloc/size:32/threads:32/heap:8", None, error="warm-up: truncated"),
    ])
    out = tmp_path / "figs"
    written = make_figures(p, out)
    summary = (out / "summary.md").read_text()
    assert "errors: 1" in summary
    assert "warm-up: truncated" in summary
    assert (out / "summary.md") in written


def test_optional_figures_appear_when_their_counters_do(write_results, tmp_path):
    rows = [bench(f"per_thread/malloc/size:{s}/threads:32/heap:8", 1e6, utilization=0.7, ext_frag=0.1,
                  lat_p50_ns=500.0, lat_p99_ns=2000.0) for s in (16, 64, 256)]
    names = {p.name for p in make_figures(write_results(rows), tmp_path)}
    assert "utilization_fragmentation.png" in names
    assert "latency.png" in names


def test_command_line_refuses_a_foreign_file(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text('{"context": {}, "benchmarks": []}')
    assert main([str(p), "-o", str(tmp_path / "o")]) == 2
    assert "not written by heapbench" in capsys.readouterr().err


def test_a_fixed_demand_over_several_heaps_makes_a_failure_curve(write_results, tmp_path):
    rows = [bench(f"per_thread/malloc/size:256/threads:32768/heap:{h}", 1e6, fail_rate=f)
            for h, f in ((4, 0.6), (8, 0.3), (16, 0.0))]
    names = {p.name for p in make_figures(write_results(rows), tmp_path)}
    assert "failure_curves.png" in names and "failure_curves.svg" in names


def test_printf_cases_read_with_their_fifo_and_make_their_figure(write_results, tmp_path):
    def printf_case(size, threads, fifo, loss):
        b = bench(f"printf/printf/size:{size}/threads:{threads}/fifo:{fifo}", 1.0)
        for c in ("allocs_per_s", "frees_per_s", "bytes_per_s", "fail_rate", "heap_bytes"):
            del b[c]  # printf reports none of the heap counters
        b.update({"printf_per_s": 1e7, "lines_delivered": threads * 8 * (1 - loss), "lines_lost": threads * 8 * loss,
                  "loss_rate": loss,
                  "fifo_bytes": fifo * 2**20})
        return b
    p = write_results([printf_case(8, t, f, 0.5 if t > 1024 and f == 1 else 0.0)
                       for t in (1024, 32768) for f in (1, 8)])
    from heapbench_plot.reader.heapbench_results import load
    cases = load(p).cases()
    assert sorted(set(cases["heap_mib"])) == [1, 8], "fifo:<MiB> is read into the limit column"
    names = {q.name for q in make_figures(p, tmp_path)}
    assert "printf_fifo.png" in names
    # printf has no allocation rate: its throughput figure is of its own rate, printf_per_s (issue 36: every
    # pattern drawn in what it counts), and no heap-counter figure is made of it.
    assert "throughput_vs_threads_printf.png" in names
    assert not any(n.startswith(("fail_rate", "allocators", "failure")) for n in names)


def test_a_file_of_two_gpus_gets_figures_per_gpu_not_overprinted(write_results, tmp_path):
    rows = []
    for gpu in (0, 1):
        for t in (32, 1024):
            b = bench(f"per_thread/malloc/size:64/threads:{t}/heap:8", 1e6 * (gpu + 1))
            b["name"] = b["run_name"] = b["name"] + f"/device:{gpu}"
            b["gpu_index"] = gpu
            rows.append(b)
    written = make_figures(write_results(rows, devices=[{"gpu_index": "0"}, {"gpu_index": "1"}]), tmp_path)
    names = {str(p.relative_to(tmp_path)) for p in written}
    assert {"gpu0/throughput_vs_threads_per_thread.png", "gpu1/throughput_vs_threads_per_thread.png"} <= names
    assert "[GPU 1](gpu1/summary.md)" in (tmp_path / "summary.md").read_text()


def test_throughput_lines_say_which_heap(write_results, tmp_path, monkeypatch):
    # At 47fe9e1 only the largest heap at each point was drawn, and nothing said so.
    from heapbench_plot.figures import sweep as figures
    labels = []
    monkeypatch.setattr(figures, "_save", lambda fig, out, stem, written: labels.extend(
        (stem, fig.texts[0].get_text() if fig.texts else "", h.get_label())
        for ax in fig.axes for h in ax.get_lines()) or figures.plt.close(fig))
    rows = [bench(f"per_thread/malloc/size:64/threads:{t}/heap:{h}", 1e6 * h) for t in (32, 1024) for h in (8, 64)]
    make_figures(write_results(rows), tmp_path)
    series = {lab for stem, _, lab in labels if stem == "throughput_vs_threads_per_thread"}
    assert series == {"malloc, heap 8 MiB", "malloc, heap 64 MiB"}


def test_allocators_per_pattern_draws_every_heap_api_at_the_point_most_patterns_share(write_results, tmp_path,
                                                                                     monkeypatch):
    from heapbench_plot.figures import sweep as figures
    drawn = {}

    def grab(fig, out, stem, written):
        if stem == "allocators_per_pattern":
            ax = fig.axes[0]
            drawn["title"] = fig.texts[0].get_text()
            drawn["ticks"] = [t.get_text() for t in ax.get_yticklabels()]
            drawn["dots"] = {h.get_label(): list(h.get_xdata()) for h in ax.get_lines() if not h.get_label().startswith("_")}
            drawn["lines"] = {h.get_linestyle() for h in ax.get_lines()}
        figures.plt.close(fig)

    monkeypatch.setattr(figures, "_save", grab)
    rate = {"malloc": 1e7, "slab": 5e9, "bump": 3e10}
    rows = [bench(f"{p}/{a}/size:64/threads:65536/heap:1024", rate[a]) for p in ("per_thread", "churn")
            for a in rate]
    # Another point with fewer patterns, and one without bump: neither is chosen.
    rows += [bench(f"per_warp/{a}/size:4096/threads:1024/heap:64", 1e5) for a in ("malloc", "bump", "slab")]
    rows += [bench(f"per_block/malloc/size:64/threads:65536/heap:1024", 2e5)]
    make_figures(write_results(rows), tmp_path)
    # A dot per API and pattern on the rate axis (issue 36: bars on a log axis mislead), each pattern
    # labelled with what a call asked for, taken from the file (bytes_per_s / allocs_per_s).
    assert drawn["ticks"] == ["per_thread\n64 B", "churn\n64 B"], drawn
    assert drawn["dots"] == {"malloc": [1e7, 1e7], "slab": [5e9, 5e9], "bump": [3e10, 3e10]}, drawn
    assert drawn["lines"] == {"None"}
    title = " ".join(drawn["title"].split())
    assert "64 B x 65,536 threads, heap 1 GiB" in title and "not a bound" in title


def test_a_file_without_declarations_draws_one_pattern_readably(write_results, tmp_path, monkeypatch):
    # Issue 56, results/H200/slab/per_thread_16B_1M.json (no "apis" nor "counters" block, one
    # pattern): allocators_per_pattern cut its legend off the canvas, labelled its axis with the
    # raw allocs_per_s and drew bump, named first in the file, in malloc's vermillion circles.
    from heapbench_plot.figures import sweep as figures
    p = write_results([bench(f"per_thread/{api}/size:16/threads:1048576/heap:1024", rate)
                       for api, rate in (("bump", 3e10), ("malloc", 3e6), ("slab", 1.5e10))])
    seen = {}
    real = figures.save

    def keep(fig, stem, written=None, formats=("png", "svg")):
        seen[stem.name] = ([ax.get_xlabel() for ax in fig.axes],
                           {line.get_label(): (line.get_color(), line.get_marker()) for ax in fig.axes
                            for line in ax.get_lines()})
        return real(fig, stem, written, formats)
    monkeypatch.setattr(figures, "save", keep)
    make_figures(p, tmp_path)  # a FigureWarning (the legend outside the canvas) fails the test
    labels, looks = seen["allocators_per_pattern"]
    assert labels == ["allocs per second"]
    assert looks["bump"][0] == "#000000" and looks["malloc"] == ("#D55E00", "o")
