"""The engine host: a child process that owns the sandboxed database and the comparator.

Why a process: DuckDB cannot interrupt every query (a single huge scalar runs to the
end), and a query that ignores its interrupt must not take the grading run down with
it. The parent waits ``timeout + 1 s`` for execution, then kills and respawns the child;
the case is marked ``timeout`` and the run goes on. Results never cross the pipe: gold
answers live in Arrow files on disk, predictions are compared in the child, and only the
evidence comes back.
"""
from __future__ import annotations

import json
import os
import pickle
import select
import struct
import subprocess
import sys
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .base import Limits

GRACE_S = 0.7  # interrupt fires at limit + 0.25 s; past limit + 0.7 s the process is killed
COMPARE_TIMEOUT_S = 300.0
_HDR = struct.Struct("!Q")
_AHEAD_BYTES = 16_384  # requests queued ahead stay this small, so two fit a pipe's buffer


def describe_timeout(limits: Limits) -> float:
    """Opening a database reads its catalog and hashes its content: minutes on a big one."""
    return max(120.0, limits.timeout_s * 10)


class HostCrashed(RuntimeError):
    """The child died or failed; the message says why."""


class HostTimeout(HostCrashed):
    """The child did not answer in time and was killed."""


class HostOpError(HostCrashed):
    """The child raised while serving a request; it is still running."""


# -- framing ---------------------------------------------------------------------------
def _write(fh: Any, obj: Any) -> None:
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(_HDR.pack(len(blob)) + blob)
    fh.flush()


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


