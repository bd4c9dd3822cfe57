"""The documentation is checked like code: the site builds in strict mode, every command it
shows is run (or says why not), the README's Quickstart is what CI runs, every relative link
names a file that exists, and the option, ini-key and record references name exactly what the
plugin registers and writes.

A command block is a fenced ```bash or ```console block (console: the lines after `$ `). Its
commands that start with `pytest`, `python -m pytest_sqleval` or `sqleval` are run, one doc
page at a time, in a temporary folder holding a copy of the bundled suites. An HTML comment
on the line before a block says how: `<!-- not-run: REASON -->` skips it (a network, a key, a
data set this repository does not ship, or minutes of work), `<!-- run-with: ARGS -->` adds
ARGS to each of its commands (a `-k` that keeps the run to a few cases). pytest commands run
with `-p no:hypothesispytest` too, a plugin of the test environment only."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
RUNNABLE = re.compile(r"^(pytest|python -m pytest_sqleval|sqleval)(\s|$)")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(not-run|run-with):(.*?)-->\s*$")
#: A docs command's bounds are safety nets, never a speed: each of its processes may spend
#: COMMAND_CPU_S of CPU time (RLIMIT_CPU: a runaway ends at it, whatever the machine's load;
#: every page's commands together spent 65 s), and the command COMMAND_WALL_S of wall time,
#: against a hang only: at load 17 on 2 cores these commands got 17 % of a core (first-run.md
#: took 171 s of wall), so the wall net is ten times the CPU bound, far from a correct page.
COMMAND_CPU_S = 180
COMMAND_WALL_S = 10 * COMMAND_CPU_S


@dataclass(frozen=True)
class Block:
    """One fenced command block of a page: where it is, its commands, and its marker."""
    page: Path
    line: int
    commands: tuple[str, ...]
    not_run: str | None
    run_with: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _fenced(text: str) -> list[tuple[int, str, list[str], str | None]]:
    """(line of the opening fence, language, body lines, the marker line before it or None)."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang, body = i, m[2], []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        marker = lines[start - 1] if start and MARKER.match(lines[start - 1]) else None
        found.append((start + 1, lang, body, marker))
        i += 1
    return found


def _commands(lang: str, body: list[str]) -> list[str]:
    """The shell commands of a block, continuation lines joined, comments dropped."""
    if lang == "console":
        body = [line.strip()[2:] for line in body if line.strip().startswith("$ ")]
    joined, commands = "", []
    for line in body:
        line = line.strip()
        if line.endswith("\\"):
            joined += line[:-1] + " "
            continue
        line, joined = joined + line, ""
        if line and not line.startswith("#"):
            commands.append(line)
    return commands


def _blocks(page: Path) -> list[Block]:
    blocks = []
    for line, lang, body, marker in _fenced(page.read_text(encoding="utf-8")):
        if lang not in ("bash", "console"):
            continue
        not_run, run_with = None, ()
        if marker:
            found = MARKER.match(marker)
            assert found is not None, marker
            kind, value = found.groups()
            if kind == "not-run":
                not_run = value.strip()
            else:
                run_with = tuple(shlex.split(value))
        blocks.append(Block(page, line, tuple(_commands(lang, body)), not_run, run_with))
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in _blocks(page)]
RUN_PAGES = sorted({b.page for b in ALL_BLOCKS
                    if b.not_run is None and any(RUNNABLE.match(c) for c in b.commands)})


#: Fresh interpreters compile the package once into a bytecode cache outside the repository
#: (as tests/sqleval_helpers.py does), and skip hypothesis's plugin, a second of imports each.
PYCACHE = Path(tempfile.gettempdir()) / f"pytest-sqleval-tests-pycache-{os.getuid()}"
LEAN = ("-p", "no:hypothesispytest")


def _env() -> dict[str, str]:
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def _argv(command: str, extra: tuple[str, ...]) -> list[str]:
    words = shlex.split(command, comments=True)
    if words[0] == "pytest":
        return [sys.executable, "-m", "pytest", *words[1:], *extra, *LEAN]
    if words[0] == "sqleval":
        return [sys.executable, "-m", "pytest_sqleval", *words[1:], *extra]
    assert words[:3] == ["python", "-m", "pytest_sqleval"], command
    return [sys.executable, *words[1:], *extra]


