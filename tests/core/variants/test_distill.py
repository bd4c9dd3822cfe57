"""Unit tests of the distillation's choice (``variants.distill.choose``): from the matrix of
which mutants the pinned database and each variant tell apart from the gold, the few
variants that add the most evidence."""
from __future__ import annotations

import pytest

from pytest_sqleval.core.variants.distill import CaseVariants, choose

T, F, N = True, False, None


def pool(n: int, boundary: tuple[int, ...] = ()) -> list[dict]:
    return [{"index": i, "kind": "subset+boundary" if i in boundary else "subset", "path": f"v{i}.duckdb",
             "hash": f"h{i}"} for i in range(n)]


@pytest.mark.parametrize(("killed", "gold_rows", "count", "picked", "pinned", "by_variants"), [
    # the pinned database tells nothing apart; variant 1 tells two, variant 0 one more, then
    # the count is filled (what the near-misses cannot tell, another variant may)
    ([[F, F, F], [T, F, F], [F, T, T], [F, T, F]], [5, 3, 4, 2], 3, [0, 1, 2], 0, 3),
    # the pinned database tells everything apart: the variants are still used
    ([[T, T], [T, T], [T, F]], [5, 3, 4], 2, [0, 1], 2, 0),
    # a tie on gain goes to the lower index
    ([[F, F], [T, F], [T, F]], [5, 3, 3], 1, [0], 0, 1),
    # the count caps the choice
    ([[F, F, F], [T, F, F], [F, T, F], [F, F, T]], [5, 1, 1, 1], 2, [0, 1], 0, 2),
    # a variant where the gold cannot be trusted is never chosen
    ([[F, F], [N, N], [F, T]], [5, None, 2], 2, [1], 0, 1),
    # a gold empty on the database: a variant where it has rows comes first, even with no gain
    ([[F], [T], [F]], [0, 0, 3], 1, [1], 0, 0),
])
def test_greedy_choice(killed: list, gold_rows: list, count: int, picked: list, pinned: int, by_variants: int) -> None:
    chosen = choose(killed, gold_rows, pool(len(killed) - 1), count)
    assert [v["index"] for v in chosen.variants] == picked
    assert (chosen.pinned, chosen.by_variants, chosen.mutants) == (pinned, by_variants, len(killed[0]))
    assert chosen.gold_rows == [gold_rows[1 + i] for i in picked]


def test_evidence_strength_counts_what_is_told_apart() -> None:
    ev = CaseVariants(variants=[], mutants=10, pinned=6, by_variants=3).evidence()
    assert ev == {"mutants": 10, "told_apart_by_database": 6, "told_apart_by_variants": 3, "not_told_apart": 1,
                  "strength": 0.9}
    assert CaseVariants(variants=[]).evidence()["strength"] is None  # a gold with no mutants: unknown, not 0


def test_on_equal_gain_a_native_then_a_boundary_variant_comes_first() -> None:
    chosen = choose([[F], [F], [F], [F]], [5, 3, 3, 3], pool(3, boundary=(2,)), 1)
    assert [v["index"] for v in chosen.variants] == [2]
    variants = pool(3, boundary=(1,))
    variants[2]["kind"] = "native"
    assert [v["index"] for v in choose([[F], [F], [F], [F]], [5, 3, 3, 3], variants, 2).variants] == [1, 2]
    assert [v["index"] for v in choose([[F], [T], [F], [F]], [5, 3, 3, 3], variants, 1).variants] == [0]  # gain first


def test_no_usable_variant_chooses_none() -> None:
    assert choose([[F, F], [N, N]], [5, None], pool(1), 4).variants == []


def test_with_no_gain_a_variant_where_the_gold_s_own_answer_changed_comes_first() -> None:
    """TPC-DS: no variant tells apart any of the grader's mutants of most golds, so the gain
    is 0 everywhere; the variants where the gold's answer differs from its pinned answer
    are chosen, the most different first, before those where nothing moved for it."""
    killed = [[F, F], [F, F], [F, F], [F, F], [F, F]]
    gold_rows = [5, 5, 4, 5, 2]
    differs = [None, 0.0, 0.2, 0.0, 0.6]
    chosen = choose(killed, gold_rows, pool(4), 2, differs=differs)
    assert [v["index"] for v in chosen.variants] == [1, 3]
    assert chosen.gold_changed == 2 and chosen.evidence()["gold_changed"] == 2
    # the count is still filled, with a variant where the gold's answer is the pinned one
    assert [v["index"] for v in choose(killed, gold_rows, pool(4), 3, differs=differs).variants] == [0, 1, 3]
    # a mutant told apart still decides first
    killed[1] = [T, F]
    assert [v["index"] for v in choose(killed, gold_rows, pool(4), 1, differs=differs).variants] == [0]


def test_with_no_gain_a_variant_where_the_gold_has_rows_comes_before_one_where_it_has_none() -> None:
    """TPC-DS at scale factor 0.01: a star join's gold returns no row on most variants; its
    answer there differs the most from the pinned one, but only a variant where it has rows
    asks a wrong query for the same rows."""
    killed = [[F], [F], [F], [F]]
    chosen = choose(killed, [54, 0, 3, 0], pool(3), 1, informative=[True, False, True, False],
                    differs=[None, 1.0, 0.9, 1.0])
    assert [v["index"] for v in chosen.variants] == [1]


def test_a_gold_of_nulls_only_on_the_database_gets_a_variant_where_it_has_a_value_first() -> None:
    killed = [[F], [F], [F], [F]]
    chosen = choose(killed, [1, 1, 1, 1], pool(3), 1, informative=[False, False, True, False])
    assert [v["index"] for v in chosen.variants] == [1]
    assert chosen.informative == [True] and chosen.graded_with_value()
    none = choose(killed, [1, 1, 1, 1], pool(3), 2, informative=[False, False, False, False])
    assert len(none.variants) == 2 and not none.graded_with_value()
