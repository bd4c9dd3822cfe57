"""The HTML report in a real browser: the Quickstart's main job, then its report.html opened
offline in headless Chromium (Debian's package) and driven as a person would: filter to
stale_table, open q04, read both SQLs and the replacement table, compare gold and sample.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``): no
port, no driver binary and no client package. A screenshot is kept in the test's tmp dir."""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
APT = "apt-get install -y chromium"


class Chromium:
    """One headless Chromium with one page; ``send`` is a DevTools command on that page."""

    def __init__(self, exe: str, profile: Path) -> None:
        to_child, self._w = os.pipe()
        self._r, from_child = os.pipe()
        # Chromium reads commands on fd 3 and answers on fd 4: a small Python step puts the pipe
        # ends there and becomes Chromium (no preexec_fn, unsafe in a process with threads); the
        # ends are first moved above 9, so that neither is itself 3 or 4
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child, from_child)]
        os.close(to_child)
        os.close(from_child)
        to_child, from_child = high
        wire = ("import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
                "os.execv(sys.argv[3], sys.argv[3:])")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", wire, str(to_child), str(from_child), exe, "--headless", "--no-sandbox",
             "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--remote-debugging-pipe", f"--user-data-dir={profile}",
             "--window-size=1400,1000", "about:blank"],
            pass_fds=(to_child, from_child), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []  # what the browser reported unasked (Network.enable: its requests)
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def _call(self, method: str, params: dict[str, Any], session: str | None = None) -> dict[str, Any]:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params, **({"sessionId": session} if session else {})}
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._w, data):]
        deadline = time.monotonic() + 30
        while True:
            while b"\0" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._r], [], [], left)[0]:
                    raise TimeoutError(f"Chromium did not answer {method} in 30 s")
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium closed its pipe during {method} (exit {self.proc.poll()})")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if "method" in reply:
                self.events.append(reply)
            elif reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self._call(method, params, self._session)

    def js(self, expression: str) -> Any:
        out = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in out:
            raise AssertionError(f"page script failed: {out['exceptionDetails']}")
        return out["result"].get("value")

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 20
        while self.js("document.readyState") != "complete":
            assert time.monotonic() < deadline, f"{url} did not load in 20 s"
            time.sleep(0.05)

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
        return path

    def close(self) -> None:
        try:
            self._call("Browser.close", {})
        except (OSError, RuntimeError, TimeoutError):
            pass  # already gone: the wait below reaps it
        os.close(self._w)
        os.close(self._r)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Any:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail(f"headless Chromium is needed for the report's browser test and is not installed. Fix: {APT} "
                    "(Debian's package; .ci/run installs it)", pytrace=False)
    chrome = Chromium(exe, tmp_path_factory.mktemp("chromium-profile"))
    yield chrome
    chrome.close()


@pytest.fixture(scope="module")
def quickstart_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README Quickstart's main job on the bundled suite, its results in a tmp folder."""
    out = tmp_path_factory.mktemp("quickstart") / "sqleval-results"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "cases/vantage", "-q", "-p", "no:cacheprovider",
         "--sqleval-backend=gold,predictions:cases/vantage/sample_predictions.jsonl",
         "--sqleval-min-pass-rate=0.35", f"--sqleval-results={out}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _select(chrome: Chromium, select_id: str, value: str) -> None:
    chrome.js(f"""(() => {{ const s = document.getElementById({json.dumps(select_id)});
        s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()""")


