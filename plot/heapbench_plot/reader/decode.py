"""A results file read once, its entries one at a time into columns.

`walk(text, on_entry)` decodes a JSON document exactly as json.loads does (the same
decoder, the same errors), except that the entries of its top-level "benchmarks"
list are handed to `on_entry` one by one as they are decoded and never held
together: a 10^6-entry file (492 MB) took 4.7 GB as one json.loads tree. The
value under "benchmarks" in the returned document is the number of entries.

`Columns` gathers the rows on_entry makes into numpy arrays, 65,536 rows at a time,
so a column of numbers costs 8 bytes a row rather than a Python float's 32; `frame()`
makes the one pandas DataFrame the tools read.
"""
from __future__ import annotations

import json
import re
from json.decoder import JSONDecodeError, scanstring

import numpy as np
import pandas as pd

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class Entries(int):
    """The count of a document's entries, where its "benchmarks" list was."""


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _expect(text: str, i: int, chars: str, what: str) -> str:
    if i >= len(text) or text[i] not in chars:
        raise JSONDecodeError(f"Expecting {what}", text, i)
    return text[i]


def _entries(text: str, i: int, on_entry) -> tuple[Entries, int]:
    """The array at text[i] ("["), each element to on_entry; (count, index after it)."""
    i = _skip(text, i + 1)
    n = 0
    if text.startswith("]", i):
        return Entries(0), i + 1
    while True:
        value, i = _DECODER.raw_decode(text, i)
        on_entry(value)
        n += 1
        i = _skip(text, i)
        if _expect(text, i, ",]", "',' delimiter") == "]":
            return Entries(n), i + 1
        i = _skip(text, i + 1)


def walk(text: str, on_entry) -> object:
    """The document of `text`, its "benchmarks" entries given to on_entry (see above)."""
    i = _skip(text, 0)
    if not text.startswith("{", i):
        return json.loads(text)  # not an object: json says what it is, or what is wrong
    doc: dict = {}
    i = _skip(text, i + 1)
    if not text.startswith("}", i):
        while True:
            _expect(text, i, '"', "property name enclosed in double quotes")
            key, i = scanstring(text, i + 1)
            i = _skip(text, i)
            _expect(text, i, ":", "':' delimiter")
            i = _skip(text, i + 1)
            if key == "benchmarks" and text.startswith("[", i) and "benchmarks" not in doc:
                doc[key], i = _entries(text, i, on_entry)
            else:
                doc[key], i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            if _expect(text, i, ",}", "',' delimiter") == "}":
                break
            i = _skip(text, i + 1)
    end = _skip(text, i + 1)
    if end != len(text):
        raise JSONDecodeError("Extra data", text, end)
    return doc


class Columns:
    """Rows (dicts of column -> value) gathered into typed columns; a row that lacks a
    column has NaN (numbers) or None (text) there. `text` names the columns of strings
    (and other objects); every other column is float64, or int64 where `ints` names it.

    Rows are kept by their shape (the tuple of their keys: heapbench's entries come in a few
    shapes, one per pattern), each shape's values transposed at once with zip: per row a
    tuple and an append, not a lookup per field."""

    CHUNK = 1 << 16

    def __init__(self, text: set[str], ints: set[str]):
        self.text, self.ints = set(text), set(ints)
        self.order: dict[str, None] = {}
        self.chunks: list[tuple[int, dict]] = []
        self.shapes: dict[tuple, tuple[list, list]] = {}
        self.n = 0  # rows in the chunk being gathered

    def add(self, row: dict) -> None:
        key = tuple(row)
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes[key] = ([], [])
            for k in key:
                self.order.setdefault(k)
        shape[0].append(self.n)
        shape[1].append(tuple(row.values()))
        self.n += 1
        if self.n >= self.CHUNK:
            self._flush()

    def _array(self, name: str, values) -> np.ndarray:
        if name in self.text:
            out = np.empty(len(values), dtype=object)  # element by element: arrays of samples stay objects
            for i, v in enumerate(values):
                out[i] = v
            return out
        if name in self.ints and None not in values:
            return np.array(values, dtype=np.int64)
        return np.array(values, dtype=np.float64)  # None -> NaN

    def _flush(self) -> None:
        if not self.n:
            return
        chunk: dict[str, np.ndarray] = {}
        for key, (rows, values) in self.shapes.items():
            where = np.array(rows, dtype=np.intp)
            for name, column in zip(key, zip(*values)):
                part = self._array(name, column)
                if name not in chunk:
                    chunk[name] = self._missing(name, self.n, like=part)
                elif chunk[name].dtype != part.dtype and chunk[name].dtype != object:
                    chunk[name] = chunk[name].astype(object if part.dtype == object else np.float64)
                chunk[name][where] = part
        self.chunks.append((self.n, chunk))
        self.shapes, self.n = {}, 0

    def frame(self, columns: list[str]) -> pd.DataFrame:
        """The frame of `columns` (in that order; the others gathered after them)."""
        self._flush()
        names = list(dict.fromkeys(columns + list(self.order)))
        data = {}
        for name in names:
            parts = [chunk.get(name) for _, chunk in self.chunks]
            parts = [p if p is not None else self._missing(name, n) for (n, _), p in zip(self.chunks, parts)]
            data[name] = np.concatenate(parts) if parts else self._missing(name, 0)
        return pd.DataFrame(data, columns=names)

    def _missing(self, name: str, n: int, like: np.ndarray | None = None) -> np.ndarray:
        """A column of n blanks: None for text, NaN for numbers (int64 ones then float64)."""
        if name in self.text or (like is not None and like.dtype == object):
            return np.full(n, None, dtype=object)
        if like is not None and like.dtype == np.int64:
            return np.zeros(n, dtype=np.int64)  # every row of an int column is set: axes are always there
        return np.full(n, np.nan)
