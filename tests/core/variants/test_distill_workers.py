"""The distillation on two engine processes (``VariantSet._distill_on_two``): the grading's
engine process runs every other near-miss of a gold, a second one the rest, at once. The
choice is the one a single process makes; a second process that fails says so, and an
interrupt or a failure leaves no process of it running."""
from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

import pytest

from pytest_sqleval.core.engines.host import EngineHost, EngineProcess, HostCrashed
from pytest_sqleval.core.grading.pipeline import SuiteGrader
from pytest_sqleval.core.variants.distill import MUTANTS_PER_GOLD, VariantSet, merge_distilled
from pytest_sqleval.core.variants.mutants import mutants
from tests.core.variants.test_variants_grading import CASES, make_db

GOLDS = [c["gold_sql"] for c in CASES] + [
    "SELECT c.country, count(*) AS n FROM orders o JOIN customers c ON c.id = o.customer_id "
    "WHERE o.amount > 60 GROUP BY c.country HAVING count(*) >= 10 ORDER BY n DESC LIMIT 1"]


@pytest.fixture
def shop(tmp_path: Path):
    """A grader on the shop database (its engine process), its golds' answers, and a pool of 4 variants."""
    db = tmp_path / "shop.duckdb"
    make_db(db)
    grader = SuiteGrader(db, cache_dir=tmp_path / "cache")
    variants = VariantSet.build(db, tmp_path / "cache", 4, gold_sqls=GOLDS, pinned_hash=grader.content_hash)
    grader.variant_set = variants
    try:
        yield grader, variants, [grader.gold(sql) for sql in GOLDS]
    finally:
        grader.close()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _distill(variants: VariantSet, grader: SuiteGrader, gold) -> dict:
    return asdict(variants._distill(gold.request, gold.sql, grader.engine_dialect, grader.host, gold.elapsed_ms))


def test_two_processes_choose_what_one_does(shop) -> None:
    grader, variants, golds = shop
    variants.close()  # the empty gold's setup distilled on two already
    variants.workers = 1
    alone = [_distill(variants, grader, g) for g in golds]
    assert variants._helper is None  # one worker: no second process
    variants.workers = 2
    assert [_distill(variants, grader, g) for g in golds] == alone
    helper = variants._helper
    assert helper is not None and helper.process.alive()  # the second process did the other half
    told = sum(c["pinned"] + c["by_variants"] for c in alone)
    assert told > 0  # near-misses were told apart, so the equal choices compare something
    # the matrix itself, not only the choice made from it
    gold = golds[0]
    sqls = [m.sql for m in mutants(gold.sql, grader.engine_dialect, limit=MUTANTS_PER_GOLD)]
    request = {"gold": gold.request, "variants": [{"index": v.index, "kind": v.kind, "path": str(v.path),
                                                   "hash": v.content_hash} for v in variants.pool],
               "mutant_timeout_s": 5.0}
    whole = grader.host.call("distill", {**request, "mutants": sqls})
    halves = [grader.host.call("distill", {**request, "mutants": sqls[k::2]}) for k in (0, 1)]
    assert len(sqls) > 2 and merge_distilled(halves, len(sqls)) == whole
    pid = helper.process.proc.pid
    variants.close()
    assert variants._helper is None and _gone(pid)


def test_a_failing_second_process_is_a_clear_error_and_is_ended(shop, tmp_path: Path) -> None:
    grader, variants, golds = shop
    variants.close()
    # a second process on a database that is not there: its request fails where it runs
    broken = EngineHost(tmp_path / "missing.duckdb", grader.limits, grader.host.cache_dir,
                        handler=grader.host.handler, handler_args=grader.host.handler_args)
    variants._helper = broken
    with pytest.raises(HostCrashed, match="the second distillation engine process failed: cannot open"):
        _distill(variants, grader, golds[0])
    assert variants._helper is None  # ended, not left running
    assert isinstance(broken.process, EngineProcess) and broken.process.proc is None
    chosen = _distill(variants, grader, golds[0])  # the next gold starts a sound one
    assert chosen["variants"] and variants._helper is not None and variants._helper is not broken


def test_an_interrupt_while_waiting_ends_the_second_process(shop, monkeypatch: pytest.MonkeyPatch) -> None:
    grader, variants, golds = shop
    _distill(variants, grader, golds[0])  # the second process is up
    helper = variants._helper
    pid = helper.process.proc.pid

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(grader.host, "call", interrupted)
    with pytest.raises(KeyboardInterrupt):
        variants._distill(golds[1].request, golds[1].sql, grader.engine_dialect, grader.host, golds[1].elapsed_ms)
    assert variants._helper is None and _gone(pid)  # its request was running: the process was killed


def test_the_grader_s_close_ends_the_second_process(shop) -> None:
    grader, variants, golds = shop
    _distill(variants, grader, golds[0])
    pid = variants._helper.process.proc.pid
    grader.close()
    assert _gone(pid)


def test_the_gold_runs_once_on_each_variant_not_once_per_process(shop, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both engine processes asked for the gold's answer on every variant at once, so each
    ran it (on Vantage the gold's runs on the variants were 15 % of the distillation's
    samples, half of them a second run). The first runs and stores them before the second
    process gets its near-misses: the second finds each answer stored and writes none
    (the stored files are the same files after), and the choice is unchanged."""
    import shutil
    grader, variants, golds = shop
    gold = golds[-1]
    variants.workers = 1
    alone = _distill(variants, grader, gold)
    store = grader.gold_dir / "variants"
    shutil.rmtree(store)  # every gold answer on a variant is run again below
    variants.workers = 2
    _distill(variants, grader, golds[0])  # the second process is up
    shutil.rmtree(store)
    helper = variants._helper
    submit = helper.submit
    at_submit: dict[Path, int] = {}

    def counted(op: str, payload: dict, **kwargs):
        for v in payload["variants"]:
            answer = store / v["hash"][:16] / f"{payload['gold']['key']}.json"
            at_submit[answer] = answer.stat().st_ino if answer.exists() else -1
        return submit(op, payload, **kwargs)

    monkeypatch.setattr(helper, "submit", counted)
    assert _distill(variants, grader, gold) == alone
    assert len(at_submit) == len(variants.pool) > 1
    assert -1 not in at_submit.values()  # stored before the second process asked
    assert {p: p.stat().st_ino for p in at_submit} == at_submit  # and not run (rewritten) again by it
