"""Where and how plot/ writes: every file through a temporary name and a rename, and
every file name that comes from a results file's content made a safe slug.

- `atomic(path)` yields a temporary path beside `path` (same folder, so the rename
  cannot cross file systems); when the block ends without an exception the
  temporary file replaces `path` in one rename, otherwise it is removed. A reader
  of `path` sees the earlier file or the new one, never a part of one: under a
  file size limit or on a full disk the write fails, `path` keeps what it had and
  the error is an OSError that the tool reports in one line (issue 35, E7).
- `write_text`, `write_bytes`, `write_csv`: the usual writes, atomically.
- `slug(text)`: a name read from a results file (a pattern, an API) as a file name
  component: ASCII letters, digits, `_`, `-` and `.` only, never starting with a
  dot, at most 64 characters, and a hash of the original appended whenever it was
  changed, so two names never share a slug. A name from a file never becomes a
  path (E4: `axis_values.pattern` = "/tmp/x" made heapbench-html write /tmp/x.svg).
- `check_destination(path)`: refuses a destination that exists and is not a regular
  file (a device node such as /dev/null, a folder, a pipe), which a rename would
  replace, as heapbench itself refuses such a `--benchmark_out`.
- `markdown_table(headers, rows)`: a markdown table's lines, made by tabulate.
- `read_input(path)`: an input file's bytes, a regular file only: a FIFO, a pipe, a
  device (/dev/zero) or a folder is refused before it is opened, in one line, as
  heapbench's own readers refuse it (issue 53, G7: /dev/zero grew a reader to 7.7 GB,
  a FIFO hung it). `shown(path)`: a path as a one-line message shows it.
- `ToolParser`: every tool's argparse parser. argparse drops an error writing its help or
  version (`_print_message` swallows OSError), so `--help > /dev/full` exited 0 having
  written nothing (issue 53, G15); here it is one line on stderr and exit 2, as `say`.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import stat
import sys
import tempfile
from pathlib import Path

from tabulate import DataRow, TableFormat, tabulate

SLUG_MAX = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(text) -> str:
    """A file name component derived from `text` (see the module's text)."""
    text = str(text)
    safe = _UNSAFE.sub("_", text).lstrip(".") or "_"
    if safe == text and len(safe) <= SLUG_MAX:
        return safe
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe[:SLUG_MAX - 9]}-{digest}"


def shown(path) -> str:
    """`path` as a message shows it: as it is, or quoted with escapes where it holds a control
    character (a newline in a path must not split a one-line message)."""
    text = os.fspath(path)
    return repr(text) if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text) else text


def _kind(mode: int) -> str:
    return ("a FIFO or pipe" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a folder" if stat.S_ISDIR(mode) else "a socket")


def check_input(path: str | Path) -> None:
    """OSError, one line "PATH: why", unless `path` is a regular file (a link to one: the file it
    names); nothing is opened."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise OSError(f"{shown(path)}: cannot be opened for reading ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{shown(path)}: is {_kind(st.st_mode)}, not a regular file: give the file itself")


def read_input(path: str | Path) -> bytes:
    """The bytes of the regular file `path` (check_input), read whole."""
    check_input(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # replaced by a FIFO since the stat: no wait
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise OSError(f"{shown(path)}: is {_kind(os.fstat(f.fileno()).st_mode)}, not a regular file: "
                              "give the file itself")
            return f.read()
    except OSError as e:
        if e.strerror is None:
            raise
        raise OSError(f"{shown(path)}: cannot be read ({e.strerror})") from None


def check_destination(path: str | Path) -> Path:
    """`path` itself where it is new or a regular file (a link to one: the file it names);
    OSError for anything else, before a byte is written."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise OSError(f"{path}: is a symbolic link to a file that does not exist: give the target or "
                          "a new name") from None
        return path
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, a pipe or a socket)"
        raise OSError(f"{path}: exists and is {kind}: give a new file name or a regular file to replace")
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextlib.contextmanager
def atomic(path: str | Path):
    """A temporary path to write; renamed over `path` when the block succeeds."""
    target = check_destination(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        mode = os.stat(target).st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: str | Path, text: str) -> Path:
    with atomic(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_bytes(path: str | Path, data: bytes) -> Path:
    with atomic(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_csv(path: str | Path, frame, **kwargs) -> Path:
    """A pandas frame as CSV (index left out unless asked), atomically."""
    kwargs.setdefault("index", False)
    with atomic(path) as tmp:
        frame.to_csv(tmp, **kwargs)
    return Path(path)


def _rule(widths, aligns) -> str:
    return "|" + " --- |" * len(widths)


def markdown_table(headers: list[str], rows) -> list[str]:
    """`rows` under `headers` as the lines of a markdown table: "| a | b |", each cell as given,
    under "| --- | --- |". Not tabulate's "pipe" or "github" format: those pad every cell to its
    column's width, so one changed cell would rewrite every line of a committed table."""
    row = DataRow("|", "|", "|")
    fmt = TableFormat(lineabove=None, linebelowheader=_rule, linebetweenrows=None, linebelow=None, headerrow=row,
                      datarow=row, padding=1, with_header_hide=None)
    # Each cell as str() writes it (None as "None", not tabulate's blank); no alignment: cells are
    # neither padded nor stripped; no number parsing: "1.50" stays "1.50".
    cells = [[str(v) for v in r] for r in rows]
    return tabulate(cells, headers, tablefmt=fmt, stralign=None, numalign=None, disable_numparse=True).splitlines()


def say(text: str, tool: str) -> bool:
    """`text` to standard output; False, with one line on standard error, where it cannot be
    written (a closed pipe: `heapbench-repetitions r.json | head -1`, a full disk). Standard output
    is then pointed at /dev/null, so Python's own flush at exit finds nothing left to fail on."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
        return True
    except OSError as e:
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"{tool}: cannot write to standard output: {e.strerror or e}", file=sys.stderr)
        return False


class ToolParser(argparse.ArgumentParser):
    """argparse's parser, but what it cannot write to standard output (--help, --version) is
    one line on standard error and exit 2, never a silent exit 0."""

    def _print_message(self, message, file=None):
        if not message:
            return
        file = file or sys.stderr
        try:
            file.write(message)
            file.flush()
        except OSError as e:
            if file is not sys.stdout:
                return  # standard error itself: nowhere left to say it
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            print(f"{self.prog}: cannot write to standard output: {e.strerror or e}", file=sys.stderr)
            sys.exit(2)