def _limit_cpu(seconds: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child (and each process it starts) may spend ``seconds`` of CPU time."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 5))
    return limit


def _run(argv: list[str], cpu_s: int = COMMAND_CPU_S, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` of a docs command under its safety nets (``COMMAND_CPU_S``, ``COMMAND_WALL_S``);
    a command stopped by its CPU bound exits -SIGXCPU."""
    return subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_WALL_S,
                          preexec_fn=_limit_cpu(cpu_s), **kwargs)


def test_a_docs_command_is_bounded_by_cpu_time_not_the_clock(tmp_path: Path) -> None:
    """A command that computes for ever ends at its CPU bound; one that waits a while (a loaded
    machine's stand-in: wall time with no CPU spent) is not stopped by it."""
    spin = _run([sys.executable, "-c", "while True: pass"], cpu_s=1, cwd=tmp_path)
    assert spin.returncode == -signal.SIGXCPU
    waits = _run([sys.executable, "-c", "import time; time.sleep(2); print('done')"], cpu_s=1, cwd=tmp_path)
    assert waits.returncode == 0 and waits.stdout == "done\n"


def _workspace(tmp_path: Path) -> Path:
    """A folder with a copy of cases/ (the shop suite, the Vantage suite) as the docs' commands
    expect from the repository's root; the built Vantage warehouse is linked, not copied or
    rebuilt (CI's Quickstart run built it before the tests)."""
    work = tmp_path / "work"
    shutil.copytree(ROOT / "cases", work / "cases",
                    ignore=shutil.ignore_patterns("*.duckdb", "*.duckdb.*", "__pycache__", "*.building*"))
    for database in (ROOT / "cases" / "vantage").glob("*.duckdb"):
        (work / "cases" / "vantage" / database.name).symlink_to(database)
    return work


# ------------------------------------------------------------------------------------ the site

def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """Every page is in the nav, every link between pages and every anchor resolves, no
    warning: `mkdocs build --strict`, as the docs extra installs it."""
    assert importlib.util.find_spec("mkdocs"), "mkdocs is missing: pip install -e '.[test]' (or '.[docs]')"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(tmp_path / "site")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "options" / "index.html").is_file()


# ---------------------------------------------------------------------------- links

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The page without its fenced blocks and inline code, where brackets are not links."""
    text = re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_a_file(page: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor on the same page (mkdocs checks those in docs/)
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files: {broken}"


def test_the_link_check_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("[ok](p.md) `[code](nowhere.md)` [gone](nowhere.md#x) [web](https://example.org)\n")
    assert [t for t in LINK.findall(_prose(page.read_text())) if not (page.parent / t.split("#")[0]).exists()
            and not t.startswith("https:")] == ["nowhere.md#x"]


# ------------------------------------------------------------------------- the Quickstart

def _quickstart_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("\n## Quickstart\n"):]
    section = section[:section.index("\n## ", 1)]
    blocks = [body for _, _, body, _ in _fenced(section)]
    assert len(blocks) == 2, "the README's Quickstart should show exactly two commands"
    return [" ".join(line.strip() for line in body if line.strip()) for body in blocks]


def _install(argv: list[str], env: dict[str, str]) -> tuple[str, str, tuple[str, ...]]:
    """(pip, constraints file, what it installs): `-c FILE` and PIP_CONSTRAINT=FILE constrain
    alike (CI uses the variable so the build backend is locked too); `-q` only quiets."""
    rest, constraint = [], env.get("PIP_CONSTRAINT")
    words = iter(argv[2:])
    for word in words:
        if word == "-c":
            constraint = next(words)
        elif word != "-q":
            rest.append(word)
    assert argv[1] == "install", argv
    return argv[0], constraint or "", tuple(rest)


def _ci_commands() -> dict[str, object]:
    """The set-up and the two Quickstart steps as .ci/run runs them."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").split("\n")
    lock = next(line.split("=", 1)[1] for line in lines if line.startswith("LOCK="))
    venv = next(line for line in lines if line.startswith("python3 -m venv"))
    install = next(line for line in lines if ".venv/bin/pip install" in line and "'.[test" in line)
    env_words = [w for w in shlex.split(install.split("||")[0]) if "=" in w and not w.startswith("-")]
    env = {k: v.replace("$LOCK", lock) for k, v in (w.split("=", 1) for w in env_words)}

    def step(n: int) -> list[list[str]]:
        start = next(i for i, line in enumerate(lines) if line.startswith(f"# Quickstart, command {n}"))
        runs = []
        for line in lines[start + 1:]:
            if not line.startswith("run "):
                break
            runs.append(shlex.split(line)[1:])
        return runs

    return {"venv": shlex.split(venv.split("||")[0]),
            "install": _install([w for w in shlex.split(install.split("||")[0]) if w not in env_words], env),
            "step1": step(1), "step2": step(2)}


def test_the_readme_quickstart_is_what_ci_runs() -> None:
    first, second = _quickstart_commands()
    venv, install, main_job = (shlex.split(part) for part in first.split("&&"))
    ci = _ci_commands()
    assert venv == ci["venv"]
    assert _install(install, {}) == ci["install"]
    # CI adds -q to the main job (its log is the place for failures, not 34 of them in full)
    assert [[w for w in argv if w != "-q"] for argv in ci["step1"]] == [main_job]
    assert ci["step2"] == [shlex.split(part) for part in second.split("&&")]


# ----------------------------------------------------------------------- commands in the docs

def test_every_command_block_is_run_or_says_why() -> None:
    """A block the test skips states its reason; a marker stands right before a block."""
    skipped = [b for b in ALL_BLOCKS if b.not_run is not None]
    assert all(b.not_run for b in skipped), [b.where for b in skipped if not b.not_run]
    runnable = [c for b in ALL_BLOCKS if b.not_run is None for c in b.commands if RUNNABLE.match(c)]
    assert len(runnable) >= 8 and RUN_PAGES
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").split("\n")
        stray = [i + 1 for i, line in enumerate(lines) if MARKER.match(line)
                 and not (i + 1 < len(lines) and FENCE.match(lines[i + 1]))]
        assert not stray, f"{page.relative_to(ROOT)}: a marker not followed by a fenced block, line(s) {stray}"


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_commands_of_a_page_run(page: Path, tmp_path: Path) -> None:
    """Each page's commands, in order, in one workspace (a `summary` reads the run before it).
    pytest may exit 1 (a graded case failed, or the gate), never 2-5; the others exit 0."""
    work = _workspace(tmp_path)
    for block in (b for b in _blocks(page) if b.not_run is None):
        for command in (c for c in block.commands if RUNNABLE.match(c)):
            done = _run(_argv(command, block.run_with), cwd=work, env=_env(), stdin=subprocess.DEVNULL)
            said = f"{block.where}: `{command}` exited {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            if command.startswith("pytest"):
                assert done.returncode in (0, 1), said
                assert "sqleval summary" in done.stdout, said
            else:
                assert done.returncode == 0, said


# ------------------------------------------------------------- references that must match the code

def _help(tmp_path: Path) -> str:
    done = _run([sys.executable, "-m", "pytest", "--help", *LEAN], cwd=tmp_path, env=_env())
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_options_and_ini_references_name_what_the_plugin_registers(tmp_path: Path) -> None:
    text = _help(tmp_path)
    options = set(re.findall(r"^\s+(--sqleval-[a-z-]+)", text, flags=re.M))
    ini_keys = set(re.findall(r"^\s+(sqleval_[a-z_]+) \(", text, flags=re.M))
    assert "--sqleval-backend" in options and "sqleval_min_pass_rate" in ini_keys
    documented = set(re.findall(r"--sqleval-[a-z]+(?:-[a-z]+)*", (DOCS / "reference" / "options.md").read_text()))
    assert documented == options, (f"in options.md, not registered: {sorted(documented - options)}; "
                                   f"registered, not in options.md: {sorted(options - documented)}")
    documented = set(re.findall(r"\bsqleval_[a-z]+(?:_[a-z]+)*", (DOCS / "reference" / "ini-keys.md").read_text()))
    assert documented == ini_keys, (f"in ini-keys.md, not registered: {sorted(documented - ini_keys)}; "
                                    f"registered, not in ini-keys.md: {sorted(ini_keys - documented)}")


def test_the_record_schema_names_every_field_a_record_has(tmp_path: Path) -> None:
    work = _workspace(tmp_path)
    done = _run([sys.executable, "-m", "pytest", "cases/shop", "-k", "q01 or q02", "-p", "no:cacheprovider", *LEAN,
                 "--sqleval-backend=predictions:cases/shop/predictions/naive.jsonl"], cwd=work, env=_env())
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    records = [json.loads(line) for line in
               (work / "sqleval-results" / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    fields = {key for record in records for key in record}
    page = (DOCS / "reference" / "record-schema.md").read_text(encoding="utf-8")
    table = page[page.index("## Fields"):page.index("## Where the records go")]
    documented = {name for row in re.findall(r"^\| ([^|]+) \|", table, flags=re.M)
                  for name in re.findall(r"`([a-z_]+)`", row)}
    assert documented == fields, (f"documented, not in a record: {sorted(documented - fields)}; "
                                  f"in a record, not documented: {sorted(fields - documented)}")
    version = {record["record_version"] for record in records}
    stated = re.search(r"`record_version` is \*\*(\d+)\*\*", page)
    assert stated is not None, "the page states no record_version"
    assert version == {int(stated[1])}


def test_the_readme_tour_shows_the_failures_a_run_prints(tmp_path: Path) -> None:
    """The tour's failure texts are what grading the sample predictions prints today."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = ["\n".join(body) for _, lang, body, _ in _fenced(readme)
             if lang == "text" and body and re.match(r"q\d+ \[sample_predictions\]: ", body[0])]
    assert len(shown) >= 2
    ids = [text.split(" ", 1)[0] for text in shown]
    done = _run([sys.executable, "-m", "pytest", "cases/vantage", "-p", "no:cacheprovider", *LEAN,
                 "--sqleval-backend=predictions:cases/vantage/sample_predictions.jsonl", "-k", " or ".join(ids)],
                cwd=_workspace(tmp_path), env=_env())
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    for text in shown:
        assert text in done.stdout, f"the README shows a failure the run no longer prints:\n{text}"
