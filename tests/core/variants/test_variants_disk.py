"""The variants' bytes on disk beside a small SQLite database (issue 31: <= 2x the pinned file).

On a Spider-style database of about 60 KiB, the manifest (``variants.json.gz``) was about 0.4x
the pinned file: every variant listed its witnesses' sentences in full, indented, and most
sentences repeat in several variants (a gold's witness goes into each variant it separates
on). The manifest now holds each sentence once and the variants refer to it; reading it
back gives each variant the same sentences, so the record of a caught prediction is unchanged.
Written compressed, it is under a twentieth of the pinned file (its text alone is over a tenth).
A gold's stored choice of variants keeps 16 digits of each variant's content hash, not 64
(its folder is named by the whole pool's hashes): the 64 were most of its bytes."""
from __future__ import annotations

import json
from pathlib import Path

from pytest_sqleval.core.api import Grader
from pytest_sqleval.core.variants.build import MANIFEST_NAME, read_manifest
from tests.core.variants.test_spider_aggregate_witnesses import EQUIVALENTS, GOLDS, make_campus


def _grader(folder: Path) -> Grader:
    return Grader(folder / "campus.sqlite", dialect="sqlite", cache_dir=folder / "cache", variants=8,
                  variant_golds=GOLDS, column_order="any")


def test_each_witness_sentence_is_written_once_and_read_back_whole(tmp_path: Path) -> None:
    make_campus(tmp_path / "campus.sqlite")
    with _grader(tmp_path) as graded:
        pool = graded._grader.variant_set.pool
        gold, right = EQUIVALENTS["summer_two_comparisons"]
        assert graded.compare(right, gold).passed  # its gold distilled: a stored choice
        said = {v.index: {g: list(s) for g, s in (v.params.get("witnesses") or {}).items()} for v in pool}
    manifest = next((tmp_path / "cache" / "variants").rglob(MANIFEST_NAME))
    text = json.dumps(read_manifest(manifest), separators=(",", ":"))
    pinned = (tmp_path / "campus.sqlite").stat().st_size
    assert manifest.stat().st_size < 0.05 * pinned < len(text) / 2, (manifest.stat().st_size, pinned, len(text))
    sentences = [s for by_gold in said.values() for lines in by_gold.values() for s in lines]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert repeated, "the shape this test guards: a sentence in several variants"
    for sentence in set(sentences):
        assert text.count(json.dumps(sentence)) == 1, sentence
    stamps = {p: p.stat().st_mtime_ns for p in manifest.parent.glob("variant-*")}
    records = sorted((tmp_path / "cache" / "variants").rglob("distilled/*/*.json"))
    assert records and all(len(v["hash"]) == 16 for r in records for v in json.loads(r.read_text())["variants"])
    stamps.update({r: r.stat().st_mtime_ns for r in records})
    with _grader(tmp_path) as again:  # read back from the manifest: nothing built, the same sentences
        assert {v.index: {g: list(s) for g, s in (v.params.get("witnesses") or {}).items()}
                for v in again._grader.variant_set.pool} == said
        assert any(again._grader.variant_set.witnesses(v.index, gold) for v in again._grader.variant_set.pool)
        assert again.compare(right, gold).passed  # its stored choice read back (unchanged below), not distilled again
    assert {p: p.stat().st_mtime_ns for p in [*manifest.parent.glob("variant-*"), *records]} == stamps
