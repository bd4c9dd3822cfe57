"""Spider 2.0-lite as it is shipped (xlang-ai/Spider2, ``spider2-lite/``), its local SQLite
part: the suite folder is ``spider2-lite/`` itself, read with no conversion step.

    spider2-lite.jsonl                          instance_id, db, question, external_knowledge
    evaluation_suite/gold/spider2lite_eval.jsonl  instance_id, condition_cols, ignore_order
    evaluation_suite/gold/sql/<id>.sql          a gold query (some questions only)
    evaluation_suite/gold/exec_result/<id>.csv  the gold result, or <id>_a.csv, <id>_b.csv, ...:
                                                acceptable alternatives
    resource/databases/spider2-localdb/<db>.sqlite
    resource/documents/<external_knowledge>     a document the question refers to

Each ``local*`` question becomes a case whose golds are its gold query (when there is one)
and its gold CSVs, compared as Spider 2.0's ``evaluate.py`` does: a prediction may return
extra columns (``columns = "superset"``), only the ``condition_cols`` of the gold must be
found among them (all of them when the list is empty), ``ignore_order`` drops row order,
and numbers agree within 0.01 (its ``math.isclose(abs_tol=1e-2)``). A question whose
alternatives name different ``condition_cols`` (``[[1], [0], [0]]``: one list per CSV)
gives each gold CSV its own (``gold_results`` entries ``{"path", "condition_cols"}``, an
empty list: every column of that CSV), so our strict verdict reads them as the official
rule does; its gold SQL, which Spider 2.0 never compares with, needs every column. The
lists are kept in ``metadata["spider2_condition_cols"]`` too, for the official verdict
recorded beside ours (``peers.spider2_tables``, ``engine_side.spider2_verdict``).

The BigQuery and Snowflake questions (``bq*``, ``ga*``, ``sf_*``) are skipped, not refused:
the released file holds all 547 questions and only the local ones can run on a file we
pin; refusing the file would force users to edit a benchmark we promise to read as
shipped. The skip is said once, with the count, as a ``Spider2SkippedWarning``.

Predictions are Spider 2.0's submission folder: one ``<instance_id>.sql`` per question
(a fenced ```sql block in it is unwrapped, as its evaluator does). Its other mode, a folder
of result CSVs, is refused with the fix: we grade by executing SQL on the pinned database,
and a CSV carries no query to run, to parse or to explain.
"""
from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

from ..errors import BadInputError, UsageError
from ..textio import iter_jsonl, read_text
from .layouts import Layout, Predictions, Records, need, register_layout

EVAL_FILE = Path("evaluation_suite/gold/spider2lite_eval.jsonl")
GOLD_SQL_DIR = Path("evaluation_suite/gold/sql")
GOLD_RESULT_DIR = Path("evaluation_suite/gold/exec_result")
DOCUMENTS_DIR = Path("resource/documents")  # the external_knowledge documents a question names
LOCAL_PREFIX = "local"
ABS_TOLERANCE = 1e-2  # evaluate.py's compare_pandas_table: math.isclose(a, b, abs_tol=1e-2)
_FENCED = re.compile(r"```sql\n(.*?)\n```", re.DOTALL)


class Spider2SkippedWarning(UserWarning):
    """Questions of a Spider 2.0-lite file that need BigQuery or Snowflake were skipped."""


def gold_result_files(folder: Path, instance_id: str) -> list[Path]:
    """The gold CSVs of one question, as ``evaluate.py`` finds them: ``<id>.csv`` alone when
    it exists, else every ``<id>_<letter>.csv`` in name order."""
    single = folder / f"{instance_id}.csv"
    if single.is_file():
        return [single]
    pattern = re.compile(rf"^{re.escape(instance_id)}_[a-z]\.csv$")
    return sorted(p for p in folder.glob(f"{instance_id}_*.csv") if pattern.match(p.name))


def per_gold_condition_cols(value: Any, golds: int, where: Path, line: int) -> list[list[int]]:
    """``condition_cols`` as one list per gold CSV, read as ``compare_multi_pandas_table``
    reads it: none, ``[]``, ``[[]]`` or ``[null]`` mean every column of every gold; a flat
    list applies to each gold; a list of lists gives one list per gold (an empty one: every
    column)."""
    fix = 'write "condition_cols": [] (every column), [0, 2] (for each gold) or [[0], [1]] (one list per gold CSV)'
    if value in (None, [], [[]], [None]):
        return [[] for _ in range(golds)]
    if not isinstance(value, list):
        raise BadInputError(where, f"must be a list, got {value!r}", line=line, field="condition_cols", fix=fix)
    nested = all(isinstance(v, list) for v in value)
    lists = value if nested else [value] * golds
    if nested and len(lists) != golds:
        if golds == 1 or all(v == lists[0] for v in lists):
            lists = [lists[0]] * golds
        else:
            raise BadInputError(where, f"{len(lists)} lists of condition_cols for {golds} gold CSV(s)", line=line,
                                field="condition_cols", fix=fix)
    for cols in lists:
        if not isinstance(cols, list) or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0
                                                 for c in cols):
            raise BadInputError(where, f"must hold 0-based column positions, got {value!r}", line=line,
                                field="condition_cols", fix=fix)
    return [list(c) for c in lists]


