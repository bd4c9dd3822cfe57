"""Case by case: does our reproduction of Spider 2.0's comparison (``peers.spider2_match``,
with ``cases.spider2_lite.per_gold_condition_cols`` reading ``condition_cols``) give the
verdict of Spider 2.0's own ``compare_multi_pandas_table``?

    python bench/spider2_agreement.py --official SPIDER2_CHECKOUT --official-python PY [--cases 3000 --seed 1]

Random gold results (integers, floats at 0-4 places, texts that read as numbers, dates,
pandas' missing-value texts, NULLs, booleans) and predictions made from them the ways a
model errs or rephrases (rows shuffled, columns permuted or added, floats rounded or
nudged by 0.005, NULL written as 0, numbers as text, a row dropped) or drawn afresh. The
official side runs in a process of ``--official-python`` (a Python with pandas): the
prediction goes through SQLite, ``pd.read_sql_query``, ``to_csv`` and ``read_csv`` as
``evaluate.py`` sends it, the gold CSV through ``read_csv``, and the two compare functions
are read from the checkout's ``spider2-lite/evaluation_suite/evaluate.py`` (its module
imports BigQuery and redirects stdout, so the functions are compiled alone; never copied
here). Ours reads the same gold CSV text and the rows SQLite returned.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: run by --official-python: make the cases and score each with the official functions
DRIVER = r"""
import ast, io, json, math, random, sqlite3, sys
import pandas as pd
evaluate_py, n_cases, seed, out_file = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ns = {"pd": pd, "math": math}
for node in ast.parse(open(evaluate_py).read()).body:
    if isinstance(node, ast.FunctionDef) and node.name in ("compare_pandas_table", "compare_multi_pandas_table"):
        exec(compile(ast.Module([node], []), evaluate_py, "exec"), ns)
rnd = random.Random(seed)
VALUES = [lambda: rnd.randint(-3, 12), lambda: round(rnd.uniform(-5, 50), rnd.choice([0, 1, 2, 4])),
          lambda: rnd.choice(["a", "b", "NA", "x y", "10", "007", "2023-01-0" + str(rnd.randint(1, 3)), ""]),
          lambda: None, lambda: rnd.choice([True, False])]
def column(n):
    kind = rnd.randrange(len(VALUES))
    return [VALUES[kind]() if rnd.random() > 0.15 else None for _ in range(n)]
def mutate(rows):
    rows = [list(r) for r in rows]
    op = rnd.choice(["same", "shuffle_rows", "permute_columns", "extra_column", "round", "null_as_0", "number_as_text",
                     "drop_row", "nudge", "repeat_column"])
    if op == "shuffle_rows": rnd.shuffle(rows)
    elif op == "permute_columns" and rows:
        p = list(range(len(rows[0]))); rnd.shuffle(p); rows = [[r[i] for i in p] for r in rows]
    elif op == "extra_column": rows = [r + [rnd.randint(0, 3)] for r in rows]
    elif op == "round": rows = [[round(v, 2) if isinstance(v, float) else v for v in r] for r in rows]
    elif op == "null_as_0": rows = [[0 if v is None else v for v in r] for r in rows]
    elif op == "number_as_text":
        rows = [[str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in r] for r in rows]
    elif op == "drop_row" and rows: rows.pop()
    elif op == "nudge": rows = [[v + 0.005 if isinstance(v, float) else v for v in r] for r in rows]
    elif op == "repeat_column" and rows: rows = [r + [r[0]] for r in rows]
    return rows, op
def gold_csv(rows, w):
    header = [f"g{i}" for i in range(w)]
    return pd.DataFrame(rows, columns=header).to_csv(index=False) if rows else ",".join(header) + "\n"
cases = []
while len(cases) < n_cases:
    n, w = rnd.randint(0, 5), rnd.randint(1, 3)
    gold_rows = [tuple(c[i] for c in cols) for cols in [[column(n) for _ in range(w)]] for i in range(n)]
    golds = [gold_rows]
    if rnd.random() < 0.3:  # an alternative gold: another column set of the same answer
        golds.append([r[::-1] + (rnd.randint(0, 2),) for r in gold_rows])
    source = rnd.choice(golds)
    if rnd.random() < 0.8:
        pred_rows, op = mutate(source)
    else:
        pred_rows, op = [tuple(c[i] for c in [column(n) for _ in range(w)]) for i in range(n)], "drawn_afresh"
    pw = len(pred_rows[0]) if pred_rows else w
    con = sqlite3.connect(":memory:")
    con.execute(f"CREATE TABLE t ({', '.join(f'c{i}' for i in range(pw))})")
    con.executemany(f"INSERT INTO t VALUES ({', '.join('?' * pw)})", pred_rows)
    buf = io.StringIO()
    pd.read_sql_query("SELECT * FROM t", con).to_csv(buf, index=False)
    texts = [gold_csv(g, len(g[0]) if g else w) for g in golds]
    cond = rnd.choice([None, [], [0], [w - 1], list(range(w))] + ([[[0], [0]], [[], [1]]] if len(golds) == 2 else []))
    ignore = rnd.random() < 0.6
    try:
        pred_pd = pd.read_csv(io.StringIO(buf.getvalue()))
        gold_pds = [pd.read_csv(io.StringIO(t)) for t in texts]
        if len(golds) == 1:
            score = ns["compare_pandas_table"](pred_pd, gold_pds[0], cond, ignore)
        else:
            score = ns["compare_multi_pandas_table"](pred_pd, gold_pds, cond, ignore)
    except Exception as exc:  # evaluate.py scores an exception 0
        score = 0
    cases.append({"golds": texts, "pred": [list(r) for r in con.execute("SELECT * FROM t").fetchall()],
                  "width": pw, "condition_cols": cond, "ignore_order": ignore, "official": int(score), "op": op})
json.dump(cases, open(out_file, "w"))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", required=True, type=Path, help="a checkout of xlang-ai/Spider2")
    parser.add_argument("--official-python", default=sys.executable, help="a Python with pandas")
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from pytest_sqleval.core.cases.spider2_lite import per_gold_condition_cols
    from pytest_sqleval.core.grading.peers import spider2_csv_frame, spider2_frame, spider2_match

    evaluate_py = args.official / "spider2-lite" / "evaluation_suite" / "evaluate.py"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cases.json"
        subprocess.run([args.official_python, "-c", DRIVER, str(evaluate_py), str(args.cases), str(args.seed), str(out)],
                       check=True, timeout=600)
        cases = json.loads(out.read_text())
    agree, differ = collections.Counter(), collections.Counter()
    for case in cases:
        golds = [spider2_csv_frame(text) for text in case["golds"]]
        cols = per_gold_condition_cols(case["condition_cols"], len(golds), Path("cases.json"), 1)
        pred = spider2_frame([tuple(r) for r in case["pred"]], case["width"])
        ours = spider2_match(golds, pred, cols, case["ignore_order"]) is not None
        (agree if int(ours) == case["official"] else differ)[case["op"]] += 1
    official_passes = sum(c["official"] for c in cases)
    print(f"{len(cases)} cases (seed {args.seed}), {official_passes} official passes: "
          f"same verdict on {sum(agree.values())}, different on {sum(differ.values())}")
    print("  by how the prediction was made:",
          ", ".join(f"{op} {agree[op]}/{agree[op] + differ[op]}" for op in sorted(set(agree) | set(differ))))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
