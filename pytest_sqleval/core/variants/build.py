"""Build variants of a suite database (test-suite accuracy, Zhong, Yu & Klein 2020).

A prediction whose result coincides with the gold's on the pinned database may still be
wrong; graded on variants of the database too, the coincidence rarely survives. Each
variant keeps every constraint of ``constraints.observe_constraints`` (declared and
observed), so a correct rewrite that relies on one of them still passes:

- ``subset``: every table keeps a seeded fraction of its rows, decided by a hash of one
  value: a *key domain* is the set of columns dependencies link (every order id:
  ``orders.order_id``, ``order_lines.order_id``, ``invoices.order_id``), and a row is
  kept by the hash of its column in the first domain it has, the domains taken largest
  first and each variant starting at another; so an order and its lines and invoices are
  kept or dropped together. A domain of fewer than ``MIN_SAMPLED_ROWS`` values (three
  currency codes) is never sampled by: dropping a third of every table at once changes
  more than a variant should (every rate of a currency, which a correct conversion relies
  on). A row in no sampled domain is hashed by its key, else its whole row; tables under
  ``MIN_SAMPLED_ROWS`` rows stay whole. Then the
  subset *grows* until every dependency holds again: for each kept row whose reference
  has no kept target, one target row is added back (the first by a hash of its content),
  and so on for the rows added, to a fixpoint. Adding never breaks a key or a NOT NULL
  column, every dependency holds at the end (an observed total participation, "every
  order has a line", is a dependency like any other: a kept order gets one of its lines
  back), and the repair empties nothing. Removing dangling rows instead cuts a fact by
  each of its references (the fraction to the power k) and, on the Vantage warehouse's
  chained copies and total references, empties most tables; growing keeps each table
  near its fraction plus the parents its kept rows need, so a variant is small (its size
  bounds the cost of grading on it). A DuckDB variant is written with 16 KiB blocks: a
  table takes at least a block per column, and with the default 256 KiB blocks a
  126-table warehouse is half the pinned file at any row count.
- ``subset+duplicates``: and a seeded share of rows doubled, only in tables that already
  hold duplicate rows on the pinned data (there no set of columns is a key, so doubling
  breaks no key, declared, observed or composite) and that are no dependency's parent.
- ``subset+shuffle``: and the free columns of every table permuted among its rows, all
  of a table's free columns by one permutation: each column keeps its multiset of values
  (type, domain, NULL count) and every relation between free columns of a row (an end
  date after its start date, an amount in USD and its local amount) holds still.

Given the suite's golds, each variant then gets their *boundary rows* (``boundaries.py``:
values at the edges of the golds' filters; its kind gains ``+boundary``), and last, for
each gold that answers nothing (or NULLs only) on the pinned data, a tuple through its
join path that makes it answer (``nonempty.py``).

A variant is a file of the pinned database's engine (DuckDB or SQLite), built with the
engine's own driver, deterministic from (pinned content, seed, index, frozen columns,
the golds): a DuckDB database is read through a copy with its rows in the order of their
values (``_canonical``), not the file's, so two files of one content build one set of
variants. It is cached under ``out_dir/<pinned content hash[:16]>/<seed>/[rows-<golds'
digest>/]`` with ``variants.json.gz``. All of a suite's variants together stay within
``SIZE_BUDGET`` times the pinned file (``_row_budget``): the golds' witness rows count
against it (a variant whose witnesses add more than ``WITNESS_SLACK`` of its rows is built
again from a smaller subset), and a variant is compacted once they are written, so its
file holds its rows and no dead blocks (``_compact``).
"""
from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..engines.sqlite_sandbox import InvalidText, decode_text
from .constraints import (Constraints, Dependency, TableConstraints, engine_of, observe_constraints, parents_first,
                          qualified, quote)
from .memo import LastOne
from .nonempty import Written, write_nonempty
from .outputs import write_outputs
from .sqlite_io import sql_literal, variant_connection

GENERATOR_VERSION = 31  # 31: builder queries that keep their first rows order them totally (every output column last: a replacement row cross joined to a reaching row tied, and the plan chose), and a frozen record replays the queries its build refused by their work (the engine's plan estimates decided: filter pushdown off gave 8 of 8 other Vantage variants) (vplan); 30: a DuckDB database read through a copy with its rows in the order of their values (two files of one content, the Vantage warehouse built on two machines, built other variants: 9 of 126 tables of variant 0 differed) (vsched); 29: session 54's two merged: a LIMIT growth unit making a new window partition gives it three groups, 2p, p, p (TPC-DS q53/q63/q89: a one-group partition is its own average) (vdswavg); a new dimension row's witness (a copy failing only one filter) of a gold whose conjuncts name no table (TPC-DS) written at all: beside the copy's second table its query failed, ambiguous (vspeed); 28: session 53's 27s merged: a LIMIT growth unit through a pinned parent row gives it the rows total dependencies need and is passed over when a dependency breaks, a refused unit no longer ends its batch, the last count is not run twice (TPC-DS q86/q89 undone at 101 rows) (vdslimit2); a star's LEFT JOINed tables left aside and a derived table projecting one table read as it (TPC-DS q72, q62 had no clone witness); a comparison of two tables' columns gets a copy moved or set to where its sides meet (q72's `<` and `d3.d_date > d1.d_date + 5`) (vdsops2); a swap of a conditional aggregate whose condition no reaching row meets (q66's December), past the separating near-misses' slots, shown by a copy of a reaching fact row moved to a parent meeting it (vdsorder3); 27: session 52's 26s merged: a LIMIT lift takes the greatest free shared id, a moved customer of a gold ordered by its id stays inside the LIMIT (vdsref); per AND-group of an OR that joins a dimension (TPC-DS q48's states, q13's demographics), a copy moved to a row of each list member passing that group alone, and moved there to a row failing only one other term or with a fact bound's edge values; a moved witness's kept OR drops the edge's join from its groups, and fails a conjunct on a NULL too, last (vdsor); an undeclared text inclusion into a table the facts reference by a number key freezes it no more (TPC-DS's item, promotion, catalog_page, customer_address: shared words) (vdswin); 25: session 51's 24s merged: an ordered gold over one or two rows gets a second copy sorting apart on an earlier key against its last; a pinned anchor row copied in with the rows of its path through the FROM and the WHERE's IN/EXISTS/scalar subqueries, not every row referencing it (q20's supplier); order witnesses tie a pair whose later keys disagree (vorder2); a change inside a scalar subquery an outer column is compared with separated by that column set between the two sides on the rows reaching the comparison, such near-misses first (vbounds); a pair of references unique together (partsupp, order_line) is a row identity: a copy keeps the grouped one and takes in the other a value a reaching row holds and the kept one lacks; a HAVING sum/avg against a scalar subquery gets a copy of a one-row group between half the threshold and it (vgroups); a path copied into a variant brings the rows of its own table its row references (an item's class id) and the rows its correlated subqueries read (a sale's date), in bounds of 96 rows (vlimit3, merged by vlimit4); a regroup's units of two copies of its source, then one, in turn (a window-average filter kept no new month of one copy), up to 6 reaching paths copied into a variant where none reaches a leaf (vlimit4); 23: session 50's 22s merged: clone witnesses of a UNION ALL branch copy rows reaching the output, a customer keyed by shared ids cloned, edge values of fact bounds in an OR's AND-groups (vdsconj2); a LIMIT gold grown out of its turn too, after the golds in turn (outputs.in_turn, vdistill); a bound on the difference of a fact's day key and a joined table's (a sale and its return) moves a reaching fact row in place (vlitop); a count band on a derived table's groups (its HAVING, BETWEEN, or the enclosing WHERE on its aggregate), copies that keep a per-ticket group's ticket (another item instead), a NULL-store copy in a group the band keeps, groups whose outer join finds its row (vhaving); 21: session 49's 20s merged: edge rows for the terms of an OR's AND-groups, joins every group repeats (vdsin); rows that give set-operation branches a tuple in common (vdsjoin2); moved clone witnesses with unqualified columns written at all; witnesses inside a correlated EXISTS / NOT EXISTS, given to an outer row whose passing turns on it (vdsconj); 19: session 48's three 18s merged: a reaching fact row with a NULL foreign key (vdsjoin); new output rows pass the dimension's own filter, shared encoded ids (vlimit2); edge rows on both sides of a bound, CASE splits, difference bounds, rotation (vdsbound); 17: both of 16s (merged); 16: years with gaps are a sample of the calendar, counts over no row
# get a tuple (vspider); the LIMIT growth's regroup and recombine moves (outputs.py, vlimit);
# 15: both of 12 and 14 (merged); 14: witness rows within a table's floor cost no rebuild of the
# subset (_witness_cost); 13: edge witnesses through the join path that keep the HAVING golds' answers (pathedges.py
# guards); 12: an ordered gold with 1-2 pinned rows gets a new output row that sorts apart (outputs.OrderGrowth);
# 11: the builders' queries bounded by work, not wall time (engines.watchdog.bounded_rows,
# issue 31: content independent of the load); 10: the LIMIT growth bounded (golds past their LIMIT on the pinned data skipped, trials
# written in batches, a budget of counts per variant; outputs.py); 9: LIMIT golds grown past their LIMIT by new output rows (outputs.py); 8: rows made from
# scratch in empty tables, broken SQLite foreign keys skipped (nonempty.py, constraints.py); 7: a tuple for each gold
# with no value on the pinned data (nonempty.py); 6: witness rows
# count against the size budget, variants compacted; 5: the golds' join columns are candidate references (joinpath)
KINDS = ("subset", "subset+duplicates", "subset+shuffle")
FRACTIONS = (0.3, 0.5, 0.7)  # relative: scaled to the size budget (see _row_budget)
DUPLICATE_SHARE = 0.2
SIZE_BUDGET = 2.0  # all variants together (a suite's native ones too) within this multiple of the pinned file
BYTES_PER_ROW = 2.0  # a variant's share of the file over its share of the rows (small tables compress worse): ~1.6
TABLE_FLOOR_ROWS = {"duckdb": 500, "sqlite": 25}  # a table's least space, in rows: blocks (16 KiB), pages (512 B)
SMALL_DATABASE_SHARE = 0.2  # the mean share of rows kept where the floors, not the rows, make the size
GROWTH = 2.0  # rows kept after the growth over rows sampled (Vantage, TPC-H: 1.7-2); sampled = share / GROWTH
SMALL_SQLITE = 2 ** 20  # a SQLite database under this size gets variants of 512-byte pages
MANIFEST_NAME = "variants.json.gz"  # a variants folder's list of its variants, their settings and witness sentences
BUILD_PROCESSES = 2  # variants built at once: here and in one child process
CHILD_TIMEOUT_S = 3600.0  # the child process's share of a build, at most
VARIANT_BLOCK_SIZE = 16384  # DuckDB's smallest block size
MIN_SAMPLED_ROWS = 20  # a smaller table (a handful of currencies) stays whole
WITNESS_SLACK = 0.1  # the golds' witness rows may add this share of a variant's planned rows; more: a smaller subset
MIN_SUBSET_LEFT = 0.25  # a subset made smaller for its witness rows keeps at least this share of its plan
_SCALE = 2 ** 32

