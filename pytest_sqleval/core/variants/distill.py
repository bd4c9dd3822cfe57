"""Distillation: for each gold query, the few variants of the suite database that tell
its near-misses apart from it where the pinned database cannot.

A gold's mutants (``mutants.py``) stand for the wrong answers a model plausibly writes.
The engine process runs the gold and every mutant on the pinned database and on each
variant of the pool (``GradingHandler.distill``), half of the mutants in a second engine
process at once (``DISTILL_WORKERS``); the variants are then chosen greedily,
each adding the most mutants not yet told apart, up to the suite's count. What the pinned
database and the chosen variants tell apart is the case's *evidence strength*. Choices
are stored per gold (under the pool's content hashes), so a rerun distils nothing.

``validate`` freezes the pool's content hashes and every gold's choice into the suite's
``variants.frozen.json`` (``frozen_record``). A run with the same database, seed, count
and generator then takes each gold's choice from it (distilling nothing, on any machine:
distillation leaves out near-misses that overrun a time budget, so a slower machine could
choose otherwise) and refuses variants built to other content than was frozen."""
from __future__ import annotations

import hashlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TypeGuard

MUTANTS_PER_GOLD = 24  # enough to separate the variants; each costs one execution per variant
FROZEN_NAME = "variants.frozen.json"
MUTANT_TIME = (10.0, 0.2)  # a mutant may take 10x the gold's time, and at least 0.2 s, per database
#: a mutant whose plan (``watchdog.plan_rows``) on the pinned database passes 100x the gold's rows
#: and 2e8 is refused unrun, as one past its time (DuckDB). On Vantage 23 of the 31 near-misses that
#: ran to their time (cross products of a join condition made ``<>``) plan 2.6e8-2.1e10 rows; none
#: that finished planned over 1.1e8
MUTANT_PLAN_ROWS = (100.0, 2e8)
DISTILL_VERSION = 8  # bump when the choice or the mutants change: stored choices are then remade
RECORD_HASH = 16  # digits of a variant's content hash a stored choice keeps (its folder names the whole pool)
#: engine processes a gold's near-misses run on at once: the grading's own and one more (a
#: machine of 2 cores; on Vantage the distillation was 53 s of one core while the other idled)
DISTILL_WORKERS = 2
MUTANTS_WAIT_S = 120.0  # a gold's near-misses made ahead in a thread are waited for this long, at most


@dataclass
class CaseVariants:
    """The variants one gold is graded on, and what they and the pinned database tell apart."""

    variants: list[dict[str, Any]]  # {index, kind, path, hash} of each chosen variant
    mutants: int = 0
    pinned: int = 0  # mutants the pinned database tells apart from the gold
    by_variants: int = 0  # further mutants the chosen variants tell apart
    gold_rows: list[int | None] = field(default_factory=list)  # the gold's rows on each chosen variant
    #: per chosen variant: the gold's answer there has a value (rows, not NULLs only); empty
    #: in a choice stored before this was recorded (``gold_rows`` then says it)
    informative: list[bool] = field(default_factory=list)
    gold_changed: int = 0  # chosen variants where the gold's own answer differs from its pinned answer

    def graded_with_value(self) -> bool:
        """Some chosen variant gives the gold an answer with a value: an empty or all-NULL
        pinned gold is graded there (``SuiteGrader.gold``)."""
        return any(self.informative) if self.informative else any(self.gold_rows)

    def evidence(self) -> dict[str, Any]:
        told = self.pinned + self.by_variants
        return {"mutants": self.mutants, "told_apart_by_database": self.pinned,
                "told_apart_by_variants": self.by_variants, "not_told_apart": self.mutants - told,
                "strength": round(told / self.mutants, 3) if self.mutants else None,
                **({"gold_changed": self.gold_changed} if self.gold_changed else {})}


