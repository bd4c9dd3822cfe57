"""Does ``expand_alternatives`` (the defog layout's golds) give, for every gold query of
defog's sql-eval data files, the queries its own ``get_all_minimal_queries`` gives?

    python bench/defog_agreement.py --official SQL_EVAL_CHECKOUT

Every ``data/*.csv`` of the checkout, every row's ``query``; the official function (and
``find_bracket_indices`` beneath it) is compiled alone from the checkout's ``eval/eval.py``
(its module needs pandas, SQLAlchemy and credentials; never copied here). Queries compare
with white space collapsed, since defog joins its unstripped options with ", ". Ours
expands more than defog's (every group, nested groups), so "a superset" is counted apart
from "the same set"; any other difference fails.
"""
from __future__ import annotations

import argparse
import ast
import csv
import io
import itertools
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--official", required=True, type=Path, help="a checkout of defog-ai/sql-eval")
    args = parser.parse_args()
    from pytest_sqleval.core.cases.defog import expand_alternatives

    ns: dict[str, Any] = {"itertools": itertools}
    source = (args.official / "eval" / "eval.py").read_text()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("find_bracket_indices", "get_all_minimal_queries"):
            exec(compile(ast.Module([node], []), "eval.py", "exec"), ns)

    def norm(q: str) -> str:
        return re.sub(r"\s+", " ", q.replace(" ,", ",")).strip()

    files = sorted((args.official / "data").glob("*.csv"))
    total = braces = same = superset = 0
    different = []
    for f in files:
        for row in csv.DictReader(io.StringIO(f.read_text(), newline="")):
            query = row["query"]
            total += 1
            braces += "{" in query
            theirs = {norm(q) for q in ns["get_all_minimal_queries"](query)}
            ours = {norm(q) for q in expand_alternatives(query)}
            if ours == theirs:
                same += 1
            elif theirs <= ours:
                superset += 1
            else:
                different.append((f.name, query))
    print(f"{len(files)} files, {total} gold queries ({braces} with braces): the same set {same}, "
          f"ours a superset {superset}, different {len(different)}")
    for name, query in different[:5]:
        print(f"  {name}: {query[:160]}")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
