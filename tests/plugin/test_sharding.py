"""``--sqleval-shard=K/N`` and ``python -m pytest_sqleval merge``: every case runs in exactly
one shard, the same on every machine; the shards merged equal the unsharded run record for
record; a merge that would not be the whole run of one suite, version and database is
refused with an error naming what differs; the gate applies to the merged run."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_sqleval.cli import main as cli
from pytest_sqleval.plugin.sharding import OPEN_DATABASE_MS, Shard, Unit, make_plan, parse_shard, plan_shards
from tests.sqleval_helpers import LEAN, NAIVE_SQL, SHOP_CASES, gen_cases, sqleval_ini  # noqa: F401  (autouse fixture)


@pytest.fixture(autouse=True)
def _outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """These runs derive their run id unless a test says otherwise, wherever the tests run."""
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)


# ------------------------------------------------------------------------------- the option

@pytest.mark.parametrize("text, shard", [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), (" 4/4 ", Shard(4, 4))])
def test_a_shard_is_k_of_n(text: str, shard: Shard) -> None:
    assert parse_shard(text) == shard


@pytest.mark.parametrize("text", ["0/4", "5/4", "x", "2", "2/", "/4", "1/0", "-1/4", "1.5/4", "a/b"])
def test_a_bad_shard_is_refused_while_parsing(text: str) -> None:
    with pytest.raises(Exception, match=r"expected K/N.*1 <= K <= N"):
        parse_shard(text)


@pytest.mark.parametrize("value", ["0/4", "5/4", "x"])
def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester, shop_suite: Path, value: str) -> None:
    result = pytester.runpytest(f"--sqleval-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*argument --sqleval-shard: expected K/N*1 <= K <= N (e.g. 2/4), got '{value}'"])


# ------------------------------------------------------------------------------ the plan

units_st = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5000)), min_size=0, max_size=60).map(
    lambda pairs: [Unit(f"suite{g}/questions.jsonl::q{i:03d}", f"db:{g}.duckdb", cost) for i, (g, cost) in enumerate(pairs)])


@settings(max_examples=150, deadline=None)
@given(units=units_st, count=st.integers(1, 12), seed=st.integers(0, 2**32))
def test_every_unit_runs_in_exactly_one_shard_whatever_the_order(units: list[Unit], count: int, seed: int) -> None:
    plan = plan_shards(units, count)
    assert sorted(plan) == sorted(u.key for u in units)  # each once (a dict), none left out
    assert all(0 <= shard < count for shard in plan.values())
    shuffled = list(units)
    random.Random(seed).shuffle(shuffled)
    assert plan_shards(shuffled, count) == plan  # collection order does not matter
    # what each machine keeps: the shards partition the run, and all record one run, one plan
    plans = [make_plan(Shard(k, count), shuffled if k % 2 else units, None) for k in range(1, count + 1)]
    kept = [n for p in plans for n in p.nodeids]
    assert sorted(kept) == sorted(u.key for u in units) and len(set(kept)) == len(kept)
    assert len({(p.run_id, p.cases_digest, p.plan_digest, p.cases_total) for p in plans}) == 1


@settings(max_examples=100, deadline=None)
@given(units=units_st, count=st.integers(1, 12))
def test_a_database_within_a_shards_share_stays_in_one_shard_and_loads_are_balanced(units: list[Unit], count: int) -> None:
    plan = plan_shards(units, count)
    groups: dict[str, list[Unit]] = {}
    for u in units:
        groups.setdefault(u.group, []).append(u)
    total = sum(OPEN_DATABASE_MS + sum(u.cost_ms for u in g) for g in groups.values())
    share = total / count
    for g in groups.values():
        if OPEN_DATABASE_MS + sum(u.cost_ms for u in g) <= share:
            assert len({plan[u.key] for u in g}) == 1
    loads = [0] * count
    for g in groups.values():
        for shard in {plan[u.key] for u in g}:
            loads[shard] += OPEN_DATABASE_MS + sum(u.cost_ms for u in g if plan[u.key] == shard)
    biggest_piece = max((OPEN_DATABASE_MS + sum(u.cost_ms for u in g) for g in groups.values()), default=0)
    assert max(loads, default=0) <= share + max(biggest_piece, share)  # LPT: within one piece of the mean


def test_the_run_id_is_the_option_else_the_ci_run_else_derived_from_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    units = [Unit(f"s/q.jsonl::q{i}", "db:s", 1000) for i in range(5)]
    derived = make_plan(Shard(1, 2), units, None)
    assert derived.run_id == f"plan-{derived.plan_digest[:12]}" and derived.run_id_source == "derived"
    monkeypatch.setenv("GITHUB_RUN_ID", "9876")
    assert (make_plan(Shard(2, 2), units, None).run_id, make_plan(Shard(2, 2), units, None).run_id_source) \
        == ("9876", "GITHUB_RUN_ID")
    assert make_plan(Shard(1, 2), units, "nightly-7").run_id == "nightly-7"


# ------------------------------------------------------------------------ runs and merges

@pytest.fixture
def two_suites(make_suite: Callable[..., Path], pytester: pytest.Pytester) -> list[str]:
    """Six shop cases and five counting cases on two databases, answered by the naive
    predictions (one right per suite and each wrong answer in its own class)."""
    make_suite(SHOP_CASES, folder="shop")
    make_suite(gen_cases(5), folder="counts")
    (pytester.path / "naive.jsonl").write_text("".join(json.dumps({"id": k, "sql": v}) + "\n" for k, v in NAIVE_SQL.items()))
    return ["shop", "counts", "--sqleval-backend=gold,predictions:naive.jsonl"]


# a gold's "cached" is kept: whether its answer was in the store when the run began, the same for
# every shard and the whole run started from the same (cold) cache
_VOLATILE = ("_ms", "elapsed", "duration", "run_id", "started", "finished")


def _stable(value: Any) -> Any:
    """A record without its timings and run id."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if not any(word in k for word in _VOLATILE)}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _records(folder: Path) -> list[dict[str, Any]]:
    return [_stable(json.loads(line)) for line in (folder / "results.jsonl").read_text().splitlines()]


