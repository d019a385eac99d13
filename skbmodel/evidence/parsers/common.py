"""What every tool format's parser shares: the records, the limits, the line clean-up and the checks
of a measurement's conditions and clock."""
from __future__ import annotations

import dataclasses
import re

from ... import params, schema

MAX_TEXT_CHARS = 2_000_000
MAX_LINES = 5_000
MAX_LINE_CHARS = 20_000
MAX_MEASUREMENTS = 2_000
BINARY_SAMPLE = 8_192

#: units a measurement may carry, and the model output units they compare with
UNITS = ("cycles", "ns", "pps", "Kpps", "Mpps", "Krps", "bytes", "objects", "packets")
_COMPATIBLE = {"cycles": {"cycles", "ns"}, "ns": {"cycles", "ns"}, "Mpps": {"pps", "Kpps", "Mpps"},
               "Krps": {"Krps"}, "objects": {"objects"}, "1": set(), "runs": set(), "%": set()}

#: model state keys a measurement condition may set
CONDITION_KEYS = tuple(k for k in params.MODEL_KEYS if k not in ("cpu", "ghz", "path"))

#: outputs a user may map a measurement to (what the fit can compare)
MAPPABLE_OUTPUTS = schema.MAPPABLE_OUTPUTS
_MODEL_PARAMS = {p.key: p for p in params.MODEL_PARAMS}


@dataclasses.dataclass(frozen=True)
class Measurement:
    origin: str                    # file name (or "pasted text")
    line: int                      # 1-based line number in origin
    raw: str                       # the line as given (truncated to 300 chars)
    test: str                      # test name, e.g. "kmem-in-loop"
    value: float
    unit: str                      # one of UNITS
    conditions: dict               # model state keys, e.g. {"bulk": 16}
    output: str | None             # model output name, None = not identified (user maps it)
    kind: str                      # "time_bench" | "bulk_table" | "pktgen" | "xdp" | "csv" | "generic"
    tol: float = 0.05              # relative tolerance used by the fit
    note: str = ""                 # why it is (not) mapped, etc.
    run: int = 1                   # the run of its origin it belongs to (see :func:`find_runs`)
    repeats: tuple = ()            # every value of a test repeated within its run, in order (see .repeats)
    repeat_lines: tuple = ()       # their lines
    typical: str = ""              # how ``value`` was chosen from them: "minimum" or "median"

    def key(self) -> tuple:
        return (self.output, self.unit, tuple(sorted(self.conditions.items())))

    def where(self) -> str:
        return f"{self.origin}, line {self.line}"

    def repeats_text(self) -> str:
        """``minimum of 3 repeats (31.171, 31.171, 31.172)``, or "" for a single value."""
        if len(self.repeats) < 2:
            return ""
        vals = ", ".join(f"{v:g}" for v in self.repeats[:8]) + (", ..." if len(self.repeats) > 8 else "")
        return f"{self.typical} of {len(self.repeats)} repeats ({vals})"


@dataclasses.dataclass(frozen=True)
class ParseError:
    origin: str
    line: int                      # 0 = the whole input
    message: str
    raw: str = ""

    def __str__(self) -> str:
        loc = f"{self.origin}, line {self.line}" if self.line else self.origin
        return f"{loc}: {self.message}"


@dataclasses.dataclass(frozen=True)
class Run:
    """One benchmark run of an input: a kernel, a repeat, a section of lab notes (see :func:`find_runs`)."""
    origin: str
    index: int                     # 1-based within its origin
    first: int                     # first line (the heading / module load that opened it, else its first measurement)
    last: int                      # end of the block of its last measurement
    label: str = ""                # the heading(s) it sits under, if any
    n_lines: int = 0               # lines with measurements

    def describe(self, number: int | None = None, with_origin: bool = False) -> str:
        where = f"{self.origin}, " if with_origin else ""
        text = f"run {self.index if number is None else number}: {where}lines {self.first}-{self.last}"
        return text + (f" \"{self.label}\"" if self.label else "")


@dataclasses.dataclass
class ParseResult:
    measurements: list[Measurement]
    errors: list[ParseError]
    notes: list[str] = dataclasses.field(default_factory=list)
    runs: list[Run] = dataclasses.field(default_factory=list)
    repairs: list[str] = dataclasses.field(default_factory=list)   # one line per input: mail damage undone

    @property
    def ok(self) -> bool:
        return bool(self.measurements)


# --------------------------------------------------------------------------- helpers
_QUOTE = re.compile(r"^(?:\s*[>|])+\s?")
_DMESG = re.compile(r"^\s*\[\s*\d+\.\d+\]\s*")
_MODPREFIX = re.compile(r"^\s*time_bench:\s*")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?=\S)")
_NUM = r"(\d+(?:\.\d+)?)"


def _clean(line: str) -> str:
    s = _QUOTE.sub("", line)
    s = _DMESG.sub("", s)
    s = _MODPREFIX.sub("", s)
    s = _BULLET.sub("", s)
    return s.strip()


def _short(s: str, n: int = 300) -> str:
    s = s.rstrip("\n")
    return s if len(s) <= n else s[: n - 3] + "..."


def _intnum(s: str) -> float:
    """'9,018,604' -> 9018604.0 (xdp-bench prints thousands separators)."""
    return float(s.replace(",", ""))


def check_condition(cond: dict) -> str | None:
    """A problem text when a condition is outside the model's range, else None."""
    for k, v in cond.items():
        p = _MODEL_PARAMS[k]
        val, problem = p.parse(str(v))
        if val is None or problem:
            return f"{k}={v} is outside the model's range ({p.allowed()})"
    return None


def _mapped(output: str | None, cond: dict, note: str = "") -> tuple[str | None, dict, str]:
    if output is None:
        return None, cond, note
    problem = check_condition(cond)
    if problem:
        return None, cond, f"not mapped: {problem}"
    return output, cond, note


def _clock_problem(cyc: float, ns: float) -> str | None:
    if ns <= 0:
        return None if cyc == 0 else "0 ns for a non-zero cycle count"
    if cyc < 10:  # integer cycles: the ratio is too coarse to judge
        return None
    ghz = cyc / ns
    if not 0.2 <= ghz <= 10:
        return (f"{cyc:g} cycles in {ns:g} ns implies a {ghz:.3g} GHz clock; expected ns per element "
                f"(a clock between 0.2 and 10 GHz)")
    return None


def compatible(output: str, unit: str) -> bool:
    """Whether a measurement in ``unit`` can be compared with model output ``output``."""
    return unit in _COMPATIBLE.get(schema.OUTPUT_UNITS.get(output, ""), set())


class LineFormat:
    """One tool's line format, fed every non-empty line of an input in order (after :func:`_clean`).

    :meth:`feed` returns True when the line is this format's (it may have added measurements or
    errors to ``res``): the later formats do not see it.  State that spans lines (a table header, a
    pktgen result's first line) lives on the instance, one per input.
    """

    def __init__(self, res: ParseResult, origin: str):
        self.res = res
        self.origin = origin

    def add(self, m: Measurement) -> None:
        self.res.measurements.append(m)

    def err(self, i: int, msg: str, raw: str) -> None:
        self.res.errors.append(ParseError(self.origin, i, msg, _short(raw)))

    def feed(self, i: int, raw: str, s: str) -> bool:
        raise NotImplementedError