if TYPE_CHECKING:
    from .boundaries import BoundaryRows


@dataclass(frozen=True)
class Variant:
    """One built variant of a database."""

    index: int
    kind: str  # "subset", "subset+duplicates", "subset+shuffle"
    params: dict[str, Any] = field(hash=False)  # fraction, seed, tables duplicated, columns shuffled
    path: Path
    content_hash: str  # the engine's canonical content hash of the variant

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "params": self.params, "file": self.path.name,
                "content_hash": self.content_hash}


def content_hash(path: Path) -> str:
    """The engine's canonical content hash of a database file (``engines``' sandbox)."""
    from ..engines import open_sandbox
    from ..engines.base import Limits
    sandbox = open_sandbox(path, Limits(timeout_s=600.0))
    try:
        return sandbox.content_hash()
    finally:
        sandbox.close()


def remembered_content_hash(path: Path) -> str:
    """``content_hash`` kept beside the file (``<file>.content-hash``), so a rerun hashes
    nothing; computed again when the file is newer than what was kept."""
    kept = path.with_name(path.name + ".content-hash")
    if not kept.is_file() or kept.stat().st_mtime < path.stat().st_mtime:
        remember_content_hash(path, content_hash(path))
    return kept.read_text(encoding="utf-8").strip()


def remember_content_hash(path: Path, digest: str) -> None:
    """Keep ``digest``, the ``content_hash`` of the file at ``path`` computed by whoever
    wrote it (a suite's generator hashes what it built), for ``remembered_content_hash``:
    the file is then hashed once, not again (a native variant of Vantage: about 1 s each)."""
    kept = path.with_name(path.name + ".content-hash")
    tmp = kept.with_name(f".{kept.name}.{os.getpid()}.tmp")
    tmp.write_text(digest, encoding="utf-8")
    os.replace(tmp, kept)