def _shards(pytester: pytest.Pytester, args: list[str], count: int, *extra: str, name: str = "shard") -> list[Path]:
    """Each shard as if on its own machine: its own results and its own (cold) cache."""
    folders = []
    for k in range(1, count + 1):
        folder = pytester.path / f"{name}{k}"
        result = pytester.runpytest(*args, f"--sqleval-shard={k}/{count}", f"--sqleval-results={folder}",
                                    f"--sqleval-cache-dir={folder}-cache", *extra)
        assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
        folders.append(folder)
    return folders


def _merge(*args: str | Path) -> int:
    return cli(["merge", *map(str, args)])


def test_four_shards_merged_equal_the_unsharded_run(pytester: pytest.Pytester, two_suites: list[str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    whole = pytester.runpytest(*two_suites, "--sqleval-results=whole", "--sqleval-cache-dir=whole-cache")
    whole.assert_outcomes(passed=12, failed=10)
    folders = _shards(pytester, two_suites, 4)
    plans = [json.loads((f / "shard.json").read_text()) for f in folders]
    per_shard = [set(p["nodeids"]) for p in plans]
    assert sum(len(s) for s in per_shard) == 22 and len(set().union(*per_shard)) == 22  # each case once
    assert len({p["run_id"] for p in plans}) == 1 and plans[0]["run_id_source"] == "derived"
    # a database is cut only into pieces of a shard's share (shop: 13 of 24 units, counts: 11; a
    # share is 6): shop's cases run on 3 machines, counts' on 2; a case's backends on one
    spread = {suite: sum(any(n.startswith(suite) for n in s) for s in per_shard) for suite in ("shop/", "counts/")}
    assert spread == {"shop/": 3, "counts/": 2}
    assert all(f"{n.rpartition('[')[0]}[gold]" in s for s in per_shard for n in s)
    assert _merge(*folders, "--out", "merged") == 0
    out = capsys.readouterr().out
    assert "merged 4 shard(s)" in out and "22 record(s)" in out
    merged = pytester.path / "merged"
    assert _records(merged) == _records(pytester.path / "whole")
    summary = json.loads((merged / "summary.json").read_text())
    whole_summary = json.loads((pytester.path / "whole" / "summary.json").read_text())
    assert summary["backends"] == whole_summary["backends"] and summary["cases_expected"] == 22
    assert {json.loads(line)["run_metadata"]["run_id"] for line in (merged / "results.jsonl").read_text().splitlines()} \
        == {plans[0]["run_id"]}
    assert (merged / "report.html").is_file()
    durations = json.loads((merged / "durations.json").read_text())
    assert sorted(durations) == sorted(set().union(*per_shard))

    # the durations file balances the next run; every shard reading it agrees on one plan
    args = [*two_suites, f"--sqleval-shard-durations={merged / 'durations.json'}"]
    again = _shards(pytester, args, 2, "--sqleval-run-id=second", name="again")
    assert _merge(*again, "--out", "merged2") == 0
    assert _records(pytester.path / "merged2") == _records(pytester.path / "whole")


def test_a_missing_or_duplicated_shard_is_refused(pytester: pytest.Pytester, two_suites: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    one, two, three = _shards(pytester, two_suites, 3)
    assert _merge(one, three, "--out", "merged") == 2
    err = capsys.readouterr().err
    assert "error: missing shard(s) 2/3 of run plan-" in err and "would be left out" in err
    assert _merge(one, two, two, three, "--out", "merged") == 2
    assert f"shard 2/3 given twice: {two} and {two}" in capsys.readouterr().err
    assert _merge(one, pytester.path / "nowhere", "--out", "merged") == 2
    assert "nowhere: no such folder: not the results of a sharded run" in capsys.readouterr().err
    assert not (pytester.path / "merged").exists()  # never a smaller run


def test_shards_of_different_suites_versions_runs_or_databases_are_refused(
        pytester: pytest.Pytester, two_suites: list[str], make_suite: Callable[..., Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    one, two = _shards(pytester, two_suites, 2, "--sqleval-run-id=r1")

    def refused(*folders: Path) -> str:
        assert _merge(*folders, "--out", "merged") == 2
        return capsys.readouterr().err

    # another run: a shard run with another run id
    other = pytester.runpytest(*two_suites, "--sqleval-shard=2/2", "--sqleval-results=other", "--sqleval-run-id=r2")
    assert other.ret in (0, 1)
    assert "their run id differs (" in refused(one, pytester.path / "other") and "r2" in refused(one, pytester.path / "other")

    # another suite: one more question in the shop suite for the second shard
    make_suite(SHOP_CASES + gen_cases(7)[6:], folder="shop")
    changed = pytester.runpytest(*two_suites, "--sqleval-shard=2/2", "--sqleval-results=changed", "--sqleval-run-id=r1")
    assert changed.ret in (0, 1)
    err = refused(one, pytester.path / "changed")
    assert "the shards are not of one run: their suites differ" in err and "shop/questions.jsonl" in err

    # another plugin version
    manifest = json.loads((two / "shard.json").read_text())
    (two / "shard.json").write_text(json.dumps({**manifest, "plugin_version": "9.9.9"}))
    assert "their plugin version differs" in refused(one, two) and "9.9.9" in refused(one, two)
    (two / "shard.json").write_text(json.dumps(manifest))

    # another database: the second machine's snapshot of shop (which both shards read) had other content
    one, two = _shards(pytester, ["shop"], 2, "--sqleval-run-id=r3", name="shop")
    lines = (two / "results.jsonl").read_text().splitlines()
    lines = [json.dumps({**json.loads(line), "content_hash": "0123456789abcdef"}) for line in lines]
    (two / "results.jsonl").write_text("\n".join(lines) + "\n")
    err = refused(one, two)
    assert "database content hash differs" in err and "0123456789abcdef" in err
    assert _merge(one, one, "--out", "merged") == 2  # and never the same shard twice
    assert "given twice" in capsys.readouterr().err


@pytest.mark.parametrize("rate, status", [("0.05", 0), ("0.5", 1)])
def test_the_gate_applies_to_the_merged_run(pytester: pytest.Pytester, two_suites: list[str], rate: str, status: int,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folders = _shards(pytester, two_suites, 2, "--sqleval-min-pass-rate=0")
    assert _merge(*folders, "--out", "merged", "--min-pass-rate", rate) == status
    out = capsys.readouterr().out
    # over the whole run, naive passes 1 of 11 (0.091) and gold 11 of 11; neither shard alone has 11
    assert f"gate PASSED: backend gold pass rate 1.000 >= {float(rate):.3f}" in out
    assert (f"gate {'PASSED' if status == 0 else 'FAILED'}: backend naive pass rate 0.091 "
            f"{'>=' if status == 0 else '<'} {float(rate):.3f}") in out
    summary = json.loads((pytester.path / "merged" / "summary.json").read_text())
    assert summary["run"]["exit_status"] == status and summary["run"]["min_pass_rate"] == float(rate)


def test_an_empty_shard_succeeds_and_merges(pytester: pytest.Pytester, shop_suite: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    folders = []
    for k in range(1, 8):  # seven shards of six cases: one has nothing to run
        result = pytester.runpytest(f"--sqleval-shard={k}/7", f"--sqleval-results=s{k}")
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        folders.append(pytester.path / f"s{k}")
    assert sorted(json.loads((f / "shard.json").read_text())["records"] for f in folders) == [0, 1, 1, 1, 1, 1, 1]
    assert _merge(*folders, "--out", "merged") == 0
    assert len((pytester.path / "merged" / "results.jsonl").read_text().splitlines()) == 6


def test_sharding_composes_with_xdist(pytester: pytest.Pytester, two_suites: list[str]) -> None:
    whole = pytester.runpytest(*two_suites, "--sqleval-results=whole", "--sqleval-cache-dir=whole-cache")
    assert whole.ret == pytest.ExitCode.TESTS_FAILED
    first = pytester.runpytest_subprocess(*LEAN, *two_suites, "-n", "2", "--sqleval-shard=1/2", "--sqleval-results=s1",
                                          "--sqleval-cache-dir=c1", timeout=180)
    assert first.ret == pytest.ExitCode.TESTS_FAILED, first.stdout.str()
    second = pytester.runpytest(*two_suites, "--sqleval-shard=2/2", "--sqleval-results=s2", "--sqleval-cache-dir=c2")
    assert second.ret in (0, 1)
    assert json.loads((pytester.path / "s1" / "shard.json").read_text())["nodeids"]  # the controller learnt the plan
    assert _merge(pytester.path / "s1", pytester.path / "s2", "--out", "merged") == 0
    assert _records(pytester.path / "merged") == _records(pytester.path / "whole")


@pytest.mark.parametrize("shard_json, results, needle", [
    ("{not json", None, "shard.json: not JSON"),
    ("[1, 2]", None, "not a shard manifest of version 1"),
    (json.dumps({"shard_version": 1, "index": 1}), None, "field(s) count, run_id"),
    (None, '{"case_id": "q01", "pass": \n', "results.jsonl:1"),
])
def test_a_broken_shard_folder_is_one_error_line(tmp_path: Path, pytester: pytest.Pytester, shop_suite: Path,
                                                 capsys: pytest.CaptureFixture[str], shard_json: str | None,
                                                 results: str | None, needle: str) -> None:
    folder = tmp_path / "s1"
    assert pytester.runpytest("--sqleval-shard=1/1", f"--sqleval-results={folder}").ret == 0
    if shard_json is not None:
        (folder / "shard.json").write_text(shard_json)
    if results is not None:
        (folder / "results.jsonl").write_text(results)
    assert _merge(folder, "--out", tmp_path / "merged") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and "Traceback" not in err


def test_a_shard_that_did_not_grade_all_its_cases_is_refused(pytester: pytest.Pytester, two_suites: list[str],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    one, two = _shards(pytester, two_suites, 2)
    collected = pytester.runpytest(*two_suites, "--sqleval-shard=2/2", "--sqleval-results=listed", "--collect-only")
    assert collected.ret == 0 and not (pytester.path / "listed" / "shard.json").exists()  # --collect-only is no shard
    stopped = pytester.runpytest(*two_suites, "--sqleval-shard=2/2", "--sqleval-results=stopped", "-x")
    assert stopped.ret == pytest.ExitCode.TESTS_FAILED
    assert _merge(one, pytester.path / "stopped", "--out", "merged") == 2
    err = capsys.readouterr().err
    assert "shard 2/2 graded " in err and "the run was interrupted" in err
    assert not (pytester.path / "merged").exists()


def test_a_bad_gate_on_merge_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        _merge("s1", "--out", "merged", "--min-pass-rate", "1.5")
    assert exit_.value.code == 2
    assert "argument --min-pass-rate: expected a finite number from 0 to 1, got '1.5'" in capsys.readouterr().err


def test_a_bad_run_id_is_a_usage_error(pytester: pytest.Pytester, shop_suite: Path) -> None:
    result = pytester.runpytest("--sqleval-shard=1/2", "--sqleval-run-id=../x")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--sqleval-run-id='../x': expected letters, digits*"])


def test_the_plan_does_not_depend_on_the_hash_seed() -> None:
    import subprocess
    import sys
    code = ("from pytest_sqleval.plugin.sharding import Shard, Unit, make_plan\n"
            "units = [Unit(f's{i % 7}/q.jsonl::q{i}[b{i % 3}]', f'db:{i % 7}', 100 + (i * 37) % 900) for i in range(300)]\n"
            "print(make_plan(Shard(1, 5), units, 'r').plan_digest)\n")
    digests = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(digests) == 1 and len(digests.pop().strip()) == 64


@pytest.mark.parametrize("content, needle", [(None, "cannot read it as JSON"), ('{"a::b": -1}', "node id -> seconds")])
def test_a_bad_durations_file_is_a_usage_error(pytester: pytest.Pytester, shop_suite: Path, content: str | None,
                                               needle: str) -> None:
    if content is not None:
        (pytester.path / "durations.json").write_text(content)
    result = pytester.runpytest("--sqleval-shard=1/2", "--sqleval-shard-durations=durations.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--sqleval-shard-durations=*durations.json: *{needle}*"])


def test_the_merge_writes_the_ablation_table_when_configurations_ran(
        pytester: pytest.Pytester, shop_suite: Path, write_predictions: Callable[..., Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    write_predictions({c["id"]: c["gold_sql"] for c in SHOP_CASES}, name="a1.jsonl", ablation_step=1)
    folders = _shards(pytester, ["--sqleval-backend=predictions:a1.jsonl", "--sqleval-ablation-dir=ablation"], 2)
    assert _merge(*folders, "--out", "merged") == 0
    table = (pytester.path / "merged" / "ablation.md").read_text()
    assert "| **a1** | – | 100.0 | 6 / 6 |" in table  # both shards' cases in one row
    assert json.loads((pytester.path / "merged" / "ablation.json").read_text())
