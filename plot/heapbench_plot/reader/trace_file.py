"""Trace files (docs/trace.md): what heapbench/trace.cuh records of a program's
allocations and `heapbench replay` runs again. The reader beside the C++ one
(src/replay/trace_reader.cpp), with the same checks, into pandas; its writer (the tests'
traces); summary(), heapbench-trace's table (heapbench_plot/tools/trace.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from heapbench_plot.reader.outputs import read_input, shown, write_bytes

MAGIC = b"HBTRACE\0"
VERSION = 1
LAUNCH_TAG = 0x48434E4C  # the bytes "LNCH"
OPS = {1: "malloc", 2: "free", 3: "aligned", 4: "new", 5: "delete"}
MAX_THREADS = 1 << 31
MAX_SIZE = 1 << 40
PLAN_BYTES_PER_THREAD = 8  # a replay plan's memory per thread of every launch, and one more a launch


def plan_ceiling(file_bytes: int) -> int:
    """The most plan memory a trace of `file_bytes` may ask for (trace_reader.hpp's plan_ceiling)."""
    return (1 << 30) + file_bytes

HEADER = np.dtype([("magic", "S8"), ("version", "<u4"), ("header_bytes", "<u4"), ("launch_header_bytes", "<u4"),
                   ("event_bytes", "<u4"), ("heap_bytes", "<u8"), ("device", "S32")])
LAUNCH = np.dtype([("tag", "<u4"), ("launch", "<u4"), ("grid", "<u4", 3), ("block", "<u4", 3), ("events", "<u8"),
                   ("dropped", "<u8")])
EVENT = np.dtype([("address", "<u8"), ("size", "<u8"), ("clock", "<u8"), ("block", "<u4"), ("thread", "<u4"),
                  ("align", "<u4"), ("op", "<u4")])
assert HEADER.itemsize == 64 and LAUNCH.itemsize == 48 and EVENT.itemsize == 40


class TraceError(ValueError):
    """A file that is not a trace heapbench reads: the message is one line."""


class Trace:
    def __init__(self, header: dict, launches: list[dict], events: pd.DataFrame):
        self.header = header          # heap_bytes, device, version
        self.launches = launches      # launch, grid, block, events, dropped
        self.events = events          # one row per event: launch, op (name), address, size, clock, block, thread, align
        self.blocks = walk_blocks(events)
        self.unmatched_releases = self.blocks.unmatched_releases


def _header(raw: bytes, path) -> dict:
    if len(raw) < HEADER.itemsize:
        raise TraceError(f"{path}: {len(raw)} bytes, shorter than a trace's 64-byte header")
    h = np.frombuffer(raw, HEADER, count=1)[0]
    if bytes(h["magic"]).ljust(8, b"\0") != MAGIC:
        raise TraceError(f"{path}: not a heapbench trace (it does not start with HBTRACE; docs/trace.md)")
    if int(h["version"]) != VERSION:
        raise TraceError(f"{path}: trace format version {int(h['version'])}; this reader reads version {VERSION}")
    sizes = (int(h["header_bytes"]), int(h["launch_header_bytes"]), int(h["event_bytes"]))
    if sizes != (64, 48, 40):
        raise TraceError(f"{path}: record sizes {sizes[0]}/{sizes[1]}/{sizes[2]} bytes, not the version's 64/48/40")
    return {"version": VERSION, "heap_bytes": int(h["heap_bytes"]),
            "device": bytes(h["device"]).split(b"\0")[0].decode("utf-8", "replace")}


def _launch(raw: bytes, at: int, index: int, path, planned: list[int]) -> dict:
    where = f"{path}: launch {index} at byte {at}"
    if len(raw) - at < LAUNCH.itemsize:
        raise TraceError(f"{path}: {len(raw) - at} stray bytes at byte {at}: not a whole launch record")
    h = np.frombuffer(raw, LAUNCH, count=1, offset=at)[0]
    if int(h["tag"]) != LAUNCH_TAG:
        raise TraceError(f"{where}: not a launch record (no LNCH tag)")
    if int(h["launch"]) != index:
        raise TraceError(f"{where}: numbered {int(h['launch'])}, not {index}")
    grid, block = [int(v) for v in h["grid"]], [int(v) for v in h["block"]]
    if 0 in grid or 0 in block:
        raise TraceError(f"{where}: a grid or block dimension of 0")
    per_block, blocks = block[0] * block[1] * block[2], grid[0] * grid[1] * grid[2]
    if per_block > 1024:
        raise TraceError(f"{where}: {per_block} threads per block, more than CUDA's 1024")
    if blocks * per_block > MAX_THREADS:
        raise TraceError(f"{where}: {blocks} blocks x {per_block} threads, more than the {MAX_THREADS} heapbench replays")
    planned[0] += blocks * per_block + 1
    need, ceiling = planned[0] * PLAN_BYTES_PER_THREAD, plan_ceiling(len(raw))
    if need > ceiling:
        raise TraceError(f"{where}: {blocks} blocks x {per_block} threads: with the launches before it, a replay plan "
                         f"of {need >> 20} MiB ({PLAN_BYTES_PER_THREAD} B a thread), more than the {ceiling >> 20} MiB "
                         f"a {len(raw)}-byte trace may ask for (1 GiB and the file's size; docs/trace.md)")
    left = len(raw) - at - LAUNCH.itemsize
    events = int(h["events"])
    if events > left // EVENT.itemsize:
        raise TraceError(f"{where}: claims {events} events but only {left} bytes remain (the file is cut short or damaged)")
    return {"launch": index, "grid": grid, "block": block, "events": events, "dropped": int(h["dropped"]),
            "blocks": blocks, "threads_per_block": per_block}


def _check_events(e: np.ndarray, launch: dict, path) -> None:
    def fail(k, why):
        raise TraceError(f"{path}: launch {launch['launch']} event {int(k)}: {why}")
    bad = np.flatnonzero((e["op"] < 1) | (e["op"] > 5))
    if bad.size:
        fail(bad[0], f"operation {int(e['op'][bad[0]])} is none of 1-5")
    bad = np.flatnonzero((e["block"] >= launch["blocks"]) | (e["thread"] >= launch["threads_per_block"]))
    if bad.size:
        k = bad[0]
        fail(k, f"thread {int(e['thread'][k])} of block {int(e['block'][k])} is outside the launch's "
                f"{launch['blocks']} blocks x {launch['threads_per_block']} threads")
    allocation = np.isin(e["op"], (1, 3, 4))
    bad = np.flatnonzero(allocation & (e["size"] > MAX_SIZE))
    if bad.size:
        fail(bad[0], f"a request of {int(e['size'][bad[0]])} bytes")
    align = e["align"].astype(np.uint64)
    bad = np.flatnonzero((e["op"] == 3) & ((align == 0) | ((align & (align - np.uint64(1))) != 0)))
    if bad.size:
        fail(bad[0], f"alignment {int(e['align'][bad[0]])} is not a power of two")


def read(path) -> Trace:
    """The whole trace, checked as the C++ reader checks it. Raises TraceError (one line)."""
    try:
        raw = read_input(path)
    except OSError as err:
        raise TraceError(str(err)) from None
    path = shown(path)
    header = _header(raw, path)
    launches, arrays, at, planned = [], [], HEADER.itemsize, [0]
    while at < len(raw):
        launch = _launch(raw, at, len(launches), path, planned)
        at += LAUNCH.itemsize
        e = np.frombuffer(raw, EVENT, count=launch["events"], offset=at)
        if e.size:
            _check_events(e, launch, path)
        at += launch["events"] * EVENT.itemsize
        arrays.append(e)
        launches.append(launch)
    # One frame of every event, made once: a frame a launch, concatenated, took minutes for 20,000 launches.
    e = np.concatenate(arrays) if arrays else np.zeros(0, EVENT)
    counts = np.array([launch["events"] for launch in launches], dtype=np.int64)
    columns = {"launch": np.repeat(np.arange(len(launches), dtype=np.int64), counts)}
    columns.update({name: e[name] for name in EVENT.names})
    events = pd.DataFrame(columns)
    events["op"] = events["op"].map(OPS)
    return Trace(header, launches, events)


def launch_records(path) -> list[dict]:
    """The trace's launch records (shape, events, dropped) with the header and each record checked as
    read() checks them, the events skipped, not read: a trace's launches without its events' memory."""
    try:
        raw = read_input(path)
    except OSError as err:
        raise TraceError(str(err)) from None
    path = shown(path)
    _header(raw, path)
    launches, at, planned = [], HEADER.itemsize, [0]
    while at < len(raw):
        launch = _launch(raw, at, len(launches), path, planned)
        at += LAUNCH.itemsize + launch["events"] * EVENT.itemsize
        launches.append(launch)
    return launches


ALLOCATIONS = ("malloc", "aligned", "new")  # the operations that give a block (the others release one)


@dataclass(frozen=True)
class Blocks:
    """The trace's blocks, its events walked in time order: releases of an address no live recorded
    block held (a double free, a free of what the allocator did not return: what the C++ plan,
    plan_replay, counts and does not replay), blocks given and released, bytes asked, the most held
    at once (asked for, not rounded)."""
    unmatched_releases: int = 0
    allocations: int = 0
    releases: int = 0
    bytes_asked: int = 0
    peak_bytes: int = 0


def walk_blocks(events: pd.DataFrame) -> Blocks:
    """Blocks of the events: launch by launch, each launch's by clock, ties in file order; a NULL
    given or freed is none."""
    if events.empty:
        return Blocks()
    order = np.lexsort((np.arange(len(events)), events["clock"].to_numpy(), events["launch"].to_numpy()))
    ops, addresses = events["op"].to_numpy()[order], events["address"].to_numpy()[order]
    sizes = events["size"].to_numpy()[order]
    live, unmatched, allocations, releases, asked, held, peak = {}, 0, 0, 0, 0, 0, 0
    for op, address, size in zip(ops.tolist(), addresses.tolist(), sizes.tolist()):
        if not address:
            continue
        if op in ALLOCATIONS:
            live[address] = size
            allocations += 1
            asked += size
            held += size
            peak = max(peak, held)
        elif address in live:
            held -= live.pop(address)
            releases += 1
        else:
            unmatched += 1
    return Blocks(unmatched, allocations, releases, asked, peak)


def encode(header: dict, launches: list[dict]) -> bytes:
    """A trace's bytes: header {heap_bytes, device}, launches [{grid, block, dropped, events: [dict of EVENT's
    fields]}]. What tests and tools write (the recorder is heapbench/trace.cuh)."""
    h = np.zeros(1, HEADER)
    h[0] = (MAGIC, VERSION, 64, 48, 40, header.get("heap_bytes", 0), header.get("device", "").encode()[:32])
    parts = [h.tobytes()]
    for index, launch in enumerate(launches):
        events = launch.get("events", [])
        lh = np.zeros(1, LAUNCH)
        lh[0] = (LAUNCH_TAG, index, tuple(launch["grid"]), tuple(launch["block"]), len(events), launch.get("dropped", 0))
        e = np.zeros(len(events), EVENT)
        for k, ev in enumerate(events):
            e[k] = tuple(ev.get(name, 0) for name in EVENT.names)
        parts += [lh.tobytes(), e.tobytes()]
    return b"".join(parts)


def write(path, header: dict, launches: list[dict]) -> None:
    """encode() into `path`, atomically."""
    write_bytes(Path(path), encode(header, launches))


def summary(t: Trace) -> pd.DataFrame:
    """Per launch: its shape, events, each operation's count, bytes asked for (one pass over the events)."""
    if not t.launches:
        return pd.DataFrame()
    out = pd.DataFrame({"launch": [launch["launch"] for launch in t.launches],
                        "grid": ["x".join(map(str, launch["grid"])) for launch in t.launches],
                        "block": ["x".join(map(str, launch["block"])) for launch in t.launches],
                        "events": [launch["events"] for launch in t.launches],
                        "dropped": [launch["dropped"] for launch in t.launches]})
    e = t.events
    launch = e["launch"].to_numpy(dtype=np.int64)
    for op in OPS.values():
        out[op] = np.bincount(launch[(e["op"] == op).to_numpy()], minlength=len(out)).astype(np.int64)
    asked = e["op"].isin(ALLOCATIONS).to_numpy()
    sizes = np.zeros(len(out), dtype=object)  # exact: a sum of requests of up to 2^40 B can pass 2^64
    np.add.at(sizes, launch[asked], e["size"].to_numpy()[asked].astype(object))
    out["bytes"] = [int(v) for v in sizes]
    return out