def plan(index: int, seed: int) -> tuple[str, float, str]:
    """(kind, fraction, tag) of variant ``index``: kinds cycle, fractions cycle per round of kinds."""
    return KINDS[index % len(KINDS)], FRACTIONS[(index // len(KINDS)) % len(FRACTIONS)], f"{seed}:{index}"


def build_variants(database: str | Path, out_dir: str | Path, *, count: int, seed: int = 0,
                   frozen_columns: Iterable[str] = (), total_participation: bool = True,
                   pinned_hash: str | None = None, rows: BoundaryRows | None = None,
                   others: int | Callable[[], int] = 0,
                   refused: dict[int, list[str]] | None = None) -> list[Variant]:
    """Build (or reuse) ``count`` variants of a DuckDB or SQLite database file; any other
    location raises ``UsageError``. Variants already built with the same inputs and whose
    files still have their recorded content hash are reused, the others (re)built: a file
    whose size and modification time are the recorded ones is taken as recorded, any other
    is hashed again. ``pinned_hash``: the database's content hash, when the caller has it.
    ``rows``: the golds' boundary rows, written into every variant as it is built (the
    variants are then cached under the golds' digest). ``others``: how many variants the
    suite's own generator adds (they share the size budget), or a function that says it,
    asked only once the answer is needed: a first build copies and observes the database
    meanwhile (while the generator builds them in a thread, ``VariantSet.build``).

    ``total_participation=False`` drops the observed "every parent value is used" facts
    from what variants keep (a correct ``count(DISTINCT customer_id) FROM orders`` for
    ``count(*) FROM customers`` may then fail on a variant); keeping them (the default, the
    safe side) makes the closure cut deeper.

    ``refused``: per index, the builder queries a frozen build refused by their work
    (``Variant.params["refused"]``): exactly those are refused here, whatever this engine
    release estimates (``engines.watchdog.refusals``)."""
    engine = engine_of(database)
    database = Path(database)
    frozen = sorted(set(frozen_columns))
    pinned = pinned_hash or content_hash(database)
    folder = Path(out_dir) / pinned[:16] / str(seed)
    if rows is not None:
        folder = folder / f"rows-{rows.digest}"
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ".duckdb" if engine == "duckdb" else database.suffix or ".sqlite"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per folder; the others then reuse its files
        def settings() -> dict[str, Any]:  # ``others`` asked when first needed (a callable: natives still building)
            return {"frozen_columns": frozen, "total_participation": total_participation,
                    "others": others() if callable(others) else others,
                    **({"replayed": _replayed(refused)} if refused is not None else {})}

        manifest = folder / MANIFEST_NAME
        recorded = _read_manifest(manifest, pinned, settings()) if manifest.is_file() else {}
        variants, todo = [], []
        for index in range(count):
            path = folder / f"variant-{index:03d}{suffix}"
            old = recorded.get(index)
            if old and old["kind"].partition("+boundary")[0] == plan(index, seed)[0] and path.is_file() \
                    and not old["params"].get("load_dependent") and (  # the safety net fired: built again
                    old.get("stat") == _stat(path) or _hash_or_none(path) == old["content_hash"]):
                variants.append(Variant(index, old["kind"], old["params"], path, old["content_hash"]))
            else:
                todo.append(index)
        if todo:
            from concurrent.futures import ThreadPoolExecutor
            golds = (rows.gold_sqls, rows.dialect) if rows is not None else None
            # the constraints are observed on the pinned file (aggregates of its content: its copy's
            # are the same) while the copy is written: 3 s and 4.8 s of one core each on Vantage
            with ThreadPoolExecutor(1, thread_name_prefix="sqleval-observe") as observer:
                observing = observer.submit(observed_once, database, frozen, golds)
                source = _canonical(database, folder) if engine == "duckdb" else database
                try:
                    observed = observing.result()
                except BaseException:
                    if source != database:
                        source.unlink(missing_ok=True)
                    raise
            try:
                if rows is not None:
                    rows.read_from(source)
                if not total_participation:
                    observed = replace(observed, dependencies=[d for d in observed.dependencies if d.origin != "total"])
                scale = _row_budget(count + settings()["others"], observed, engine) / (sum(FRACTIONS) / len(FRACTIONS))
                job = _Job(engine, source, folder, suffix, observed, seed, scale,
                           (rows.gold_sqls, rows.dialect) if rows is not None else None, refused)
                variants += _build_all(job, todo, rows)
            finally:
                if source != database:
                    if rows is not None:
                        rows.read_from(database)  # as the caller gave them: the copy is deleted
                    for leftover in (source, Path(str(source) + ".wal")):
                        leftover.unlink(missing_ok=True)
        variants.sort(key=lambda v: v.index)
        _write_manifest(manifest, pinned, seed, count, settings(), variants, recorded)
    return variants


@dataclass
class _Job:
    """What building a variant needs, sent to the second build process as a pickle."""

    engine: str
    database: Path
    folder: Path
    suffix: str
    constraints: Constraints
    seed: int
    scale: float
    golds: tuple[list[str], str] | None  # the golds and their dialect: the boundary rows to write
    refused: dict[int, list[str]] | None = None  # per index, the queries a frozen build refused (replayed)


def _build_index(job: _Job, index: int, rows: BoundaryRows | None) -> Variant:
    """Build variant ``index``: its subset, then the golds' boundary, witness and clone rows.
    Those rows count against the size budget like any other (``_row_budget`` plans the
    subset from rows): when they add more than ``WITNESS_SLACK`` of the rows the variant was
    planned to hold (``_witness_cost``: rows within a table's floor cost nothing), the subset
    is built again that many rows smaller (once, and to no less than ``MIN_SUBSET_LEFT`` of
    its plan) and the rows written again; then the file is compacted (``_compact``)."""
    kind, fraction, tag = plan(index, job.seed)
    path = job.folder / f"variant-{index:03d}{job.suffix}"
    tmp = job.folder / f".{path.name}.{os.getpid()}.building"
    total = sum(t.rows for t in job.constraints.tables.values()) or 1
    target = min(1.0, fraction * job.scale)
    from ..engines.watchdog import net_fired, refusals
    fired = len(net_fired())
    replay = job.refused.get(index, []) if job.refused is not None else None
    with refusals(replay) as refused, _building(tmp):
        for attempt in (0, 1):
            params, before = _build_subset(job.engine, job.database, tmp, job.constraints, kind, target, tag, index)
            params.update(seed=job.seed, tag=tag)
            made = Written()
            if rows is None:
                written = None
                break
            written = rows.write(tmp, job.engine, job.constraints.tables, f"{tag}:boundary",
                                 job.constraints.dependencies, index)
            made = write_nonempty(tmp, job.engine, job.constraints, rows.gold_sqls, rows.dialect, job.database, index)
            grown = write_outputs(tmp, job.engine, job.constraints, rows.gold_sqls, rows.dialect, job.database, index)
            if grown.tally:  # the LIMIT growth's golds grown, undone and skipped (why), and its work
                params["output_growth"] = dict(sorted(grown.tally.items()))
            for gold, said in grown.sentences.items():  # LIMIT golds lifted past their LIMIT (outputs.py)
                made.sentences.setdefault(gold, []).extend(said)
            if made.rows:  # a tuple for each gold with no value on the pinned data (nonempty.py)
                written = {**(written or {}), **{f"{t} (non-empty gold)": n for t, n in made.rows.items()}}
            if grown.rows:
                written = {**(written or {}), **{f"{t} (LIMIT output rows)": n for t, n in grown.rows.items()}}
            # compacted here, not after the loop: the copy counts the rows it writes, so the file is
            # not opened once more to count them (a second attempt's subset replaces it anyway)
            after = _compact(job.engine, tmp, job.constraints) if written is not None else before
            params["witness_rows"] = sum(after.values()) - sum(before.values())
            cost = _witness_cost(before, after, job.engine)
            if attempt or cost <= WITNESS_SLACK * target * total:
                break
            target = max(target * MIN_SUBSET_LEFT, target - cost / total)
            for leftover in (tmp, Path(str(tmp) + ".wal")):
                leftover.unlink(missing_ok=True)
        if written is not None:
            kind, params["boundary_rows"] = kind + "+boundary", written
            if rows is not None and (rows.witnessed or made.sentences or grown.later):
                # gold digest -> what its clone witnesses and its non-empty tuple are
                params["witnesses"] = {k: made.sentences.get(k, []) + rows.witnessed.get(k, [])
                                       + grown.later.get(k, [])  # pathedges' edge rows last
                                       for k in sorted({*rows.witnessed, *made.sentences, *grown.later})}
        if net_fired()[fired:]:  # a query stopped by time, not work: this content is the load's (issue 31)
            params["load_dependent"] = net_fired()[fired:]
        # the queries refused by their work: a frozen record keeps them, and a build replaying them
        # refuses the same on an engine release that estimates or counts otherwise (watchdog.refusals)
        params["refused"] = sorted(refused.made)
        digest = content_hash(tmp)
        os.replace(tmp, path)
    return Variant(index, kind, params, path, digest)


def _replayed(refused: dict[int, list[str]]) -> str:
    """The digest of a replayed record's refusals: variants built deciding by this engine's
    estimates are not taken for ones built replaying them."""
    listed = sorted((int(i), sorted(keys)) for i, keys in refused.items())
    return hashlib.sha256(json.dumps(listed).encode()).hexdigest()[:16]


@contextmanager
def _building(tmp: Path) -> Iterator[None]:
    """A variant file being written: gone when the block ends (renamed into place, or failed)."""
    try:
        yield
    finally:
        for leftover in (tmp, Path(str(tmp) + ".wal")):
            leftover.unlink(missing_ok=True)


def _canonical(database: Path, folder: Path) -> Path:
    """A copy of a DuckDB database (in ``folder``, for one build) whose every table holds
    its rows in the order of their values (``ORDER BY ALL``). The builders take "a row" in
    a file's order (the first reaching row, the first of a tie), and files of one content
    differ in row order: the Vantage warehouse, built by several threads, is written in
    another order on every machine, and its variants used to differ with it (9 of 126
    tables of variant 0 between two builds of one content hash). About 2.5 s of one core
    on Vantage, once per build; the copy is deleted after it."""
    for leftover in folder.glob(".canonical-*"):  # a killed build's (the folder's lock is ours)
        leftover.unlink(missing_ok=True)
    copy = folder / f".canonical-{os.getpid()}.duckdb"
    _copy_database(database, copy, _catalog_order, sort=True)
    return copy


def _catalog_order(con: Any) -> list[str]:
    """The tables of the database attached as ``src``, each a declared foreign key references
    (in its own schema, as DuckDB's are) before the tables referencing it."""
    tables = [f"{s}.{n}" for s, n in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'src' AND NOT internal "
        "AND NOT temporary ORDER BY 1, 2").fetchall()]
    before: dict[str, set[str]] = {}
    for schema, name, parent in con.execute(
            "SELECT schema_name, table_name, referenced_table FROM duckdb_constraints() "
            "WHERE database_name = 'src' AND constraint_type = 'FOREIGN KEY'").fetchall():
        if parent and parent != name:
            before.setdefault(f"{schema}.{name}", set()).add(f"{schema}.{parent}")
    return [t for t in parents_first(tables, before) if t in tables]


def _row_counts(con: Any, engine: str, constraints: Constraints) -> dict[str, int]:
    """Rows of each of a variant's tables, on a connection already open to it (opening a
    126-table DuckDB file costs about 0.3 s: the count used to open it twice a variant)."""
    names = list(constraints.tables)
    if not names:
        return {}
    row: Any = con.execute("SELECT " + ", ".join(f"(SELECT count(*) FROM {qualified(n, engine)})"
                                                 for n in names)).fetchone()
    return {n: int(v) for n, v in zip(names, row)}


def _witness_cost(before: dict[str, int], after: dict[str, int], engine: str) -> int:
    """The rows the witnesses add that take space: a table's rows past its floor
    (``TABLE_FLOOR_ROWS``, the least space it takes, which ``_row_budget`` charges every
    variant anyway) or past its subset's rows, whichever is more. On a database of small
    tables the witness rows used to rebuild a subset so small that none of them fit again
    (a new order and its lines, in a subset with no order), for no byte saved."""
    floor = TABLE_FLOOR_ROWS[engine]
    return sum(max(0, n - max(floor, before.get(t, 0))) for t, n in after.items())


def _inserted(cur: Any) -> int:
    """The rows a DuckDB ``INSERT`` wrote (its one result row)."""
    row = cur.fetchone()
    return int(row[0]) if row else 0


def _compact(engine: str, path: Path, constraints: Constraints) -> dict[str, int]:
    """Rewrite a variant after its boundary, witness and clone rows were written, so that
    its file holds its rows and no more. Those writes are updates and inserts into a file
    already written: DuckDB writes each changed column segment to new blocks at the
    checkpoint and keeps the old ones in the file as free blocks, and an insert of a few
    rows into a table takes a new block per column (16 KiB each), so a variant of a few
    thousand rows grew to 2.07x (TPC-H) and 2.28x (Spider) the pinned file, over
    ``SIZE_BUDGET``, which ``_row_budget`` computes from rows. A DuckDB variant is copied
    table by table (parents first, in row order) into a fresh file of the same block size;
    a SQLite one is vacuumed (its page size stays). The content, and so the content hash,
    is the same. Returns the variant's rows per table (counted as they are copied)."""
    if engine != "duckdb":
        lite = variant_connection(path, engine, isolation_level=None)
        try:
            counts = _row_counts(lite, engine, constraints)
            lite.execute("VACUUM")
        finally:
            lite.close()
        return counts
    fresh = path.with_name(path.name + ".compact")
    fresh.unlink(missing_ok=True)
    counts = _copy_database(path, fresh, lambda con: _insert_order(constraints), block_size=VARIANT_BLOCK_SIZE)
    Path(str(fresh) + ".wal").unlink(missing_ok=True)
    os.replace(fresh, path)
    return counts


def _copy_database(source: Path, target: Path, order: Callable[[Any], list[str]], *,
                   block_size: int | None = None, sort: bool = False) -> dict[str, int]:
    """Copy a DuckDB database's schema to a new file, then its tables in ``order(con)``
    (``schema.table`` names; parents first: DuckDB checks a reference as a row is
    inserted), on one thread, so rows are written in the order they are read (``sort``: of
    their values). Returns the rows copied per table; the new file is removed on failure."""
    con = variant_connection(":memory:", "duckdb")
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(f"ATTACH {sql_literal(str(source))} AS src (READ_ONLY)")
        con.execute(f"ATTACH {sql_literal(str(target))} AS dst" + (f" (BLOCK_SIZE {block_size})" if block_size else ""))
        con.execute("COPY FROM DATABASE src TO dst (SCHEMA)")
        counts = {}
        for name in order(con):
            table = qualified(name, "duckdb")
            counts[name] = _inserted(con.execute(f"INSERT INTO dst.{table} SELECT * FROM src.{table}"
                                                 + (" ORDER BY ALL" if sort else "")))
        con.execute("DETACH dst")
        con.execute("DETACH src")
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    return counts


def _build_all(job: _Job, indices: list[int], rows: BoundaryRows | None) -> list[Variant]:
    """Build ``indices`` in this process and a second one (the engines' Python drivers
    hold the GIL, so threads build one at a time), each taking the next index neither has
    taken (``_claims``): variants take 10-14 s each on Vantage, and a fixed half each left
    one core idle for the longer half's last variant. The largest planned share first, so
    the last two taken are the smallest: in index order one process waited 5 s of a 62 s
    Vantage first run for the other's last variant. A variant's content does not depend
    on the process that builds it, nor on the order. A plain child process (``python -c``), not
    ``multiprocessing``: that would import the caller's main script again, which a script
    calling ``Grader`` at top level does not survive."""
    import pickle
    import subprocess
    counter = job.folder / f".claims-{os.getpid()}"
    jobfile = job.folder / f".job-{os.getpid()}.pickle"
    child = None
    indices = sorted(indices, key=lambda index: -plan(index, job.seed)[1])  # stable: index order within a share
    try:
        counter.write_text("0", encoding="utf-8")
        if BUILD_PROCESSES > 1 and len(indices) > 1:
            jobfile.write_bytes(pickle.dumps((job, indices, counter)))
            from ..childio import python_child
            cmd, env = python_child("-c", "import sys; from pytest_sqleval.core.variants.build import "
                                    "build_in_child; build_in_child(sys.argv[1])", str(jobfile))
            child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        built = [_build_index(job, index, rows) for index in _claims(counter, indices)]
        if child is not None:
            try:
                out, err = child.communicate(timeout=CHILD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"the second variant build process took over {CHILD_TIMEOUT_S:.0f} s") from None
            if child.returncode != 0:
                raise RuntimeError("the second variant build process failed: "
                                   + (err.decode(errors="replace").strip().splitlines() or ["no message"])[-1])
            built += pickle.loads(out)
        return built
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        jobfile.unlink(missing_ok=True)
        counter.unlink(missing_ok=True)


def _claims(counter: Path, indices: list[int]) -> Iterator[int]:
    """The indices this process builds: each the next one no build process has taken, by
    a count in ``counter`` that the processes of one build share under a lock."""
    with open(counter, "r+", encoding="utf-8") as shared:
        while True:
            fcntl.flock(shared, fcntl.LOCK_EX)
            try:
                shared.seek(0)
                taken = int(shared.read() or 0)
                shared.seek(0)
                shared.write(str(taken + 1))
                shared.truncate()
                shared.flush()
            finally:
                fcntl.flock(shared, fcntl.LOCK_UN)
            if taken >= len(indices):
                return
            yield indices[taken]


def build_in_child(jobfile: str) -> None:
    """The second build process: build the variants it claims, write them to stdout (pickle)."""
    import pickle
    from ..childio import private_stdout
    answer = private_stdout()  # DuckDB's progress bar must not land in the pickle
    job, indices, counter = pickle.loads(Path(jobfile).read_bytes())
    Path(jobfile).unlink(missing_ok=True)  # read: gone even if both processes are killed
    from .boundaries import BoundaryRows
    rows = BoundaryRows(job.database, job.golds[0], job.golds[1], job.seed) if job.golds else None
    try:
        built = [_build_index(job, index, rows) for index in _claims(counter, indices)]
    finally:
        if rows is not None:
            rows.close()
    answer.write(pickle.dumps(built))
    answer.flush()


_OBSERVED: LastOne[tuple[Any, ...], Constraints] = LastOne()  # one database at a time: a Spider run does not keep twenty


def observed_once(database: Path, frozen_columns: Iterable[str] = (),
                  golds: tuple[list[str], str] | None = None) -> Constraints:
    """``observe_constraints``, once per database file (its size and modification time)
    and frozen columns in this process: every build of its variants in a process (two
    suites on one database, ``validate`` then a run) reads the same constraints, which
    take seconds to observe on a warehouse. Shared:
    a caller copies before changing it."""
    stat = Path(database).stat()
    key = (str(Path(database).resolve()), stat.st_size, stat.st_mtime_ns, tuple(sorted(set(frozen_columns))),
           repr(golds))
    return _OBSERVED.get(key, lambda: observe_constraints(database, frozen_columns=frozen_columns, golds=golds))


def _row_budget(count: int, constraints: Constraints, engine: str) -> float:
    """The mean share of the pinned rows a variant keeps (after the growth) so that
    ``count`` variants stay within ``SIZE_BUDGET`` times the pinned file, each also taking
    its floor (``TABLE_FLOOR_ROWS`` per table); ``FRACTIONS`` are scaled to it. From row
    counts, not file sizes: the same on every engine release."""
    budget = SIZE_BUDGET / max(1, count)
    floor = len(constraints.tables) * TABLE_FLOOR_ROWS[engine] / (sum(t.rows for t in constraints.tables.values()) or 1)
    if floor > budget / 2:  # a small database: its variants' size is their floor, whatever rows they keep
        return SMALL_DATABASE_SHARE
    return (budget - floor) / BYTES_PER_ROW


def _hash_or_none(path: Path) -> str | None:
    try:
        return content_hash(path)
    except Exception:  # a damaged file: rebuilt
        return None


def read_manifest(path: Path) -> Any:
    """A variants folder's manifest (``MANIFEST_NAME``) as written; ValueError for a damaged one."""
    try:
        return json.loads(gzip.decompress(path.read_bytes()))
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise ValueError(f"{path}: {exc}") from exc


def _read_manifest(path: Path, pinned: str, settings: dict[str, Any]) -> dict[int, dict[str, Any]]:
    try:
        data = read_manifest(path)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("generator") != GENERATOR_VERSION or data.get("pinned") != pinned \
            or any(data.get(k) != v for k, v in settings.items()):
        return {}
    return {v["index"]: v for v in _expanded(data.get("variants", []), data.get("sentences"))
            if isinstance(v, dict) and "index" in v}


def _write_manifest(path: Path, pinned: str, seed: int, count: int, settings: dict[str, Any],
                    variants: list[Variant], recorded: dict[int, dict[str, Any]]) -> None:
    entries = {i: v for i, v in recorded.items() if i >= count}  # a larger pool built earlier stays listed
    entries.update({v.index: {**v.to_dict(), "stat": _stat(v.path)} for v in variants})
    listed, sentences = _shared([entries[i] for i in sorted(entries)])
    data = {"generator": GENERATOR_VERSION, "pinned": pinned, "seed": seed, "count": max([count, *entries]),
            **settings, "sentences": sentences, "variants": listed}
    # one line, no indent, compressed: on a small SQLite database the manifest was about 0.4x
    # the pinned file indented, 0.23x on one line; its witness sentences compress about 6x
    blob = gzip.compress((json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n").encode("utf-8"), mtime=0)
    try:
        if path.read_bytes() == blob:
            return  # a rerun that built nothing writes nothing
    except OSError:
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(blob)
    os.replace(tmp, path)
    path.with_name("variants.json").unlink(missing_ok=True)  # the uncompressed manifest earlier releases wrote


def _shared(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The manifest's entries with each witness sentence replaced by its place in one shared
    list. A gold's sentences repeat in most of the variants its witnesses went into (179
    sentences, 49 distinct, in a Spider-style database's 8 variants): written out in each,
    they were most of the manifest's bytes."""
    at: dict[str, int] = {}
    out = []
    for entry in entries:
        said = (entry.get("params") or {}).get("witnesses")
        if isinstance(said, dict):
            refs = {gold: [at.setdefault(s, len(at)) for s in lines] for gold, lines in said.items()}
            entry = {**entry, "params": {**entry["params"], "witnesses": refs}}
        out.append(entry)
    sentences = list(at)
    return out, sentences


def _expanded(entries: Any, sentences: Any) -> list[Any]:
    """The entries ``_shared`` wrote, their sentences put back (a manifest without the shared
    list, written before it, is read as it is)."""
    if not isinstance(entries, list) or not isinstance(sentences, list):
        return entries if isinstance(entries, list) else []
    out: list[Any] = []
    for entry in entries:
        said = (entry.get("params") or {}).get("witnesses") if isinstance(entry, dict) else None
        if isinstance(said, dict):
            try:
                lines = {gold: [sentences[i] for i in refs] for gold, refs in said.items()}
            except (IndexError, TypeError):
                continue  # a damaged entry: its variant is built again
            entry = {**entry, "params": {**entry["params"], "witnesses": lines}}
        out.append(entry)
    return out


def _stat(path: Path) -> list[int]:
    """Size and modification time: a file that still has them is the file that was hashed."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


# -- the plan of one variant ---------------------------------------------------------------
def _build_one(engine: str, database: Path, target: Path, constraints: Constraints, kind: str, share: float,
               tag: str, index: int) -> dict[str, Any]:
    """Build one variant keeping about ``share`` of the pinned rows."""
    return _build_subset(engine, database, target, constraints, kind, share, tag, index)[0]


def _build_subset(engine: str, database: Path, target: Path, constraints: Constraints, kind: str, share: float,
                  tag: str, index: int) -> tuple[dict[str, Any], dict[str, int]]:
    """``_build_one``, and the rows of each table the variant holds (counted as the builder writes them)."""
    params: dict[str, Any] = {}
    duplicated = _duplicable(constraints) if kind == "subset+duplicates" else []
    shuffled = {t.name: t.free for t in constraints.tables.values() if len(t.free) and t.rows > 1} \
        if kind == "subset+shuffle" else {}
    if kind == "subset+duplicates":
        params["duplicated"] = duplicated
        params["share"] = DUPLICATE_SHARE
    if kind == "subset+shuffle":
        params["shuffled"] = {t: list(cols) for t, cols in sorted(shuffled.items())}
    builder = _DuckDBBuilder if engine == "duckdb" else _SQLiteBuilder
    built = builder(database, target, constraints, share, tag, index)
    built.build(duplicated, shuffled)
    params.update(fraction=round(built.fraction, 6), row_share=round(built.share, 4))
    params["emptied_tables"] = built.emptied
    return params, built.written


def key_domains(constraints: Constraints) -> list[list[tuple[str, str]]]:
    """The (table, column) sets linked by single-column dependencies, largest first: by
    the rows of their tables, then by their first member."""
    root: dict[tuple[str, str], tuple[str, str]] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        root.setdefault(x, x)
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for dep in constraints.dependencies:
        if len(dep.child_columns) == 1:
            a, b = find((dep.child, dep.child_columns[0])), find((dep.parent, dep.parent_columns[0]))
            if a != b:
                root[max(a, b)] = min(a, b)
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for node in list(root):
        groups.setdefault(find(node), []).append(node)

    def values(group: list[tuple[str, str]]) -> int:  # the domain's size: the rows of a table it is a key of
        return max((constraints.tables[t].rows for t, c in group if _single_key(constraints.tables[t], c)), default=0)

    return sorted((sorted(g) for g in groups.values() if values(g) >= MIN_SAMPLED_ROWS),
                  key=lambda g: (-sum(constraints.tables[t].rows for t, _ in g), g[0]))


def _holds_key(t: TableConstraints, columns: tuple[str, ...]) -> bool:
    """Whether ``columns`` include a declared or observed key of ``t``: a non-null value of
    them is on one row at most (of the pinned data, so of every subset of it)."""
    keys = [t.primary_key, *t.unique_keys, *((c,) for c in t.observed_unique)]
    return any(key and set(key) <= set(columns) for key in keys)


def _single_key(t: TableConstraints, column: str) -> bool:
    return t.primary_key == (column,) or column in t.observed_unique or (column,) in t.unique_keys


def sampling_columns(constraints: Constraints, index: int) -> dict[str, str]:
    """Per table, the column whose value decides whether a row is kept (see ``subset``):
    its column in the first key domain it has, the domains in size order rotated by ``index``."""
    domains = key_domains(constraints)
    out: dict[str, str] = {}
    if domains:
        start = index % len(domains)
        for domain in domains[start:] + domains[:start]:
            for table, column in domain:
                out.setdefault(table, column)
    return out


def _duplicable(constraints: Constraints) -> list[str]:
    parents = constraints.parents()
    return [t.name for t in constraints.tables.values()
            if t.duplicate_rows and not t.has_key and t.name not in parents]


def _insert_order(constraints: Constraints) -> list[str]:
    """Tables with every declared foreign key's parent before its child (the engine checks them)."""
    declared = [d for d in constraints.dependencies if d.origin == "declared" and d.child != d.parent]
    order: list[str] = []
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in done or name in path:
            return
        for dep in declared:
            if dep.child == name:
                visit(dep.parent, path + (name,))
        done.add(name)
        order.append(name)

    for name in constraints.tables:
        visit(name, ())
    return order


class _Builder:
    """What both engines share: the sample, then the growth loop over the dependencies."""

    con: Any  # the engine's connection, set by ``build``
    keep: dict[str, str]  # table -> its temporary table of kept rows, set by ``build``

    def __init__(self, database: Path, target: Path, constraints: Constraints, share: float, tag: str,
                 index: int) -> None:
        self.database, self.target, self.c, self.tag = database, target, constraints, tag
        self.fraction, self.share = share / GROWTH, 0.0  # the share kept, once the growth is done
        self.threshold = int(self.fraction * _SCALE)
        self.index = index
        self.by = sampling_columns(constraints, index)
        self.emptied = 0
        self.written: dict[str, int] = {}  # rows of each table the variant holds once built

    def choose_subset(self) -> None:
        self.sample()
        self.grow()
        kept = {name: self.kept_rows(name) for name in self.c.tables}
        self.share = sum(kept.values()) / (sum(t.rows for t in self.c.tables.values()) or 1)
        self.emptied = sum(1 for t in self.c.tables.values() if t.rows > 0 and kept[t.name] == 0)

    def kept(self, t: TableConstraints) -> str:
        """The condition of a row kept before the growth."""
        if t.rows < MIN_SAMPLED_ROWS:
            return "true"
        column = self.by.get(t.name)
        if column is None:
            return f"{self.pick(t, self.tag)} < {self.threshold}"
        return (f"CASE WHEN {quote(column)} IS NULL THEN {self.pick(t, self.tag)} "
                f"ELSE {self.pick(t, self.tag, columns=[column])} END < {self.threshold}")

    def grow(self) -> None:
        """Add back a target row for every kept reference that lost its target, until none
        is missing: every dependency once, then again those whose child table gained rows.

        Rows are only ever added to the keep tables, and a parent gaining rows only fills
        gaps: once a dependency has had its turn, every child row kept then has its target
        for good. So its next turn looks only at the child rows added since (``since``: the
        keep table's row count at its last turn; a keep table's row ids follow insertion),
        not at the whole child table again: on Vantage a dependency's turn came 2-3 times a
        variant (1114 turns over 438 dependencies), each reading both keep tables whole.
        The rows added, and their order, are those of looking at every child row each time."""
        from collections import deque
        by_child: dict[str, list[Dependency]] = {}
        for dep in self.c.dependencies:
            by_child.setdefault(dep.child, []).append(dep)
        pending = deque(self.c.dependencies)
        queued = set(pending)
        known = self.any_missing_of(list(pending))  # asked at once; right while the child gains no rows
        rows: dict[str, int] = {}  # rows of a keep table, once asked; then counted as rows are added
        since: dict[Dependency, int] = {}  # rows of the child's keep table at the dependency's last turn
        while pending:
            dep = pending.popleft()
            queued.discard(dep)
            if dep.child not in rows:
                rows[dep.child] = self.kept_rows(dep.child)
            seen = since.get(dep, 0)
            since[dep] = rows[dep.child]  # before the add: a self-reference's new rows are looked at next time
            missing = known.pop(dep) if dep in known else self.any_missing_of([dep], seen)[dep]
            added = self.add_missing(dep, seen) if missing else 0
            if added:
                if dep.parent in rows:
                    rows[dep.parent] += added
                for again in by_child.get(dep.parent, []):
                    known.pop(again, None)  # its child gained rows: asked again at its turn
                    if again not in queued:
                        pending.append(again)
                        queued.add(again)

    def sample(self) -> None:  # pragma: no cover - per engine
        raise NotImplementedError

    def kept_rows(self, table: str) -> int:  # pragma: no cover - per engine
        raise NotImplementedError

    def any_missing_of(self, deps: list[Dependency], since: int = 0) -> dict[Dependency, bool]:
        """Whether each dependency misses a target now (for the child rows after the first
        ``since``), 50 to a query (a query costs more than its answer here)."""
        out: dict[Dependency, bool] = {}
        for i in range(0, len(deps), 50):
            chunk = deps[i:i + 50]
            row = self.con.execute("SELECT " + ", ".join(f"EXISTS ({self.missing_keys_sql(d, since)})" for d in chunk)
                                   ).fetchone()
            out.update((d, v in (1, True)) for d, v in zip(chunk, row))
        return out

    def add_missing(self, dep: Dependency, since: int = 0) -> int:  # pragma: no cover - per engine
        raise NotImplementedError

    def pick(self, t: TableConstraints, tag: str, *, whole_row: bool = False,
             columns: list[str] | None = None) -> str:  # pragma: no cover - per engine
        raise NotImplementedError

    first_rowid = 0  # the row id of a keep table's first row (then one more per row added)

    def missing_keys_sql(self, dep: Dependency, since: int = 0) -> str:
        """The values kept child rows (after the first ``since``) reference that no kept
        parent row holds: on the keep tables alone, so cheap; the growth asks it before
        searching the parent's data."""
        child, parent = self.keep[dep.child], self.keep[dep.parent]
        pairs = list(zip(dep.child_columns, dep.parent_columns))
        nonnull = " AND ".join(f"c.{quote(cc)} IS NOT NULL" for cc, _ in pairs)
        if since:
            nonnull += f" AND c.rowid >= {since + self.first_rowid}"
        covered = " AND ".join(f"x.{quote(pc)} = c.{quote(cc)}" for cc, pc in pairs)
        return (f"SELECT DISTINCT {', '.join('c.' + quote(cc) for cc, _ in pairs)} FROM {child} c "
                f"WHERE {nonnull} AND NOT EXISTS (SELECT 1 FROM {parent} x WHERE {covered})")

    def missing_sql(self, dep: Dependency, source: str, since: int = 0, where: str | None = None) -> str:
        """Rows of ``source`` (the parent's data, alias ``p``) that give a kept child row its
        missing target: one per missing value, the first by a hash of the row's content,
        projected like the parent's keep table. Where the parent's columns hold a key (a
        foreign key's target), a value has one row: it is taken without hashing any row, so
        the query reads the key and dependency columns only, not the whole parent table.
        ``where``: the filter on ``p`` that finds the missing values, if not a semi-join
        on ``missing_keys_sql``."""
        t = self.c.tables[dep.parent]
        pairs = list(zip(dep.child_columns, dep.parent_columns))
        match = " AND ".join(f"p.{quote(pc)} = m.{quote(cc)}" for cc, pc in pairs)
        where = where or f"EXISTS (SELECT 1 FROM ({self.missing_keys_sql(dep, since)}) m WHERE {match})"
        kept = ", ".join(["__rid"] + [quote(col) for col in self.keep_columns(dep.parent)])
        picked = ", ".join(["p.rowid AS __rid"] + [f"p.{quote(col)}" for col in self.keep_columns(dep.parent)])
        if _holds_key(t, dep.parent_columns):
            return f"SELECT {picked} FROM {source} p WHERE {where}"
        order = self.pick(t, self.tag + ":grow", whole_row=True)
        return (f"SELECT {kept} FROM (SELECT {picked}, row_number() OVER (PARTITION BY "
                f"{', '.join('p.' + quote(pc) for _, pc in pairs)} ORDER BY {order}) AS __rn FROM {source} p "
                f"WHERE {where}) WHERE __rn = 1")

    def keep_columns(self, table: str) -> list[str]:
        return sorted(self.c.dependency_columns(table))


# -- DuckDB ----------------------------------------------------------------------------------
class _DuckDBBuilder(_Builder):
    """Copies the schema (tables, constraints, views, macros, sequences) with ``COPY FROM
    DATABASE ... (SCHEMA)``, decides the kept rows on slim temporary tables (row id plus
    dependency columns), then inserts the kept rows parents first (DuckDB checks foreign keys)."""

    def build(self, duplicated: list[str], shuffled: dict[str, list[str]]) -> None:
        self.target.unlink(missing_ok=True)
        con = variant_connection(":memory:", "duckdb")  # one thread
        self.types: dict[str, dict[str, Any]] = {}  # table -> column -> DuckDB type
        self.con = con
        try:
            con.execute("SET preserve_insertion_order = false")
            con.execute("SET enable_progress_bar = false")
            con.execute(f"ATTACH {sql_literal(str(self.database))} AS src (READ_ONLY)")
            con.execute(f"ATTACH {sql_literal(str(self.target))} AS dst (BLOCK_SIZE {VARIANT_BLOCK_SIZE})")
            con.execute("COPY FROM DATABASE src TO dst (SCHEMA)")
            self.keep = {name: f"temp.main.k{i}" for i, name in enumerate(self.c.tables)}
            self.held: dict[str, list[tuple[Any, ...]]] = {}  # keep table -> its rows, as added (any_missing_of)
            self.covers: dict[tuple[str, tuple[str, ...]], tuple[set[Any], list[int]]] = {}
            self._collated: bool | None = None  # collated(), asked once
            self.choose_subset()
            for name in _insert_order(self.c):
                self.written[name] = self.insert(self.c.tables[name], shuffled.get(name, []))
            for name in duplicated:
                t = self.c.tables[name]
                self.written[name] += _inserted(con.execute(
                    f"INSERT INTO {self.dst(name)} SELECT * FROM {self.dst(name)} "
                    f"WHERE {self.pick(t, self.tag + ':dup', whole_row=True, where='dst')} "
                    f"< {int(DUPLICATE_SHARE * _SCALE)}"))
            con.execute("DETACH dst")
        finally:
            con.close()

    def sample(self) -> None:
        for name, t in self.c.tables.items():
            picked = ", ".join(["rowid AS __rid"] + [quote(col) for col in self.keep_columns(name)])
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {self.keep[name].rsplit('.', 1)[-1]} AS SELECT {picked} "
                             f"FROM {self.src(name)} WHERE {self.kept(t)}")

    def kept_rows(self, table: str) -> int:
        if table in self.held:
            return len(self.held[table])
        return int(self.con.execute(f"SELECT count(*) FROM {self.keep[table]}").fetchone()[0])

    # The growth's questions ("does a kept child row, added since, reference a value no kept
    # parent row holds?") were ~500 DuckDB queries a variant on Vantage at ~8 ms each, nearly
    # all planning. They are answered here from the keep tables' dependency columns held in
    # Python (``held``: each keep table's rows in batches as inserted, so a dependency's
    # ``since`` is a position in the list as it is a row id in the table). Python's equality
    # says "covered" only where DuckDB's would too (equal Python values of one key's column
    # types are equal in DuckDB; a NULL never covers, as ``x = NULL`` is never true), so a
    # question answered "missing" by Python and not by DuckDB costs one insert that adds
    # nothing, and the rows kept are the ones DuckDB's questions kept.
    def any_missing_of(self, deps: list[Dependency], since: int = 0) -> dict[Dependency, bool]:
        if not self.held:  # the growth's first question: before any row is added
            for name in dict.fromkeys(n for d in self.c.dependencies for n in (d.child, d.parent)):
                cols = ", ".join(quote(col) for col in self.keep_columns(name))
                self.held[name] = self.con.execute(f"SELECT {cols} FROM {self.keep[name]}").fetchall()
        out = {}
        for dep in deps:
            try:
                out[dep] = self._misses(dep, since)
            except TypeError:  # a value Python cannot hash (a LIST key): DuckDB answers
                out.update(super().any_missing_of([dep], since))
        return out

    def _misses(self, dep: Dependency, since: int) -> bool:
        return next(self._uncovered(dep, since), None) is not None

    def _uncovered(self, dep: Dependency, since: int) -> Iterator[tuple[Any, ...]]:
        """The child rows' values (after the first ``since``) that no held parent row covers, as
        they come (repeats too), each a tuple of the child columns' values."""
        from operator import itemgetter
        parent_cols = self.keep_columns(dep.parent)
        covered, upto = self.covers.setdefault((dep.parent, tuple(dep.parent_columns)), (set(), [0]))
        held = self.held[dep.parent]
        if upto[0] < len(held):
            at = [parent_cols.index(col) for col in dep.parent_columns]
            covered.update(tuple(r[i] for i in at) for r in held[upto[0]:])
            upto[0] = len(held)
        child_cols = self.keep_columns(dep.child)
        key = itemgetter(*[child_cols.index(col) for col in dep.child_columns])
        one = len(dep.child_columns) == 1
        for row in self.held[dep.child][since:]:
            value = key(row)
            if one:
                if value is not None and (value,) not in covered:
                    yield (value,)
            elif None not in value and value not in covered:
                yield value

    def _missing_in(self, dep: Dependency, since: int) -> tuple[str, list[Any]] | None:
        """``missing_sql``'s filter as ``p.<column> IN`` the values Python found uncovered
        (``_uncovered``), and its parameter; or None (rows not held, a key of several columns,
        or columns where Python's equality may not be DuckDB's). The growth's inserts were
        half of a subset's CPU on Vantage (268 a variant at ~6 ms), nearly all planning the
        semi-join over the anti-join of the two keep tables; planning an ``IN`` list costs a
        third of it. The same values: on whole numbers, text without a collation and dates,
        Python and DuckDB agree on equality, so the values Python finds uncovered are those
        ``missing_keys_sql`` finds."""
        if len(dep.child_columns) != 1 or dep.child not in self.held or dep.parent not in self.held:
            return None
        (cc,), (pc,) = dep.child_columns, dep.parent_columns
        child = str(self.column_types(self.c.tables[dep.child])[cc])
        parent = str(self.column_types(self.c.tables[dep.parent])[pc])
        if self.collated() or not (child == parent in ("VARCHAR", "DATE")
                                   or {child, parent} <= _WHOLE_NUMBER_TYPES):
            return None
        try:
            values = [v for (v,) in dict.fromkeys(self._uncovered(dep, since))]
        except TypeError:  # a value Python cannot hash
            return None
        return f"p.{quote(pc)} IN (SELECT unnest(CAST(? AS {child}[])))", values

    def collated(self) -> bool:
        """Whether a table of the database declares a collation (its text equality is then not Python's)."""
        if self._collated is None:
            self._collated = bool(self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'src' "
                                                   "AND sql ILIKE '%collate%'").fetchone()[0])
        return self._collated

    def add_missing(self, dep: Dependency, since: int = 0) -> int:
        cols = ", ".join(quote(col) for col in self.keep_columns(dep.parent))
        given = self._missing_in(dep, since)
        query = self.missing_sql(dep, self.src(dep.parent), since, given[0] if given else None)
        added = self.con.execute(f"INSERT INTO {self.keep[dep.parent]} {query} RETURNING {cols}",
                                 [given[1]] if given else None).fetchall()
        if dep.parent in self.held:  # else the questions are DuckDB's (no rows held)
            self.held[dep.parent] += added
        return len(added)

    def src(self, name: str) -> str:
        return "src." + qualified(name, "duckdb")

    def dst(self, name: str) -> str:
        return "dst." + qualified(name, "duckdb")

    def row_text(self, t: TableConstraints, columns: list[str] | None = None, where: str = "src") -> str:
        from ..engines.canonical import duckdb_field_sql
        types = self.column_types(t, where)
        cols = columns or list(t.columns)
        return " || chr(31) || ".join(duckdb_field_sql(quote(col), types[col]) for col in cols) or "''"

    def column_types(self, t: TableConstraints, where: str = "src") -> dict[str, Any]:
        """Each column's DuckDB type, asked once a table (the source's and the copy's are the same)."""
        types = self.types.get(t.name)
        if types is None:
            rel = self.src(t.name) if where == "src" else self.dst(t.name)
            result = self.con.sql(f"SELECT * FROM {rel} LIMIT 0")
            types = self.types[t.name] = dict(zip(result.columns, result.types))
        return types

    def pick(self, t: TableConstraints, tag: str, *, whole_row: bool = False, columns: list[str] | None = None,
             where: str = "src") -> str:
        """A number in [0, 2**32) from ``columns``' values (else the row's key value, or the
        whole row) and ``tag``."""
        text = self.row_text(t, columns or (None if whole_row or not t.anchor else [t.anchor]), where)
        return f"CAST('0x' || substr(md5({text} || {sql_literal('|' + tag)}), 1, 8) AS UBIGINT)"

    def insert(self, t: TableConstraints, free: list[str]) -> int:
        """Write the kept rows of ``t`` (``free`` columns permuted); the rows written."""
        cols = list(t.columns)
        kept = f"(SELECT * FROM {self.src(t.name)} WHERE rowid IN (SELECT __rid FROM {self.keep[t.name]}))"
        if not free:
            return _inserted(self.con.execute(f"INSERT INTO {self.dst(t.name)} SELECT * FROM {kept}"))
        fixed = [c for c in cols if c not in free]
        row = self.row_text(t)
        order_a = f"md5({row} || {sql_literal('|a' + self.tag)})"
        order_b = f"md5({row} || {sql_literal('|b' + self.tag)})"
        a = ", ".join([quote(c) for c in fixed] + [f"row_number() OVER (ORDER BY {order_a}) AS __rn"])
        b = ", ".join([quote(c) for c in free] + [f"row_number() OVER (ORDER BY {order_b}) AS __rn"])
        names = ", ".join(quote(c) for c in fixed + free)
        return _inserted(self.con.execute(f"INSERT INTO {self.dst(t.name)} ({names}) SELECT {names} FROM "
                                          f"(SELECT {a} FROM {kept} x) a JOIN (SELECT {b} FROM {kept} y) b "
                                          f"USING (__rn)"))


_WHOLE_NUMBER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                       "UBIGINT", "UHUGEINT"}


# -- SQLite ----------------------------------------------------------------------------------
_STORAGE_CLASS = {int: "i", float: "r", str: "t", bytes: "b", InvalidText: "t"}


def _pick(tag: str, *values: Any) -> int:
    """A number in [0, 2**32) from canonical values (tagged with their storage class) and ``tag``."""
    import hashlib

    from ..engines.canonical import US, render_field
    text = US.join("N" if v is None else _STORAGE_CLASS.get(type(v), "?") + render_field(v) for v in values)
    return int(hashlib.md5(f"{text}|{tag}".encode("utf-8")).hexdigest()[:8], 16)


def _pick_bytes(tag: str, *values: Any) -> int:
    """``_pick`` of values passed as ``_pick_args`` passes them: text as its bytes, read back
    as the sandbox reads text (valid UTF-8 as the same ``str`` the driver gives, so the pick
    is the same; invalid as ``InvalidText``), a blob as its hex, anything else as it is.
    Python's sqlite3 cannot hand invalid UTF-8 text to a function at all."""
    return _pick(tag, *(decode_text(v) if isinstance(v, bytes) else bytes.fromhex(v) if isinstance(v, str) else v
                        for v in values))


def _pick_args(cols: list[str], utf8: bool) -> str:
    """The SQL arguments of ``sqleval_pick`` for quoted columns ``cols``: in a UTF-8 file,
    text as a blob of its bytes and a blob as its hex text (for ``_pick_bytes``); in a UTF-16
    file, whose text the driver always decodes, the columns themselves (for ``_pick``)."""
    if not utf8:
        return ", ".join(cols)
    return ", ".join(f"CASE typeof({c}) WHEN 'text' THEN CAST({c} AS BLOB) WHEN 'blob' THEN hex({c}) ELSE {c} END"
                     for c in cols)


class _SQLiteBuilder(_Builder):
    """Copies the file (``VACUUM INTO``: schema, data, views, triggers, indexes), then edits
    the copy with foreign-key enforcement off, and compacts it; a small database's variant
    with 512-byte pages (SQLite's smallest): a table takes at least a page, so with 4 KiB
    pages the variant of a Spider database of tens of rows per table is as large as it."""

    utf8 = True  # the file's text encoding is UTF-8 (see _pick_args); read from the copy in build
    first_rowid = 1  # SQLite numbers a table's rows from 1

    def build(self, duplicated: list[str], shuffled: dict[str, list[str]]) -> None:
        self.target.unlink(missing_ok=True)
        src = variant_connection(self.database, "sqlite", read_only=True)
        try:
            src.execute("VACUUM INTO ?", (str(self.target),))
        finally:
            src.close()
        con = variant_connection(self.target, "sqlite", isolation_level=None)
        self.con = con
        try:
            con.execute("PRAGMA foreign_keys = OFF")
            self.utf8 = str(con.execute("PRAGMA encoding").fetchone()[0]).upper() == "UTF-8"
            con.create_function("sqleval_pick", -1, _pick_bytes if self.utf8 else _pick, deterministic=True)
            con.execute("BEGIN")
            self.keep = {name: f"temp.k{i}" for i, name in enumerate(self.c.tables)}
            self.choose_subset()
            for name in self.c.tables:
                if self.has_rowid(name):
                    con.execute(f"DELETE FROM {quote(name)} WHERE rowid NOT IN (SELECT __rid FROM {self.keep[name]})")
            for name, free in shuffled.items():
                self.shuffle(self.c.tables[name], free)
            for name in duplicated:
                t = self.c.tables[name]
                con.execute(f"INSERT INTO {quote(name)} SELECT * FROM {quote(name)} "
                            f"WHERE {self.pick(t, self.tag + ':dup', whole_row=True)} < {int(DUPLICATE_SHARE * _SCALE)}")
            con.execute("COMMIT")
            self.written = _row_counts(con, "sqlite", self.c)
            if self.database.stat().st_size < SMALL_SQLITE:  # a table takes at least a page
                con.execute("PRAGMA page_size = 512")
            con.execute("VACUUM")
        finally:
            con.close()

    def pick(self, t: TableConstraints, tag: str, *, whole_row: bool = False,
             columns: list[str] | None = None) -> str:
        cols = columns or (list(t.columns) if whole_row or not t.anchor else [t.anchor])
        return f"sqleval_pick({sql_literal(tag)}, {_pick_args([quote(c) for c in cols], self.utf8)})"

    def has_rowid(self, name: str) -> bool:
        """Whether a table has rowids (a WITHOUT ROWID table is kept whole)."""
        without_rowid: int = self.con.execute("SELECT count(*) FROM sqlite_schema WHERE name = ? AND sql LIKE "
                                              "'%WITHOUT ROWID%'", (name,)).fetchone()[0]
        return without_rowid == 0

    def sample(self) -> None:
        for name, t in self.c.tables.items():
            whole = not self.has_rowid(name)
            picked = ", ".join([("NULL" if whole else "rowid") + " AS __rid"]
                               + [quote(col) for col in self.keep_columns(name)])
            self.con.execute(f"CREATE TEMP TABLE {self.keep[name].rsplit('.', 1)[-1]} AS SELECT {picked} "
                             f"FROM {quote(name)} WHERE {'true' if whole else self.kept(t)}")

    def kept_rows(self, table: str) -> int:
        return int(self.con.execute(f"SELECT count(*) FROM {self.keep[table]}").fetchone()[0])

    def add_missing(self, dep: Dependency, since: int = 0) -> int:
        cur = self.con.execute(f"INSERT INTO {self.keep[dep.parent]} {self.missing_sql(dep, quote(dep.parent), since)}")
        inserted: int = cur.rowcount
        return max(0, inserted)

    def shuffle(self, t: TableConstraints, free: list[str]) -> None:
        if not self.has_rowid(t.name):
            return
        rel, cols = quote(t.name), _pick_args([quote(c) for c in t.columns], self.utf8)
        fcols = ", ".join(quote(c) for c in free)
        self.con.execute("DROP TABLE IF EXISTS temp.__perm")
        self.con.execute(
            f"CREATE TEMP TABLE __perm AS SELECT a.__rid AS __rid, {', '.join('b.' + quote(c) for c in free)} FROM "
            f"(SELECT rowid AS __rid, row_number() OVER (ORDER BY sqleval_pick({sql_literal('a' + self.tag)}, {cols}), "
            f"sqleval_pick({sql_literal('c' + self.tag)}, {cols})) AS __rn FROM {rel}) a JOIN "
            f"(SELECT {fcols}, row_number() OVER (ORDER BY sqleval_pick({sql_literal('b' + self.tag)}, {cols}), "
            f"sqleval_pick({sql_literal('d' + self.tag)}, {cols})) AS __rn FROM {rel}) b USING (__rn)")
        self.con.execute("CREATE INDEX temp.__perm_rid ON __perm (__rid)")
        self.con.execute(f"UPDATE {rel} SET ({fcols}) = (SELECT {fcols} FROM temp.__perm p "
                         f"WHERE p.__rid = {rel}.rowid)")
        self.con.execute("DROP TABLE temp.__perm")


__all__ = ["GENERATOR_VERSION", "MANIFEST_NAME", "Variant", "build_variants", "content_hash", "read_manifest",
           "remember_content_hash"]