class VariantSet:
    """A suite database's pool of variants and each gold's choice among them."""

    def __init__(self, pool: list[Any], count: int, store: Path, settings: dict[str, Any] | None = None,
                 golds: str = "") -> None:
        self.pool = pool  # variants.build.Variant, in index order
        self.count = count
        self.settings = settings or {}  # what a frozen record must match: database, seed, count, generator
        self.golds = golds  # ``_golds_digest`` of the golds the pool was built for: a frozen record's must match
        signature = json.dumps([DISTILL_VERSION, count, [v.content_hash for v in pool]])
        self.store = store / hashlib.sha256(signature.encode()).hexdigest()[:16]
        self._chosen: dict[str, CaseVariants] = {}
        self._by_sql: dict[str, CaseVariants] = {}  # gold SQL digest -> choice: what a frozen record holds
        self._frozen: dict[str, dict[str, Any]] = {}
        self.workers = DISTILL_WORKERS
        self._helper: Any = None  # engines.host.EngineHost: the second distillation process, started on first use
        self.ahead = MutantsAhead([])  # the golds' near-misses, each made while the gold before it distils

    def close(self) -> None:
        """End the second distillation process, if one was started (a distillation after
        this starts it again)."""
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.close()

    @classmethod
    def build(cls, database: Path, cache_dir: Path, count: int, seed: int = 0,
              frozen_columns: tuple[str, ...] = (), gold_sqls: Iterable[str] = (), dialect: str = "duckdb",
              pinned_hash: str | None = None, frozen: Path | None = None,
              native: Callable[[Path], list[Path]] | None = None) -> "VariantSet":
        """A pool of ``count`` variants (built once, cached by content under
        ``cache_dir/variants``), carrying the golds' boundary rows when golds are given, and
        the suite's native ones, from which each gold chooses up to ``count`` (the variants
        where its answer can be trusted, the most telling first). Not a larger pool of smaller
        variants: choosing 8 of 16 caught 84 % of TPC-H coincidences over three seeds against
        80 % for these 8 (``bench/variants_bench.py``), but sixteen files' floors broke the
        2x disk budget on Vantage (2.1x) and on Spider-shaped data (2.9x), and its first run
        took 1.7x as long. ``frozen``: a ``variants.frozen.json``
        to take choices from, when it was frozen for these settings. ``native(folder)``: the
        suite generator's own variants (``pytest_sqleval_native_variants``), added to the pool."""
        from .boundaries import BOUNDARY_VERSION, BoundaryRows
        from .build import GENERATOR_VERSION, build_variants, content_hash
        store = Path(cache_dir) / "variants"
        pinned_hash = pinned_hash or content_hash(Path(database))
        golds = list(gold_sqls)
        settings = {"database_content_hash": pinned_hash, "seed": seed, "count": count,
                    "frozen_columns": sorted(frozen_columns),
                    "generator": [GENERATOR_VERSION, BOUNDARY_VERSION, DISTILL_VERSION]}
        # the suite generator's variants are built in a thread while the pool's first build copies
        # and observes the database (their count is asked only then: ``others``); on Vantage the
        # two took 3 s and 7.5 s one after the other, with a core idle for most of it
        with ThreadPoolExecutor(1, thread_name_prefix="sqleval-native-variants") as natives:
            made = natives.submit(native, store / pinned_hash[:16] / str(seed) / "native") if native else None
            rows = BoundaryRows(Path(database), golds, dialect, seed) if golds else None
            try:
                pool = build_variants(Path(database), store, count=count, seed=seed, frozen_columns=frozen_columns,
                                      pinned_hash=pinned_hash, rows=rows,
                                      others=(lambda: len(made.result())) if made is not None else 0,
                                      refused=_frozen_refusals(frozen, settings, _golds_digest(golds)))
            finally:
                if rows is not None:
                    rows.close()
            own = made.result() if made is not None else []
        if pool:
            pool += native_variants(own, len(pool))
        out = cls(pool, count, store / "distilled", settings, _golds_digest(golds))
        out.ahead = MutantsAhead(golds)
        if frozen is not None:
            out.use_frozen(frozen)
        return out

    def use_frozen(self, path: Path) -> None:
        """Take each gold's choice from ``path`` when it was frozen for these settings (a
        record for another database, seed, count or generator is left alone: ``validate``
        refreezes it); a variant built to other content than frozen is a ``UsageError``."""
        from ..errors import UsageError
        try:
            record = read_frozen(path)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: not a frozen-variants file ({exc}); fix: delete it and run "
                             f"python -m pytest_sqleval validate {path.parent}") from None
        frozen_natives = sum(e.get("kind") == "native" for e in record.get("variants", [])) if record else 0
        natives = sum(v.kind == "native" for v in self.pool)
        if record and record.get("settings") == self.settings and frozen_natives != natives:
            # every other variant's content depends on how many there are: say why, not only that it drifted
            raise UsageError(
                f"{path}: frozen with {frozen_natives} native variant(s) (pytest_sqleval_native_variants), but this "
                f"run has {natives}: the hook is implemented where validate does not ask it (validate asks the "
                f"conftest.py files of the suite's folder and its parents; a run also asks plugins given with -p "
                f"or installed); fix: implement it in the suite's conftest.py and run python -m pytest_sqleval "
                f"validate {path.parent}")
        if record and record.get("settings") == self.settings and record.get("golds") != self.golds:
            # the boundary rows are the golds': another gold builds other variants, and its choice is unknown
            raise UsageError(
                f"{path}: frozen for other golds than this suite's (a gold was changed, added or removed since "
                f"it was frozen), so its variants and choices do not hold for these; fix: run python -m "
                f"pytest_sqleval validate {path.parent} and commit the new {path.name}")
        for entry, built in self.drift(record)[:1]:
            raise UsageError(
                f"{path}: variant {entry.get('index')} ({entry.get('kind')}) was frozen with content hash "
                f"{str(entry.get('content_hash'))[:16]}..., but builds here to "
                f"{built[:16] + '...' if built else 'nothing'}: the variants cannot reproduce "
                f"the frozen evidence; fix: run python -m pytest_sqleval validate {path.parent} and commit "
                f"the new {path.name}")
        if record and record.get("settings") == self.settings:
            self._frozen = record.get("choices", {})

    def drift(self, record: dict[str, Any] | None) -> list[tuple[dict[str, Any], str | None]]:
        """The variants ``record`` froze for these same settings and golds that build here to
        other content: (the frozen entry, the content hash built here, or None)."""
        if not _frozen_for(record, self.settings, self.golds):
            return []
        built = {v.index: v.content_hash for v in self.pool}
        return [(e, built.get(e.get("index"))) for e in record.get("variants", [])
                if built.get(e.get("index")) != e.get("content_hash")]

    def frozen_record(self) -> dict[str, Any]:
        """What ``validate`` writes: the settings, the pool's content hashes and the choice of
        every gold chosen so far."""
        return {"settings": self.settings, "golds": self.golds,
                "variants": [{"index": v.index, "kind": v.kind, "content_hash": v.content_hash,
                              **({"refused": v.params["refused"]} if "refused" in v.params else {})}
                             for v in self.pool],
                "choices": {k: {**asdict(c), "variants": [d["index"] for d in c.variants]}
                            for k, c in sorted(self._by_sql.items())}}

    def witnesses(self, index: int, gold_sql: str) -> list[str]:
        """What variant ``index`` holds for this gold that the pinned database lacks (its
        clone witnesses, as sentences; ``clones.py``), for the record of a caught prediction."""
        from .clones import gold_digest
        variant = next((v for v in self.pool if v.index == index), None)
        written = variant.params.get("witnesses", {}) if variant is not None else {}
        return list(written.get(gold_digest(gold_sql), [])) if isinstance(written, dict) else []

    def for_gold(self, gold_key: str, gold_request: dict[str, Any], gold_sql: str, dialect: str,
                 host: Any, gold_ms: float = 0.0) -> CaseVariants:
        """The variants of one gold (frozen, or distilled on first use, then read back)."""
        chosen = self.known(gold_key, gold_sql)
        if chosen is None:
            chosen = self._distill(gold_request, gold_sql, dialect, host, gold_ms)
            self._write(gold_key, chosen)
            self._remember(gold_key, gold_sql, chosen)
        return chosen

    def known(self, gold_key: str, gold_sql: str) -> CaseVariants | None:
        """The variants of one gold if chosen already (this run, frozen or stored), without
        distilling: what can be sent ahead with a candidate's execution."""
        chosen = self._chosen.get(gold_key)
        if chosen is None:
            chosen = self._thaw(self._frozen.get(_digest(gold_sql))) or self._read(gold_key)
            if chosen is not None:
                self._remember(gold_key, gold_sql, chosen)
        return chosen

    def _remember(self, gold_key: str, gold_sql: str, chosen: CaseVariants) -> None:
        self._chosen[gold_key] = self._by_sql[_digest(gold_sql)] = chosen

    def _thaw(self, entry: dict[str, Any] | None) -> CaseVariants | None:
        if not entry:
            return None
        by_index = {v.index: _describe(v) for v in self.pool}
        return CaseVariants(**{**entry, "variants": [by_index[i] for i in entry["variants"] if i in by_index]})

    def _distill(self, gold_request: dict[str, Any], gold_sql: str, dialect: str, host: Any,
                 gold_ms: float) -> CaseVariants:
        described = [_describe(v) for v in self.pool]
        sqls = self.ahead.get(gold_sql, dialect)
        budget = max(MUTANT_TIME[1], MUTANT_TIME[0] * gold_ms / 1000)
        request = {"gold": gold_request, "variants": described, "mutant_timeout_s": budget,
                   "mutant_plan_rows": MUTANT_PLAN_ROWS}
        helper = self._second_worker(host) if len(sqls) > 1 else None
        answer = (host.call("distill", {**request, "mutants": sqls}) if helper is None
                  else self._distill_on_two(request, sqls, host, helper))
        return choose(answer["killed"], answer["gold_rows"], described, self.count,
                      informative=answer.get("informative"), differs=answer.get("differs"))

    def _second_worker(self, host: Any) -> Any:
        """A second engine process on the same database, the same limits and handler as
        ``host``'s, or None: one worker wanted, or ``host`` serves in this process (SQLite's
        ``InProcessEngine``: a second there would only take turns with it)."""
        from ..engines.host import EngineHost, EngineProcess
        if self.workers < 2 or not isinstance(getattr(host, "process", None), EngineProcess):
            return None
        if self._helper is None:
            self._helper = EngineHost(host.database, host.limits, host.cache_dir, handler=host.handler,
                                      handler_args=host.handler_args)
        return self._helper

    def _distill_on_two(self, request: dict[str, Any], sqls: list[str], host: Any, helper: Any) -> dict[str, Any]:
        """``distill`` with the near-misses split between ``host`` (the even ones) and the
        second process (the odd ones: a cross product's cost and a point lookup's alternate
        in no order, so neither half gets all the slow ones), both at once; the answers joined
        in the mutants' order are the matrix one process gives (a mutant's row depends on it
        alone). Any failure, an interrupt included, ends the second process with its request
        (nothing is left running; the next distillation starts a new one); a failure of the
        second process is raised as its own kind of error, saying which process failed.
        The gold's answer on each variant is run first, by ``host`` alone (a request with no
        near-miss), and stored: both processes asked for it at once and each ran it, the
        gold run twice on every variant (on Vantage the gold's runs on the variants were 15 % of
        the distillation's samples, py-spy); now the
        second reads it from the store, as the first does from then on."""
        from ..engines.host import HostCrashed
        try:
            host.call("distill", {**request, "mutants": []})  # inside: an interrupt here ends the second process too
            theirs = helper.submit("distill", {**request, "mutants": sqls[1::2]})
            ours = host.call("distill", {**request, "mutants": sqls[0::2]})
            try:
                other = helper.result(theirs)
            except HostCrashed as exc:
                exc.args = (f"the second distillation engine process failed: {exc}",)
                raise
        except BaseException:
            self.close()
            raise
        return merge_distilled([ours, other], len(sqls))

    def _read(self, gold_key: str) -> CaseVariants | None:
        try:
            data = json.loads((self.store / f"{gold_key}.json").read_text(encoding="utf-8"))
            chosen = CaseVariants(**data)
        except (OSError, ValueError, TypeError):
            return None  # not distilled yet, or a damaged entry: distilled again
        by_index = {v.index: _describe(v) for v in self.pool}
        if any(c.get("index") not in by_index or len(str(c.get("hash"))) < RECORD_HASH
               or not by_index[c["index"]]["hash"].startswith(str(c.get("hash"))) for c in chosen.variants):
            return None
        chosen.variants = [by_index[c["index"]] for c in chosen.variants]  # this machine's paths
        return chosen

    def _write(self, gold_key: str, chosen: CaseVariants) -> None:
        self.store.mkdir(parents=True, exist_ok=True)
        tmp = self.store / f".{gold_key}.{os.getpid()}.tmp"
        # each variant by index and content hash only: its path is this machine's, remade on
        # reading (``_read``); a suite of many golds kept a path per gold and variant, which
        # on Spider-sized databases was a tenth of the variants' disk budget
        # (the hash's first RECORD_HASH digits: the store's folder is already named by the pool's hashes,
        # and the full 64 were most of a record's bytes, 0.16x a Spider-style database's file in all)
        stored = {**asdict(chosen),
                  "variants": [{"index": v["index"], "hash": v["hash"][:RECORD_HASH]} for v in chosen.variants]}
        tmp.write_text(json.dumps(stored, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, self.store / f"{gold_key}.json")


def mutant_sqls(gold_sql: str, dialect: str) -> list[str]:
    """The near-misses a gold is distilled with (``mutants``)."""
    from .mutants import mutants
    return [m.sql for m in mutants(gold_sql, dialect, limit=MUTANTS_PER_GOLD)]


class MutantsAhead:
    """A gold's near-misses, made for the next gold (in the suite's order) in a thread while
    the engine processes run this gold's: on Vantage making them took 10.3 s of sqlglot in
    the grading process (60 golds) while both engine processes waited for them. A gold's
    near-misses are a function of its SQL and dialect alone, so which thread makes them
    changes nothing the distillation chooses. One gold ahead only: a run that distils a few
    golds (the others stored or frozen) makes at most one list it does not use per gold it
    distils, and a rerun that distils nothing starts no thread."""

    def __init__(self, golds: Iterable[str]) -> None:
        order = list(dict.fromkeys(golds))
        self._next = dict(zip(order, order[1:]))
        self._pending: tuple[tuple[str, str], threading.Thread, dict[str, list[str]]] | None = None
        self.made_ahead = 0  # lists taken from the thread (what a test and a profile look at)

    def get(self, gold_sql: str, dialect: str) -> list[str]:
        """``mutant_sqls(gold_sql, dialect)``; the next gold's are then started in a thread."""
        pending, self._pending = self._pending, None
        sqls = None
        if pending is not None and pending[0] == (gold_sql, dialect):
            pending[1].join(timeout=MUTANTS_WAIT_S)
            sqls = pending[2].get("sqls")  # None if the thread failed (the error is raised here, below)
            self.made_ahead += sqls is not None
        if sqls is None:
            sqls = mutant_sqls(gold_sql, dialect)
        following = self._next.get(gold_sql)
        if following is not None:
            box: dict[str, list[str]] = {}

            def make() -> None:
                try:
                    box["sqls"] = mutant_sqls(following, dialect)
                except BaseException:  # made again by the caller, whose error is then raised there
                    pass

            thread = threading.Thread(target=make, name="sqleval-mutants-ahead", daemon=True)
            thread.start()
            self._pending = ((following, dialect), thread, box)
        return sqls


def _digest(gold_sql: str) -> str:
    return hashlib.sha256(gold_sql.encode()).hexdigest()[:16]


def _frozen_for(record: dict[str, Any] | None, settings: dict[str, Any], golds: str) -> TypeGuard[dict[str, Any]]:
    """Whether ``record`` was frozen for these settings and golds (``_golds_digest``)."""
    return record is not None and record.get("settings") == settings and record.get("golds") == golds


def _golds_digest(gold_sqls: Iterable[str]) -> str:
    """The golds a pool is built for, in any order: what its variants' boundary rows are
    made from, so a frozen record holds for these golds only."""
    return hashlib.sha256(json.dumps(sorted({_digest(g) for g in gold_sqls})).encode()).hexdigest()[:16]


def _frozen_refusals(path: Path | None, settings: dict[str, Any], golds: str) -> dict[int, list[str]] | None:
    """Per variant index, the builder queries the build ``path`` froze refused by their work,
    when it was frozen for these settings and golds (``_golds_digest``): replayed, so this
    engine release refuses the same queries and builds the frozen content
    (``engines.watchdog.refusals``). None otherwise (no record, another setting or gold, or
    a damaged record: ``use_frozen`` says so): this engine's estimates decide."""
    try:
        record = read_frozen(path) if path is not None else None
    except (OSError, ValueError):
        return None
    if not _frozen_for(record, settings, golds):
        return None
    entries = [e for e in record.get("variants", []) if isinstance(e, dict) and e.get("kind") != "native"]
    if not entries or not all(isinstance(e.get("refused"), list) and isinstance(e.get("index"), int) for e in entries):
        return None
    return {e["index"]: [str(k) for k in e["refused"]] for e in entries}


def read_frozen(path: Path) -> dict[str, Any] | None:
    """A ``variants.frozen.json``, or None when there is none (a damaged one raises)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    return record


def merge_distilled(parts: list[dict[str, Any]], mutants: int) -> dict[str, Any]:
    """The ``distill`` answer for ``mutants`` near-misses from the answers of ``len(parts)``
    workers, worker ``k`` having run mutants ``k, k + len(parts), ...``: each place's row of
    told-apart flags back in the mutants' order. What depends on the gold alone (its rows
    on each place, ``informative``, ``differs``) is the first worker's."""
    k = len(parts)
    rows = [[part["killed"][place] for part in parts] for place in range(len(parts[0]["killed"]))]
    return {**parts[0], "killed": [[row[m % k][m // k] for m in range(mutants)] for row in rows]}


def native_variants(paths: list[Path], first_index: int) -> list[Any]:
    """The pool entries of a suite generator's own variant files."""
    from .build import Variant, remembered_content_hash
    return [Variant(first_index + i, "native", {"file": path.name}, path, remembered_content_hash(path))
            for i, path in enumerate(paths)]


def choose(killed: list[list[bool | None]], gold_rows: list[int | None], variants: list[dict[str, Any]],
           count: int, informative: list[bool] | None = None, differs: list[float | None] | None = None,
           ) -> CaseVariants:
    """Greedy choice: ``killed[0]`` is the pinned database's row, ``killed[1 + i]`` variant
    i's (per mutant: told apart, or None where the gold has no trustworthy answer). Each
    pick adds the most mutants not yet told apart. On equal gain (and once no mutant is
    left to tell apart, every gain is 0) a variant where the gold's answer has a value comes
    first (not empty, not NULLs only: on TPC-DS at scale factor 0.01 the golds' star joins
    return no row on most variants, where only a wrong query that returns rows can be
    caught), then one where the gold's own answer differs from its pinned answer
    (``differs[1 + i]`` > 0): the grader's mutants are a
    sample of the near-misses, and on TPC-DS none of the 24 was told apart by any variant
    for most golds, so the gain alone said nothing and the choice fell to the index. A
    variant on which the gold's answer changed exercises the rows the gold reads: a wrong
    query that coincided with the gold on the pinned rows has to coincide again on rows the
    gold itself answers differently, which a variant where nothing moved for the gold does
    not ask. Then a native variant (the suite's own generator keeps every rule of its data,
    so a mismatch there is the most convincing), then a boundary variant (wrong queries the
    near-misses do not model are mostly boundary slips), then the most different gold answer
    (1 - row F1 against the pinned one), then the lower index. The count is filled even when
    no near-miss is left to tell apart: measured on TPC-H (``bench/variants_bench.py``),
    filling it caught 71 % of held-out coincidences against 40 % when stopping at zero
    gain. A variant where the gold's answer is informative (rows, not NULLs only:
    ``informative``, else ``gold_rows``) comes first when the pinned answer is not, so
    such a gold is graded."""
    n = len(killed[0]) if killed else 0
    told = {i for i, k in enumerate(killed[0]) if k} if killed else set()
    pinned = len(told)
    usable = [i for i in range(len(variants)) if gold_rows[1 + i] is not None]
    has_value = list(informative) if informative else [bool(r) for r in gold_rows]
    change = [d or 0.0 for d in differs] if differs else [0.0] * len(gold_rows)
    picked: list[int] = []
    if gold_rows and not has_value[0]:  # empty or NULLs only on the pinned database: an informative variant first
        with_value = [i for i in usable if has_value[1 + i]]
        if with_value:
            picked.append(max(with_value, key=lambda i: (_gain(killed[1 + i], told), change[1 + i], -i)))
            told |= {m for m, k in enumerate(killed[1 + picked[0]]) if k}
    while len(picked) < count:
        best = max((i for i in usable if i not in picked),
                   key=lambda i: (_gain(killed[1 + i], told), has_value[1 + i], change[1 + i] > 0,
                                  variants[i]["kind"] == "native",
                                  "boundary" in variants[i]["kind"], change[1 + i], -i), default=None)
        if best is None:
            break
        picked.append(best)
        told |= {m for m, k in enumerate(killed[1 + best]) if k}
    picked.sort()
    return CaseVariants(variants=[variants[i] for i in picked], mutants=n, pinned=pinned, by_variants=len(told) - pinned,
                        gold_rows=[gold_rows[1 + i] for i in picked],
                        informative=[has_value[1 + i] for i in picked] if informative else [],
                        gold_changed=sum(1 for i in picked if change[1 + i] > 0))


def _gain(row: list[bool | None], told: set[int]) -> int:
    return sum(1 for m, k in enumerate(row) if k and m not in told)


def _describe(variant: Any) -> dict[str, Any]:
    return {"index": variant.index, "kind": variant.kind, "path": str(variant.path), "hash": variant.content_hash}