def test_report_filters_opens_a_case_and_compares_two_backends(browser: Chromium, quickstart_results: Path,
                                                                tmp_path: Path) -> None:
    report = quickstart_results / "report.html"
    browser.send("Network.enable")
    browser.send("Runtime.enable")
    browser.open(report.as_uri())
    assert browser.js("document.querySelector('#count').textContent").startswith("120 of 120")

    _select(browser, "f-error-class", "stale_table")
    rows = browser.js("[...document.querySelectorAll('#cases tbody tr')].map(tr => tr.dataset.case + '|' + tr.dataset.backend)")
    assert rows and all(r.endswith("|sample_predictions") for r in rows), rows
    assert "q04|sample_predictions" in rows
    assert len(rows) == 7  # the Quickstart's seven stale tables

    browser.js("document.querySelector('#cases tbody tr[data-case=\"q04\"]').click()")
    detail = browser.js("document.querySelector('#detail').innerText")
    assert "q04" in detail and "stale_table" in detail
    pred = browser.js("document.querySelector('.pred-sql').innerText")
    gold = browser.js("document.querySelector('.gold-sql').innerText")
    assert "legacy.revenue_daily" in pred and "finance.revenue_recognized" in gold
    assert "finance.revenue_recognized" in browser.js("document.querySelector('.advice').innerText")  # what to use instead
    assert browser.js("document.querySelectorAll('.pred-sql .d-add').length") > 0  # the diff marks the stale table
    assert "pytest cases/vantage/questions.jsonl::q04 --sqleval-backend=predictions:" in detail

    _select(browser, "compare", browser.js(
        "[...document.querySelectorAll('#compare option')].find(o => o.textContent === 'gold').value"))
    cols = browser.js("[...document.querySelectorAll('#detail .col')].map(c => c.dataset.backend + '|' + "
                      "c.querySelector('.st').textContent)")
    assert cols == ["sample_predictions|failed", "gold|passed"]
    shot = browser.screenshot(tmp_path / "report-q04-gold-vs-sample.png")
    assert shot.stat().st_size > 10_000
    fetched = [e["params"]["request"]["url"] for e in browser.events if e["method"] == "Network.requestWillBeSent"]
    assert fetched and all(u.startswith(("file:", "data:")) for u in fetched), fetched  # nothing from a network
    errors = [e["params"] for e in browser.events if e["method"] == "Runtime.exceptionThrown"]
    assert not errors  # the page's script never failed


#: Values a record may hold that the page formats: a judge's or a plugin's string confidence,
#: and every other field the page draws with a shape it does not expect.
ODD_FIELDS: list[dict[str, Any]] = [
    {"confidence": "high", "error_class": "wrong_metric", "failure_kind": "value_mismatch"},
    {"confidence": float("nan"), "error_class": "other", "tags": "revenue", "question": 42},
    {"confidence": {"score": 0.9}, "error_class": "wrong_join", "explanation": ["a", "list"],
     "execution": {"preview": "not rows", "rows": "many", "columns": "amount"},
     "compare": {"sidebyside": "yes", "extra_rows": 7, "reason": {"why": 1}}},
    {"confidence": [0.5], "error_class": "stale_table", "layers": ["not", "a", "mapping"],
     "backend_metadata": {"model": {"name": "m"}, "trace": "not events"}, "gold": {"preview": [1, 2], "rows": None}},
    {"confidence": True, "error_class": "hallucinated_column", "generated_sql": 17,
     "execution": {"preview": [[1, {"nested": True}], "flat"], "rows": "2"}, "rationale": 3, "equivalence": ["x"]},
]


def test_report_draws_every_case_whatever_its_record_holds(browser: Chromium, quickstart_results: Path,
                                                           tmp_path: Path) -> None:
    """A string confidence (a judge or plugin's), a NaN, lists where text goes, text where rows
    go: each case still opens with its backend, status, SQL and the fields that are sound."""
    from pytest_sqleval.reports.html import write_report
    records = [json.loads(line) for line in (quickstart_results / "results.jsonl").read_text().splitlines()]
    summary = json.loads((quickstart_results / "summary.json").read_text())
    failed = [r for r in records if r["status"] == "failed"][: len(ODD_FIELDS)]
    assert len(failed) == len(ODD_FIELDS)
    for rec, odd in zip(failed, ODD_FIELDS):
        rec.update(odd)
    page = write_report(failed, summary, tmp_path / "report.html")
    browser.send("Runtime.enable")
    browser.events.clear()
    browser.open(page.as_uri())
    assert browser.js("document.querySelector('#count').textContent").startswith(f"{len(ODD_FIELDS)} of {len(ODD_FIELDS)}")
    for i, rec in enumerate(failed):
        browser.js(f"document.querySelector('#cases tbody tr[data-i=\"{i}\"]').click()")
        col = "document.querySelector('#detail .col')"
        assert browser.js(f"{col}.dataset.backend") == rec["backend"]
        assert browser.js(f"{col}.querySelector('.draw-error')") is None, browser.js(f"{col}.innerText")
        text = browser.js(f"{col}.innerText")
        assert f"failed · {rec['error_class']}" in text
        assert "confidence" not in text.split("\n")[0]  # no number to show, so none is made up
        assert "reproduce" in text and "gold SQL" in text
    errors = [e["params"] for e in browser.events if e["method"] == "Runtime.exceptionThrown"]
    assert not errors  # the page's script never failed