class EngineHost:
    """Parent-side handle; restarts the child on demand after a kill or crash."""

    def __init__(self, database: str | Path, limits: Limits, gold_dir: str | Path) -> None:
        self.database = str(database)
        self.limits = limits
        self.gold_dir = str(gold_dir)
        self._proc: subprocess.Popen[bytes] | None = None
        self._pending: deque[Ticket] = deque()  # sent to the current child, answers not yet read
        self.restarts = 0

    def _start(self) -> subprocess.Popen[bytes]:
        env = dict(os.environ)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        proc = subprocess.Popen([sys.executable, "-m", "pytest_sqleval.engines.host"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        from .registry import exported
        _write(proc.stdin, {"database": self.database, "limits": asdict(self.limits), "gold_dir": self.gold_dir,
                            "engines": exported(), "sys_path": list(sys.path)})
        return proc

    def close(self) -> None:
        proc, self._proc = self._proc, None
        pending, self._pending = self._pending, deque()
        if proc is not None and proc.poll() is None:
            if pending:  # answers nobody will read: do not let the child work on them
                proc.kill()
                proc.wait()
                return
            try:
                _write(proc.stdin, ("quit", {}))
                proc.wait(timeout=5)
            except Exception:
                proc.kill()
                proc.wait()

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            self.restarts += 1

    def call(self, op: str, payload: dict[str, Any], *, exec_timeout: float | None = None) -> dict[str, Any]:
        """Send one request and wait for its answer."""
        return self.result(self.submit(op, payload, exec_timeout=exec_timeout))

    def submit(self, op: str, payload: dict[str, Any], *, exec_timeout: float | None = None,
               ahead: bool = False) -> "Ticket":
        """Send a request without waiting: the child answers requests in order, so the
        parent can prepare the next case while the child executes this one. With ``ahead``
        the request is only sent if it cannot stall the pipe (small, at most one queued
        before it); otherwise the ticket is sent when its result is asked for."""
        budget = exec_timeout if exec_timeout is not None else self.limits.timeout_s + GRACE_S
        ticket = Ticket(op, pickle.dumps((op, payload), protocol=pickle.HIGHEST_PROTOCOL), budget)
        if ahead and (len(self._pending) > 1 or len(ticket.blob) > _AHEAD_BYTES):
            return ticket
        self._send(ticket)
        return ticket

    def _send(self, ticket: "Ticket") -> None:
        if self._pending and (len(ticket.blob) > _AHEAD_BYTES or self._proc is None or self._proc.poll() is not None):
            self._drain()  # a big request behind an unread answer could fill both pipes; a dead child's say how it died
        if self._proc is None or self._proc.poll() is not None:
            self._proc = self._start()
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        try:
            proc.stdin.write(_HDR.pack(len(ticket.blob)) + ticket.blob)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # the child is gone: reading says how
        ticket.sent = True
        self._pending.append(ticket)

    def _drain(self) -> None:
        while self._pending:
            self._read_next()

    def result(self, ticket: "Ticket") -> dict[str, Any]:
        while not ticket.done:
            if not ticket.sent:  # queued ahead, or queued behind a request whose child was killed
                self._send(ticket)
            self._read_next()
        if ticket.error is not None:
            raise ticket.error
        return ticket.value

    def _read_next(self) -> None:
        """Read the answer to the oldest pending request. Its execution budget starts when
        the child says it started it; past the budget the child is killed, that request
        fails, and the requests queued behind it go to a fresh child."""
        proc = self._proc
        ticket = self._pending[0]
        assert proc is not None and proc.stdout is not None
        deadline = time.monotonic() + ticket.budget + 30.0  # + child start-up on first use
        try:
            while True:
                try:
                    (n,) = _HDR.unpack(_read_exact(proc.stdout.fileno(), _HDR.size, deadline))
                    kind, body = pickle.loads(_read_exact(proc.stdout.fileno(), n, None))
                except TimeoutError:
                    self._fail(HostTimeout(f"no answer within {ticket.budget:.1f} s; the engine process was killed"))
                    return
                if kind == "started":  # the child runs a query of this request (since ``body``, a monotonic time)
                    deadline = (body if isinstance(body, float) else time.monotonic()) + ticket.budget
                elif kind == "executed":  # execution finished in time; comparison has its own budget
                    deadline = time.monotonic() + COMPARE_TIMEOUT_S
                elif kind == "partial":  # the answer to give if the rest of the request does not finish
                    ticket.partial = body
                else:
                    self._pending.popleft()
                    ticket.done = True
                    if kind == "error":
                        ticket.error = HostOpError(body)
                    else:
                        ticket.value = body
                    return
        except (EOFError, OSError) as exc:
            code = proc.poll()
            self._fail(HostCrashed(f"the engine process died (exit code {code}): {type(exc).__name__}"))

    def _fail(self, error: HostCrashed) -> None:
        """The oldest request failed and the child is killed. A request that sent a partial
        answer (evidence computed after its verdict, see ``_Server.grade``) gets that answer."""
        ticket = self._pending.popleft()
        ticket.done = True
        if ticket.partial is not None:
            ticket.value = ticket.partial
        else:
            ticket.error = error
        queued = list(self._pending)
        self._pending.clear()
        self._kill()
        for t in queued:  # never started: they get a fresh child, not this one's fate
            t.sent = False


class Ticket:
    """One request to the engine process and, once read, its answer."""

    def __init__(self, op: str, blob: bytes, budget: float) -> None:
        self.op, self.blob, self.budget = op, blob, budget
        self.sent = self.done = False
        self.value: Any = None
        self.partial: Any = None
        self.error: HostCrashed | None = None


# -- the gold cache ----------------------------------------------------------------------
GOLD_CHECKSUM = "arrow_sha256"  # the .json's record of its .arrow's bytes
_GOLD_FIELDS = ("rows", "columns", "types")


def _file_sha256(path: Path) -> str:
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_stored_gold(gold_dir: str | Path, key: str) -> dict[str, Any] | None:
    """A stored gold answer's description, if its entry is whole: the ``.json`` is an object
    with a gold answer's fields and the SHA-256 of the ``.arrow`` beside it, and the
    ``.arrow`` has those bytes. Anything else (a part missing, bad JSON, other bytes, no
    checksum: an entry written before checksums) is a damaged entry: None, so the gold is
    computed again and the entry rewritten (atomically, over the damaged one). A damaged
    cache thus costs one gold execution, never a verdict against the prediction."""
    gold_dir = Path(gold_dir)
    try:
        meta = json.loads((gold_dir / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(meta, dict) and all(f in meta for f in _GOLD_FIELDS)
            and isinstance(meta.get(GOLD_CHECKSUM), str)):
        return None
    try:
        if _file_sha256(gold_dir / f"{key}.arrow") != meta[GOLD_CHECKSUM]:
            return None
    except OSError:
        return None
    return meta


# -- child side ------------------------------------------------------------------------
class _Server:
    def __init__(self, database: str, limits: dict[str, Any], gold_dir: str) -> None:
        from ..grading.compare import Comparator
        from . import open_sandbox
        self.database = database
        self.db = open_sandbox(database, Limits(**limits))
        self.cmp = Comparator(threads=max(1, int(limits.get("threads", 1))))
        self.gold_dir = Path(gold_dir)
        self._gold_tables: dict[str, Any] = {}
        self._gold_sql: dict[str, str] = {}  # gold key -> gold SQL, for the side-by-side rules

    def describe(self, _: dict[str, Any], out: Any) -> dict[str, Any]:
        return {"engine": self.db.name, "engine_version": self.db.version, "dialect": self.db.dialect,
                "content_hash": self._content_hash(), "catalog": self.db.catalog()}

    def _content_hash(self) -> str:
        """The content hash reads every row, so it is kept per version of a database file:
        keyed by the file's identity, size and modification time (and its WAL's), a rerun
        on an unchanged file reads it back instead. A server database is hashed each time."""
        import hashlib
        from . import is_url
        if is_url(self.database):
            return self.db.content_hash()
        try:
            stats = []
            for f in (Path(self.database), Path(str(self.database) + ".wal")):
                if f.exists():
                    st = f.stat()
                    stats.append([str(f.resolve()), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns])
        except OSError:
            return self.db.content_hash()
        key = hashlib.sha256(json.dumps([stats, self.db.name, self.db.version]).encode()).hexdigest()[:32]
        path = self.gold_dir.parent / "content-hash" / f"{key}.txt"
        try:
            return path.read_text().strip()
        except OSError:
            pass
        digest = self.db.content_hash()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{key}.{os.getpid()}.tmp")
            tmp.write_text(digest)
            os.replace(tmp, path)
        except OSError:
            pass
        return digest

    def gold(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """Execute a gold query (twice, to catch nondeterminism) and store its answer."""
        from ..grading.compare import CompareSpec
        from ..grading.execute import execution_record
        key = req["key"]
        self._gold_sql[key] = req["sql"]
        meta_path = self.gold_dir / f"{key}.json"
        stored = read_stored_gold(self.gold_dir, key)  # a damaged entry is computed again
        if stored is not None:
            return {"cached": True, **stored}
        exec_sql = req.get("exec_sql") or req["sql"]
        first = self.db.run(exec_sql)
        if first.error is not None:
            return {"cached": False, "error": execution_record(first)}
        second = self.db.run(exec_sql)
        _write(out, ("executed", None))
        spec = CompareSpec(**req["spec"])
        key_positions = req.get("key_positions")
        if key_positions is not None:  # negative positions count from the end (appended keys)
            key_positions = [p if p >= 0 else first.table.num_columns + p for p in key_positions]
        problem = None
        same = CompareSpec(ordered=spec.ordered, sort_keys=key_positions,
                           float_rel_tol=spec.float_rel_tol, float_abs_tol=spec.float_abs_tol)
        if second.error is not None or not self.cmp.compare(first.table, second.table, same).match:
            problem = "nondeterministic: two executions of the gold query gave different results"
        elif req.get("probe_sql") and key_positions is not None and first.table.num_rows == req["limit"]:
            probe = self.db.run(req["probe_sql"])
            if probe.table is not None and probe.table.num_rows > req["limit"]:
                rows = _rows(probe.table.select(key_positions).slice(req["limit"] - 1, 2))
                if len(rows) == 2 and rows[0] == rows[1]:
                    problem = (f"LIMIT {req['limit']} cuts through rows tied on the ORDER BY keys, so the answer "
                               f"depends on tie order; add a tiebreaker column to ORDER BY")
        table = first.table
        if req.get("n_appended"):
            table = table.select(list(range(table.num_columns - req["n_appended"])))
        meta = {"rows": table.num_rows, "columns": table.column_names,
                "types": [str(f.type) for f in table.schema], "elapsed_ms": first.elapsed_ms,
                "problem": problem, "preview": _preview(table)}
        if problem is None:
            from ..grading.compare import GID_COLUMN
            if spec.ordered and key_positions is not None:
                table = table.append_column(GID_COLUMN, self.cmp.tie_groups(first.table, key_positions))
            import pyarrow.feather as feather
            self.gold_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.gold_dir / f".{key}.{os.getpid()}.tmp"
            feather.write_feather(table, str(tmp), compression="uncompressed")
            stored_meta = {**meta, GOLD_CHECKSUM: _file_sha256(tmp)}
            os.replace(tmp, self.gold_dir / f"{key}.arrow")
            tmp.with_suffix(".json").write_text(json.dumps(stored_meta), encoding="utf-8")
            os.replace(tmp.with_suffix(".json"), meta_path)
        # Not kept in memory: the grading reads the stored file memory-mapped (``_gold_table``),
        # so the process holds no copy of its gold answers, only pages the kernel can drop.
        del first, second, table
        return {"cached": False, **meta}

    def grade(self, req: dict[str, Any], out: Any) -> dict[str, Any]:
        """Execute a candidate and compare it with the stored gold answer."""
        from ..grading.compare import CompareSpec
        from ..grading.execute import execution_record
        outcome = self.db.run(req["sql"])
        _write(out, ("executed", None))
        result: dict[str, Any] = {"execution": execution_record(outcome), "compare": None}
        if outcome.table is None:
            return result
        gold = self._gold_table(req["gold_key"])
        result["compare"] = self.cmp.compare(gold, outcome.table, CompareSpec(**req["spec"])).to_dict()
        result["pred_preview"] = _preview(outcome.table)
        result["compare"]["sidebyside"] = self._side_by_side(gold, outcome.table, result, req, outcome.elapsed_ms, out)
        return result

    def _side_by_side(self, gold: Any, pred: Any, result: dict[str, Any], req: dict[str, Any],
                      pred_elapsed_ms: float, out: Any) -> dict[str, Any]:
        """BIRD's and Spider's verdicts on the same results (evidence only; never fails grading).

        Spider's DISTINCT-free re-runs are executions like the candidate's: before each, the
        verdict so far goes to the parent with the side-by-side marked undecided (``cut``),
        and the re-run gets the case's execution limit and process guard (``started``). A
        re-run that overruns gets the engine process killed; the case keeps its verdict."""
        from ..reports.sidebyside import side_by_side

        def cut(undecided: dict[str, Any]) -> None:
            _write(out, ("partial", {**result, "compare": {**result["compare"], "sidebyside": undecided}}))

        def guarded(run: Any) -> Any:
            def run_under_limits(sql: str) -> Any:
                _write(out, ("started", time.monotonic()))
                try:
                    return run(sql)
                finally:
                    _write(out, ("executed", None))
            return run_under_limits

        try:
            return side_by_side(gold, pred, result["compare"],
                                gold_sql=req.get("gold_sql") or self._gold_sql.get(req["gold_key"]),
                                pred_sql=req["sql"], dialect=self.db.dialect, run=guarded(self.db.run),
                                gold_variant=guarded(lambda sql: self._gold_variant(req["gold_key"], sql)),
                                pred_elapsed_ms=pred_elapsed_ms, cut=cut)
        except Exception as exc:  # pragma: no cover - defensive
            return {"bird": None, "spider": None, "note": f"side-by-side failed: {type(exc).__name__}: {exc}"}

    def _gold_variant(self, key: str, sql: str) -> Any:
        """Spider's DISTINCT-free variant of a gold query: run once, kept beside the gold
        answer (an Arrow file, or the error category), so a rerun executes no gold query."""
        import hashlib
        import pyarrow.feather as feather
        base = self.gold_dir / f"{key}.spider-{hashlib.sha256(sql.encode()).hexdigest()[:16]}"
        arrow, err = base.with_name(base.name + ".arrow"), base.with_name(base.name + ".error")
        if arrow.exists():
            return feather.read_table(str(arrow))
        if err.exists():
            return err.read_text()
        outcome = self.db.run(sql)
        self.gold_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.gold_dir / f".{base.name}.{os.getpid()}.tmp"
        if outcome.error is not None:
            tmp.write_text(outcome.error.category)
            os.replace(tmp, err)
            return outcome.error.category
        feather.write_feather(outcome.table, str(tmp), compression="uncompressed")
        os.replace(tmp, arrow)
        return outcome.table

    def _gold_table(self, key: str) -> Any:
        if key not in self._gold_tables:
            import pyarrow.feather as feather
            if len(self._gold_tables) > 64:
                self._gold_tables.clear()
            self._gold_tables[key] = feather.read_table(str(self.gold_dir / f"{key}.arrow"), memory_map=True)
        return self._gold_tables[key]


def _preview(table: Any) -> list[list[Any]]:
    from ..grading.compare import preview_rows
    return preview_rows(table, 5)


def _rows(table: Any) -> list[tuple[Any, ...]]:
    from ..grading.compare import python_values
    return list(zip(*(python_values(c) for c in table.columns)))


def main() -> None:  # pragma: no cover - runs in the child
    out = os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
    sys.stdout = sys.stderr  # nothing but frames on the pipe
    inp = os.fdopen(sys.stdin.fileno(), "rb", closefd=False)

    def read() -> Any:
        (n,) = _HDR.unpack(inp.read(_HDR.size) or b"\0" * 8)
        return pickle.loads(inp.read(n)) if n else ("quit", {})

    init = read()
    try:
        from .registry import adopt
        adopt(init.pop("engines", ()), init.pop("sys_path", ()))  # the grading process's plugin engines
        server = _Server(**init)
    except Exception as exc:  # report the reason once, then exit
        from . import display_location
        _write(out, ("error", f"cannot open {display_location(init.get('database'))}: {exc}"))
        return
    while True:
        op, payload = read()
        if op == "quit":
            return
        _write(out, ("started", time.monotonic()))  # the clock is the machine's: the parent times from it
        try:
            body = getattr(server, op)(payload, out)
            _write(out, ("result", body))
        except Exception as exc:
            _write(out, ("error", f"{type(exc).__name__}: {exc}"))


if __name__ == "__main__":  # pragma: no cover
    main()
