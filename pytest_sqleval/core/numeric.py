"""The one check of every number a user gives: command-line options (as argparse ``type=``),
their ini fallbacks and the manifest's numeric keys. Each value must be finite and in its
range; what is accepted is said in the error, so the run stops before grading anything
rather than turning every case into an error (a timeout of 0 or NaN)."""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass


class NumberError(argparse.ArgumentTypeError):
    """A number out of its range, or not a number. argparse shows the message after the
    option's name ("argument --x: ..."); ini and manifest readers add their own place."""


@dataclass(frozen=True)
class Number:
    """A numeric setting's type and range; callable on the text of an option or ini value
    (argparse ``type=``), ``check`` on a value already typed (TOML, JSON)."""

    kind: type  # int or float
    low: float
    high: float | None = None
    low_open: bool = False  # low itself is not accepted (a timeout of 0)
    unit: str = ""  # "seconds", "rows": said in the accepted range

    @property
    def accepted(self) -> str:
        what = "a whole number" if self.kind is int else "a finite number"
        unit = f" of {self.unit}" if self.unit else ""
        low = f"greater than {_fmt(self.low)}" if self.low_open else f"at least {_fmt(self.low)}"
        if self.high is None:
            return f"{what}{unit} {low}"
        if not self.low_open:
            return f"{what}{unit} from {_fmt(self.low)} to {_fmt(self.high)}"
        return f"{what}{unit} {low} and at most {_fmt(self.high)}"

    def __call__(self, text: str) -> int | float:
        raw = str(text).strip()
        try:
            value: int | float = int(raw) if self.kind is int else float(raw)
        except ValueError:
            raise NumberError(f"expected {self.accepted}, got {text!r}") from None
        return self._in_range(value, text)

    def check(self, value: object) -> int | float:
        """A typed value (TOML, JSON): an int for a whole number, an int or float otherwise; never a bool or a string."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (self.kind is int and isinstance(value, float)):
            raise NumberError(f"expected {self.accepted}, got {value!r}")
        return self._in_range(self.kind(value) if self.kind is float else value, value)

    def _in_range(self, value: int | float, shown: object) -> int | float:
        ok = math.isfinite(value) and (value > self.low if self.low_open else value >= self.low) and (
            self.high is None or value <= self.high)
        if not ok:
            raise NumberError(f"expected {self.accepted}, got {shown!r}")
        return value


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


DAY = 86_400.0
#: --sqleval-concurrency: backend calls in flight across the run
CONCURRENCY = Number(int, 1, 1024)
#: --sqleval-generation-timeout and [limits] timeout_s; past a day a timer stops meaning anything
SECONDS = Number(float, 0, DAY, low_open=True, unit="seconds")
#: --sqleval-variants and [variants] count
VARIANT_COUNT = Number(int, 0, 64)
#: --sqleval-min-pass-rate (a fraction, not a percentage)
PASS_RATE = Number(float, 0, 1)
#: [limits] max_rows, max_bytes
POSITIVE_INT = Number(int, 1)
#: [limits] threads
THREADS = Number(int, 1, 1024)
#: [variants] seed
SEED = Number(int, 0)
#: [compare] float_rel_tol, float_abs_tol, and a case's "compare" overrides of them
TOLERANCE = Number(float, 0)


def ini_number(parser: Number, raw: object, name: str, option: str) -> int | float | None:
    """An ini key's value through the option's own parser; ``None`` when unset."""
    from .errors import UsageError
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    try:
        return parser(str(raw))
    except NumberError as exc:
        raise UsageError(f"ini option {name} (the default for {option}): {exc}") from None