def _eval_standards(path: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise BadInputError(path, "Spider 2.0-lite's evaluation file does not exist", line=None,
                            fix=f"keep {EVAL_FILE} next to spider2-lite.jsonl, as the release has it")
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for line, obj in iter_jsonl(path, fix='each line must be {"instance_id": ..., "condition_cols": [...], '
                                          '"ignore_order": true}'):
        iid = need(obj, "instance_id", path, line, fix='give every line its "instance_id"')
        out[iid] = (line, obj)
    return out


def _spider2_records(path: Path) -> Records:
    """One case per ``local*`` question, in file order, with its golds and its compare object."""
    root = path.parent
    standards = _eval_standards(root / EVAL_FILE)
    skipped: list[str] = []
    fix = 'each line needs "instance_id", "db" and "question"'
    for line, obj in iter_jsonl(path, fix="each line must be one complete JSON object"):
        iid = need(obj, "instance_id", path, line, fix)
        if not iid.startswith(LOCAL_PREFIX):
            skipped.append(iid)
            continue
        db = need(obj, "db", path, line, fix)
        question = need(obj, "question", path, line, fix)
        if iid not in standards:
            raise BadInputError(path, f"{iid} has no line in {EVAL_FILE.name}", line=line, field="instance_id",
                                fix=f"add its condition_cols and ignore_order to {root / EVAL_FILE}")
        eval_line, standard = standards[iid]
        csvs = gold_result_files(root / GOLD_RESULT_DIR, iid)
        sql_file = root / GOLD_SQL_DIR / f"{iid}.sql"
        if not csvs and not sql_file.is_file():
            raise BadInputError(path, f"{iid} has no gold: neither {GOLD_RESULT_DIR}/{iid}.csv (or {iid}_a.csv, ...) "
                                      f"nor {GOLD_SQL_DIR}/{iid}.sql", line=line, field="instance_id",
                                fix="keep the release's evaluation_suite/gold folder next to spider2-lite.jsonl")
        ignore_order = standard.get("ignore_order", False)
        if not isinstance(ignore_order, bool):
            raise BadInputError(root / EVAL_FILE, f"must be true or false, got {ignore_order!r}", line=eval_line,
                                field="ignore_order", fix='write "ignore_order": true or false')
        per_gold = per_gold_condition_cols(standard.get("condition_cols"), max(len(csvs), 1), root / EVAL_FILE,
                                           eval_line)
        compare: dict[str, Any] = {"columns": "superset", "order_matters": not ignore_order,
                                   "float_abs_tol": ABS_TOLERANCE}
        if all(c == per_gold[0] for c in per_gold) and per_gold[0]:
            compare["condition_cols"] = per_gold[0]
        meta = {k: v for k, v in obj.items() if k not in ("instance_id", "question")}
        raw: dict[str, Any] = {**meta, "id": iid, "question": question, "db": db, "compare": compare,
                               "spider2_condition_cols": per_gold, "spider2_ignore_order": ignore_order}
        knowledge = obj.get("external_knowledge")
        if isinstance(knowledge, str) and knowledge and (root / DOCUMENTS_DIR / knowledge).is_file():
            raw["external_knowledge_path"] = (DOCUMENTS_DIR / knowledge).as_posix()  # for a backend's prompt
        if sql_file.is_file():
            raw["gold_sql"] = read_text(sql_file)
        if csvs:  # alternatives with different condition_cols: each CSV carries its own
            same = all(c == per_gold[0] for c in per_gold)
            raw["gold_results"] = [p.relative_to(root).as_posix() if same else
                                   {"path": p.relative_to(root).as_posix(), "condition_cols": cols}
                                   for p, cols in zip(csvs, per_gold)]
        yield line, raw
    if skipped:
        warnings.warn(Spider2SkippedWarning(
            f"{path}: {len(skipped)} Spider 2.0-lite question(s) need BigQuery or Snowflake and were skipped "
            f"({', '.join(skipped[:3])}{', ...' if len(skipped) > 3 else ''}); the {LOCAL_PREFIX}* questions run on "
            "their SQLite databases"), stacklevel=2)


def unwrap_prediction(text: str) -> str:
    """A submission file's query: the first fenced ```sql block when there is one (as
    Spider 2.0's ``extract_sql_query``), else the text; stripped."""
    found = _FENCED.search(text)
    return (found.group(1) if found else text).strip()


def _spider2_predictions(path: Path) -> Predictions | None:
    """Spider 2.0's submission folder: ``<instance_id>.sql`` per question; None for a file."""
    if not path.is_dir():
        return None
    files = sorted(path.glob("*.sql"))
    if not files:
        if any(path.glob("*.csv")):
            raise UsageError(f"predictions folder {path} holds result CSVs (Spider 2.0's exec_result mode), which "
                             "we do not grade: a result carries no query to execute on the pinned database, parse or "
                             "explain. Fix: give the folder of <instance_id>.sql files")
        raise UsageError(f"predictions folder {path} has no <instance_id>.sql file. Fix: write one file per "
                         "question, named by its instance_id (Spider 2.0's submission folder)")
    return {f.stem: (unwrap_prediction(read_text(f)), {"file": f.name}) for f in files}


SPIDER2_LITE = register_layout(Layout(
    "spider2-lite", _spider2_records, questions="spider2-lite.jsonl", database="resource/databases/spider2-localdb",
    dialect="sqlite", split_by="db", database_file="{0}.sqlite", predictions=_spider2_predictions,
    description="Spider 2.0-lite's local part: spider2-lite.jsonl, evaluation_suite/gold (sql/<id>.sql, "
                "exec_result/<id>[_a|_b...].csv, spider2lite_eval.jsonl) and resource/databases/spider2-localdb/"
                "<db>.sqlite; columns = \"superset\" with condition_cols, ignore_order, abs tolerance 0.01; BigQuery "
                "and Snowflake questions skipped with a warning"))
