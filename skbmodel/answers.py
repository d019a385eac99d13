"""One answer to one question, computed once, rendered by every surface.

A *question* is a view: a page, scenario A, and on a page that compares, a scenario B (on Compare,
A plus B's overrides; on the Design page, the comparison path in A's scenario).  :func:`answer`
turns (scenario A, optional scenario B, the outputs asked) into :class:`Answers`:

* for each output asked, an :class:`Answer`: value, 90 % interval, unit, label and kind
  (:mod:`skbmodel.schema`), and for a signed difference of scenario A (memset minus ``__GFP_ZERO``)
  its verdict against the noise floor;
* for B, the paired difference ``B - A`` of every output the change moves
  (:func:`skbmodel.attribution.verdict_outputs`), each a :class:`Difference` with the paired interval
  (:func:`skbmodel.uncertainty.delta_intervals`), the verdict, the runs per variant
  (:func:`skbmodel.physics.noise.runs_needed`) and the constants it rests on (:func:`skbmodel.attribution.drivers`);
* the identity of each profile used (:class:`ProfileIdentity`: name, version, stock or custom, the
  base and what it was fitted from).

:func:`of_state` asks a dashboard state's question.  The page's metrics, "Copy as text" /
``eval --text``, ``eval --json``, the reports and the export footers render its result and compute no
number of their own, so they cannot disagree; the formatting of a number is here too
(:meth:`Answer.value_text`, :meth:`Answer.interval_text`), once.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from .physics import budget, noise, units
from . import attribution, composer, question, schema, uncertainty
from .evidence import perfprofile
from .machine.custom import CUSTOM_PREFIX
from .links import state as sk_state, versions
from .links.pages import BY_SLUG, DEFAULT_PAGE
from .machine.profile import Profile, load_profile, profile_version
from .question import Question
from .scenario import Scenario

#: significant digits of every number a surface prints
DIGITS = 4
_CACHE: dict[tuple, Answers] = {}
_CACHE_MAX = 32


def decimals(x, digits: int = DIGITS):
    """Decimals that show ``x`` with ``digits`` significant digits (at least 0); elementwise on an array."""
    a = np.abs(np.asarray(x, dtype=float))
    ok = (a > 0) & np.isfinite(a)
    d = np.where(ok, digits - 1 - np.floor(np.log10(np.where(ok, a, 1.0))), 0)
    d = np.maximum(d, 0).astype(int)
    return int(d) if d.ndim == 0 else d


def _format(output: str, kind: str, signed: bool, xs, ds) -> list[str]:
    """The texts of the numbers ``xs`` of ``output``, each to the decimals in ``ds``: the one formatting of a
    number every surface prints (:meth:`Answer.value_text`, :func:`texts_of`)."""
    if kind == "category":
        codes = schema.BY_NAME[output].codes
        return [codes[int(round(float(x)))] for x in xs]
    if kind in ("count", "exact"):
        return [f"{float(x):.0f}" for x in xs]
    sign = "+" if signed else ""
    return [f"{float(x):{sign}.{int(d)}f}" for x, d in zip(xs, ds)]


@dataclasses.dataclass(frozen=True)
class ProfileIdentity:
    """Which CPU profile an answer was computed on, as every surface names it."""

    id: str
    name: str
    version: str
    custom: bool
    #: the shipped profile a custom one was built on, and that profile's version (None for a stock one)
    base: str | None
    base_version: str | None
    #: what a custom profile was fitted from (its constants' source), empty for a stock profile
    fitted_from: str
    kernels: tuple[str, ...]
    ghz: float
    #: the kernel and its mitigation mode (:attr:`skbmodel.machine.profile.Profile.configuration_label`)
    configuration: str = ""

    @classmethod
    def of(cls, profile: Profile, ghz: float) -> ProfileIdentity:
        custom = profile.id.startswith(CUSTOM_PREFIX)
        base = base_version = None
        fitted = ""
        if custom and profile.inherits:
            base = profile.inherits.split("@", 1)[0]
            base_version = profile.inherits.split("@", 1)[1] if "@" in profile.inherits else \
                profile_version(load_profile(base))
            parent = load_profile(profile.inherits).constants
            sources = sorted({c.source for n, c in profile.constants.items()
                              if n in parent and c.value != parent[n].value})
            fitted = "; ".join(sources)
        return cls(id=profile.id.split("@", 1)[0], name=profile.name or profile.id, version=profile_version(profile),
                   custom=custom, base=base, base_version=base_version, fitted_from=fitted,
                   kernels=tuple(profile.kernels), ghz=float(ghz), configuration=profile.configuration_label)

    def text(self) -> str:
        """``epyc-9684x version c35ab35a`` or ``custom profile NAME (custom-... version ..., on BASE version ...)``."""
        if self.custom:
            return (f"custom profile {self.name} ({self.id} version {self.version}, on {self.base} version "
                    f"{self.base_version})")
        return f"{self.id} version {self.version}"

    def full_text(self) -> str:
        """:meth:`text` with the kernel and its mitigation mode: what a footer, a text block and a report say."""
        return f"{self.text()} ({self.configuration})" if self.configuration else self.text()

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Answer:
    """One output of one scenario: value and 90 % interval [unit]."""

    output: str
    label: str
    unit: str
    kind: str
    value: float
    lo: float
    hi: float
    #: for a signed difference of one scenario (memset minus __GFP_ZERO): its verdict against the noise floor
    verdict: str | None = None

    @property
    def signed(self) -> bool:
        return self.kind == "difference"

    @property
    def unit_text(self) -> str:
        """How the unit reads after the number (:attr:`skbmodel.schema.Output.unit_text`)."""
        return schema.BY_NAME[self.output].unit_text

    @property
    def exact(self) -> bool:
        return self.kind in ("exact", "category") or (self.lo == self.value == self.hi and self.kind == "count")

    def _fmt(self, x: float, d: int) -> str:
        return _format(self.output, self.kind, self.signed, (x,), (d,))[0]

    def _d(self) -> int:
        return decimals(self.value if self.value else max(abs(self.lo), abs(self.hi)))

    def value_text(self) -> str:
        """The value with :data:`DIGITS` significant digits (a sign for a signed difference)."""
        return self._fmt(self.value, self._d())

    def interval_text(self) -> str | None:
        """``90 %: 2.656 to 2.818`` (to the decimals of the value); None for an exact value.  A count of runs
        whose interval reaches no finite number (its difference may be 0) reads ``90 %: 3 or more``; a share whose
        interval reaches both 0 and 1, ``90 %: anywhere from 0 to 1``."""
        if self.exact:
            return None
        d = self._d()
        if self.output in schema.RUNS_OUTPUTS and self.hi >= noise.MAX_RUNS:
            return f"90 %: {self._fmt(self.lo, d)} or more (the difference may be 0)"
        if schema.BY_NAME[self.output].upper == 1.0 and self.lo <= 0.0 and self.hi >= 1.0:  # both ends reached
            return "90 %: anywhere from 0 to 1"
        return f"90 %: {self._fmt(self.lo, d)} to {self._fmt(self.hi, d)}"

    def text(self, unit: str | None = None) -> str:
        """``2.737 Mpps (90 %: 2.656 to 2.818)``."""
        unit = self.unit if unit is None else unit
        iv = self.interval_text()
        return f"{self.value_text()}{' ' + unit if unit else ''}" + (f" ({iv})" if iv else "")

    def to_json(self) -> dict:
        out = {k: v for k, v in dataclasses.asdict(self).items() if v is not None and k != "drivers"}
        out.update(value_text=self.value_text(), interval_text=self.interval_text())
        return out


@dataclasses.dataclass(frozen=True)
class Difference(Answer):
    """``B - A`` of one output, paired: its value and interval, A's and B's values, the verdict against
    the noise floor ``noise_ns``, the runs per variant to see it and what it rests on."""

    a: float = 0.0
    b: float = 0.0
    noise_ns: float = 0.0
    runs: int | None = None
    drivers: dict | None = None

    @property
    def signed(self) -> bool:
        return True

    def runs_text(self) -> str:
        """``"; 23 runs per variant"`` (``"1 run"``), or ``""`` where no count is given (the verdict says why)."""
        if not self.runs:
            return ""
        return f"; {self.runs} run{'' if self.runs == 1 else 's'} per variant"

    def to_json(self) -> dict:
        out = super().to_json()
        if self.drivers is not None:
            out["drivers"] = attribution.to_json(self.drivers)
        return out


@dataclasses.dataclass(frozen=True)
class Answers:
    """The answer to one question (see the module docstring)."""

    page: str
    profile_a: ProfileIdentity
    values: tuple[Answer, ...] = ()
    profile_b: ProfileIdentity | None = None
    #: B's values of the outputs the difference is about
    b_values: tuple[Answer, ...] = ()
    #: A's values of the outputs the difference is about (the question's own numbers, whatever the page shows)
    a_values: tuple[Answer, ...] = ()
    #: ``B - A``, the verdict's output first (empty without B, or when the change moves nothing)
    differences: tuple[Difference, ...] = ()
    #: what A's headline rests on (pages without B); B's differences carry their own
    drivers: dict | None = None
    #: why there are no numbers (a composition that makes no sense, a placement the machine does not have), else
    #: None
    problem: str | None = None
    problem_b: str | None = None
    #: whether the question has a scenario B at all
    has_b: bool = False
    #: ``{"a": {output: Answer}, "b": {...}}``: what the page's charts draw of each scenario
    #: (:attr:`skbmodel.links.pages.Page.drawn`), from the same propagation as the numbers above
    drawn: Mapping[str, Mapping[str, Answer]] = dataclasses.field(default_factory=dict)
    #: what the numbers leave out that a reader of this question must know (:func:`wire_note`), one line each
    notes: tuple[str, ...] = ()

    def value(self, output: str) -> Answer:
        for a in self.values:
            if a.output == output:
                return a
        raise KeyError(output)

    @property
    def headline(self) -> Difference | Answer | None:
        """The first number: the verdict's difference on a page with B, else the page's first value."""
        if self.differences:
            return self.differences[0]
        return self.values[0] if self.values else None

    def to_json(self) -> dict:
        return {"page": self.page, "profile_a": self.profile_a.to_json(),
                "profile_b": self.profile_b.to_json() if self.profile_b else None,
                "values": [a.to_json() for a in self.values], "b_values": [a.to_json() for a in self.b_values],
                "differences": [d.to_json() for d in self.differences],
                "drivers": attribution.to_json(self.drivers) if self.drivers else None,
                "problem": self.problem, "problem_b": self.problem_b, "notes": list(self.notes)}


def answers_of(outputs: Sequence[str], values: Mapping, intervals: Mapping, labels: Mapping[str, str],
               noise_ns: float) -> tuple[Answer, ...]:
    """The :class:`Answer` of each of ``outputs`` from its scalar value and ``(lo, hi)`` [its unit] (as
    :func:`skbmodel.uncertainty.evaluate_with_intervals` gives them); a signed difference in ns gets its
    verdict against ``noise_ns``.  Every answer is made here, so each reads the same on every surface."""
    out = []
    for o in outputs:
        spec = schema.BY_NAME[o]
        v, (lo, hi) = float(np.asarray(values[o])), intervals[o]
        lo, hi = float(np.asarray(lo)), float(np.asarray(hi))
        verdict = noise.verdict(v, noise_ns, lo, hi) if spec.kind == "difference" and spec.unit == "ns" else None
        out.append(Answer(o, labels.get(o, spec.label), spec.unit, spec.kind, v, lo, hi, verdict))
    return tuple(out)


def texts_of(outputs: Sequence[str], values: Mapping, intervals: Mapping, noise_ns: float,
             kind: str | None = None) -> dict[str, dict]:
    """:func:`answers_of` over arrays of values, as texts: for each of ``outputs``, ``{"value": [...],
    "interval": [...], "verdict": [...] or None}``, one entry per element of ``values[o]`` (the same texts
    as :meth:`Answer.value_text`, :meth:`Answer.interval_text` and the verdict of each element alone; an
    exact value's interval is None).  ``kind="difference"``: the values are paired differences ``B - A``
    (:class:`Difference`: signed; their verdict is not given here)."""
    out = {}
    for o in outputs:
        spec = schema.BY_NAME[o]
        o_kind = spec.kind if kind is None else kind
        v = np.atleast_1d(np.asarray(values[o], dtype=float))
        lo, hi = (np.broadcast_to(np.asarray(x, dtype=float), v.shape) for x in intervals[o])
        d = np.atleast_1d(decimals(np.where(v != 0, v, np.maximum(np.abs(lo), np.abs(hi)))))
        signed = o_kind == "difference"
        exact = (np.full(v.shape, o_kind in ("exact", "category"))
                 | ((lo == v) & (v == hi) & (o_kind == "count")))
        val = _format(o, o_kind, signed, v.tolist(), d.tolist())
        los, his = _format(o, o_kind, signed, lo.tolist(), d.tolist()), _format(o, o_kind, signed, hi.tolist(),
                                                                                 d.tolist())
        iv = [None if e else f"90 %: {a} to {b}" for e, a, b in zip(exact.tolist(), los, his)]
        with_verdict = signed and kind is None and spec.unit == "ns"
        verdict = noise.verdicts(v, noise_ns, lo, hi).tolist() if with_verdict else None
        out[o] = {"value": val, "interval": iv, "verdict": verdict}
    return out


def _one_side(scn: Scenario, outputs: Sequence[str], labels: Mapping[str, str], noise_ns: float,
              elasticities: bool = False, pair: uncertainty.Linearisation | None = None,
              side: str = "A") -> tuple[tuple, uncertainty.Linearisation | None]:
    """Scenario ``scn``'s answers to ``outputs`` and the linearisation they come from (with the
    elasticities its drivers read, when asked): one propagation for both, or, given the ``pair`` whose
    ``side`` ``scn`` is, that pair's own evaluations of it."""
    if not outputs:
        return (), None
    asked = uncertainty.with_counted(list(outputs))
    lin = (pair.side(side, asked) if pair is not None and not elasticities else
           uncertainty.linearise(scn.params, None, scn.profile, None, asked, elasticities=elasticities))
    iv = uncertainty.physical_intervals(lin, scn.params, scn.profile)
    return answers_of(outputs, lin.value, iv, labels, noise_ns), lin


def _asked(first: Sequence[str], drawn: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *drawn]))


def _split(answers: tuple, n: int, drawn: Sequence[str]) -> tuple[tuple, dict]:
    """The first ``n`` answers (those asked), and the drawn outputs' answers by name."""
    return answers[:n], {x.output: x for x in answers if x.output in drawn}


def answer(a: Scenario, b: Scenario | None = None, outputs: Sequence[str] = (), *, labels: Mapping | None = None,
           noise_ns: float | None = None, differences: Sequence[str] | None = None, page: str = DEFAULT_PAGE,
           with_drivers: bool = True, drawn: Sequence[str] = (),
           pair: uncertainty.Linearisation | None = None) -> Answers:
    """The answers to one question (see the module docstring).

    ``outputs``: scenario A's outputs asked; ``labels``: their labels (default: the schema's);
    ``noise_ns``: one run's sd of ns/packet (default: A's ``noise_ns``); ``differences``: the outputs
    of ``B - A`` (default: those the change moves, :func:`skbmodel.attribution.verdict_outputs`);
    ``drawn``: outputs the page's charts draw of each scenario (:attr:`Answers.drawn`); ``pair``: the
    paired propagation of A and B with elasticities over (at least) every output the differences may be
    (:attr:`skbmodel.question.Question.pair`), read instead of propagating again.
    """
    labels = dict(labels or {})
    outputs = list(dict.fromkeys(outputs))
    nf = float(a.params["noise_ns"] if noise_ns is None else noise_ns)
    ident_a = ProfileIdentity.of(a.profile, float(np.asarray(a.params.get("ghz", a.profile.ghz))))
    if b is None:
        every, lin = _one_side(a, _asked(outputs, drawn), labels, nf, elasticities=with_drivers)
        values, drawn_a = _split(every, len(outputs), drawn)
        why = None
        if with_drivers and outputs:
            why = attribution.of_linearisation(lin, {"A": (a.params, a.profile)})[outputs[0]]
        return Answers(page=page, profile_a=ident_a, values=values, drivers=why,
                       drawn={"a": drawn_a} if drawn else {})
    ident_b = ProfileIdentity.of(b.profile, float(np.asarray(b.params.get("ghz", b.profile.ghz))))
    if differences is None:
        verdict = list(schema.VERDICT_OUTPUTS)
        if pair is not None:
            ea, eb = ({o: pair.sides[side][o] for o in verdict} for side in ("A", "B"))
        else:
            ea, eb = a.evaluate(verdict), b.evaluate(verdict)
        differences = attribution.verdict_outputs(a.params, b.params, ea, eb)
    differences = list(differences)
    every, _ = _one_side(a, _asked([*outputs, *differences], drawn), labels, nf, pair=pair, side="A")
    values, drawn_a = _split(every, len(outputs), drawn)
    a_values = tuple(next(x for x in every if x.output == o) for o in differences)
    diffs: list[Difference] = []
    every_b, _ = _one_side(b, _asked(differences, drawn), {}, nf, pair=pair, side="B")
    b_values, drawn_b = _split(every_b, len(differences), drawn)
    if differences:
        lin = pair.only(differences) if pair is not None else uncertainty.linearise(
            a.params, b.params, a.profile, b.profile, differences, elasticities=with_drivers)
        delta, div = lin.value, lin.intervals()
        va, vb = lin.sides["A"], lin.sides["B"]
        why = (attribution.of_linearisation(lin, {"A": (a.params, a.profile), "B": (b.params, b.profile)})
               if with_drivers else {})
        for o in differences:
            spec = schema.BY_NAME[o]
            d = float(np.asarray(delta[o]))
            lo, hi = (float(np.asarray(x)) for x in div[o])
            verdict = noise.verdict(d, nf, lo, hi) if spec.unit == "ns" else None
            runs = None
            if d != 0 and spec.per_packet and verdict not in (None, noise.VERDICT_UNSURE):
                runs = int(noise.runs_needed(d, nf))
            diffs.append(Difference(o, spec.label, spec.unit, "difference", d, lo, hi, verdict,
                                    a=float(np.asarray(va[o])), b=float(np.asarray(vb[o])), noise_ns=nf, runs=runs,
                                    drivers=why.get(o)))
    return Answers(page=page, profile_a=ident_a, values=values, profile_b=ident_b, b_values=b_values,
                   a_values=a_values, differences=tuple(diffs), has_b=True,
                   drawn={"a": drawn_a, "b": drawn_b} if drawn else {})


def every_difference(q: Question) -> list[dict]:
    """Every model output of the Compare page's question ``q`` for scenario A and B, the difference, its
    per-packet time and rate form, and whether it is measurable against A's noise floor (``noise_ns``) and
    how many runs it needs: the A/B table, from the question's one paired propagation (:attr:`Question.pair`).

    * ns outputs: ``delta_ns = B - A``; ``delta_mpps = 1e3/B - 1e3/A``.
    * Mpps outputs: ``delta_mpps = B - A``; ``delta_ns = 1e3/B - 1e3/A`` (time per packet).
    * cycles outputs: ``delta_ns`` converts each side with its own clock.
    * other units (objects, Krps, %, runs, fraction): no per-packet form.

    ``delta_lo``/``delta_hi``: the paired 90 % interval of ``delta`` (the output's own unit); for the outputs
    the verdict is about, the answer's (:attr:`Answers.differences`); ``verdict`` is one of
    :data:`skbmodel.physics.noise.VERDICTS` where there is a per-packet form, else "—".  ``moves``: whether
    the change moves the output at all.  ``runs_needed`` only where it means something: a path's
    per-packet output (:data:`skbmodel.attribution.PER_PACKET_OUTPUTS`, what ``noise_ns`` is the noise
    of) that moves, and whose sign the model is sure of or that is below the noise floor.
    """
    a, b = q.pair.sides["A"], q.pair.sides["B"]
    div = q.pair_intervals
    ghz_a, ghz_b = float(q.a.params["ghz"]), float(q.b.params["ghz"])
    told = {d.output: d for d in of_question(q).differences}
    nf = float(q.a.params["noise_ns"])
    rows = []
    for k, unit in schema.OUTPUT_UNITS.items():
        va, vb = float(np.asarray(a[k])), float(np.asarray(b[k]))
        d_ns = d_mpps = None
        with np.errstate(divide="ignore", invalid="ignore"):
            if unit == "ns" and k != "noise.floor_ns":
                d_ns = vb - va
                d_mpps = float(units.ns_to_mpps(vb) - units.ns_to_mpps(va)) if va > 0 and vb > 0 else None
            elif unit == "Mpps":
                d_mpps = vb - va
                d_ns = float(units.mpps_to_ns(vb) - units.mpps_to_ns(va)) if va > 0 and vb > 0 else None
            elif unit == "cycles":
                d_ns = float(units.cycles_to_ns(vb, ghz_b) - units.cycles_to_ns(va, ghz_a))
        if d_ns is not None and not np.isfinite(d_ns):
            d_ns = None
        lo, hi = (float(np.asarray(x)) for x in div[k])
        verdict, runs = "—", None
        if d_ns is not None:
            verdict = noise.verdict(d_ns, nf, lo, hi)
            if d_ns != 0 and k in attribution.PER_PACKET_OUTPUTS and verdict != noise.VERDICT_UNSURE:
                runs = int(noise.runs_needed(d_ns, nf))
        if k in told:  # the outputs the verdict is about: the one answer every surface gives
            t = told[k]
            lo, hi, verdict, runs = t.lo, t.hi, t.verdict or verdict, t.runs
        rows.append(dict(output=k, unit=unit, A=va, B=vb, delta=vb - va, delta_lo=lo, delta_hi=hi, delta_ns=d_ns,
                         delta_mpps=d_mpps, verdict=verdict, runs_needed=runs, moves=vb != va))
    return rows


#: The Design page's sweep (:func:`design_sweep`): B's cost and the paired B − A of it (beside A's outputs under
#: their names), and the prefix of a stage of the rest of path in a side's breakdown (``"a:stage:<id>"``)
B_COST, AB_DELTA, AB_VERDICT = "b:path.ns_per_packet", "ab:path.ns_per_packet", "ab:verdict"
STAGE = "stage:"


def design_sweep(q: Question, key: str, values: np.ndarray, outputs) -> tuple[dict, dict]:
    """The Design page's question along one of composition A's stage sizes ``key`` (:class:`Question` ``q``
    on that page: A the composition, B its comparison, composed once): A's ``outputs``, A's and B's cost
    components (``"a:<component>"``, ``"b:<component>"``, the rest's stages ``"a:stage:<id>"``), B's cost
    (:data:`B_COST`) and the paired ``B - A`` (:data:`AB_DELTA`, :func:`skbmodel.uncertainty.delta_intervals`)
    with its verdict (:data:`AB_VERDICT`), each along ``values``.  B does not read A's stage sizes."""
    pa = {**q.a.params, key: values}
    prof = q.a.profile
    # B at each of the values too (its clock as an array): the pairing takes A and B of one shape
    pb = {**q.b.params, "ghz": np.full(len(values), float(q.b.params.get("ghz") or prof.ghz))}
    outs = sorted({*outputs, "path.ns_per_packet", "path.mpps", "budget.ns_per_packet"})
    vout, viv = uncertainty.evaluate_with_intervals(pa, prof, outs)
    vb, ib = uncertainty.evaluate_with_intervals(pb, prof, ["path.ns_per_packet"])
    d, div = uncertainty.delta_intervals(pa, pb, prof, prof, ["path.ns_per_packet"])
    vout, viv = dict(vout), dict(viv)
    vout[B_COST], viv[B_COST] = vb["path.ns_per_packet"], ib["path.ns_per_packet"]
    vout[AB_DELTA], viv[AB_DELTA] = d["path.ns_per_packet"], div["path.ns_per_packet"]
    vout[AB_VERDICT] = noise.verdicts(vout[AB_DELTA], float(pa["noise_ns"]), *viv[AB_DELTA]).tolist()
    for side, p in (("a", pa), ("b", pb)):
        split = perfprofile.breakdown_stages_ns(p, prof)
        vout.update({f"{side}:{c}": v for c, v in split["parts"].items()})
        vout.update({f"{side}:{STAGE}{s}": v for s, v in split["stages"].items()})
    return vout, viv


def headline(q: Question, which: str = "a") -> float | None:
    """What a share link records as ``h``: the page's headline output (:attr:`skbmodel.links.pages.Page.headline`)
    of scenario ``which``; for A the first number of its answer (:attr:`Answers.values`), which the page shows
    first; B's, or A's where the answer has no numbers (a refused placement), that scenario's evaluation.
    None on a page without one."""
    spec = BY_SLUG[q.page].headline
    if spec is None:
        return None
    output = spec[0]
    if which == "a":
        res = of_question(q)
        if res.values and res.values[0].output == output:
            return res.values[0].value
    return float(np.asarray(q.scenario(which).evaluate([output])[output]))


def headline_value(state: Mapping, which: str = "a", version: str | None = None) -> float | None:
    """The page's headline output for scenario ``which`` of ``state`` (None for a page without one): the
    answer's (:func:`headline`), as a link opened or made reads it.

    ``version``: the profile version to use (default: the state's ``pv``/``b_pv``, else the current).
    Never raises (None when the state cannot be evaluated).
    """
    if versions.HEADLINES.get(state.get("page", DEFAULT_PAGE)) is None:
        return None
    try:
        st = dict(state)
        if version:
            own = "b" if which != "a" and sk_state.own_profile(state) else "a"
            st[sk_state.key_of("pv", own)] = version
        return headline(Question.of_state(st), which)
    except Exception:  # noqa: BLE001 - a link's state that cannot be evaluated has no headline
        return None


def stamped(state: Mapping) -> dict:
    """``state`` with the versions its share link records.

    A link's provenance that differs from this code (:func:`skbmodel.links.versions.provenance_differs`) is
    kept, so that the link still says what its author saw; otherwise the state gets today's model version and
    the headline of its answer (none on a page without one).
    """
    out = dict(state)
    now = headline_value(out)
    if versions.provenance_differs(out, now):
        return out
    out.pop("mv", None)
    out.pop("h", None)
    if now is not None:
        out["h"] = now
    return out


def share_query(state: Mapping, keys=None) -> str:
    """The long query of a share link: :func:`skbmodel.links.versions.link_query` of the :func:`stamped` state."""
    return versions.link_query(stamped(state), keys)


def identity(scn: Scenario) -> ProfileIdentity:
    """The identity of the profile a scenario runs on (no number computed)."""
    return ProfileIdentity.of(scn.profile, float(np.asarray(scn.params.get("ghz", scn.profile.ghz))))


def clear_caches() -> None:
    """Forget every question and answer (a benchmark's cold start; the profiles' relevance probes, once per
    process, stay: :func:`skbmodel.constant_sets.clear_cache` forgets them)."""
    _CACHE.clear()
    question.clear_cache()


def of_state(state: Mapping, drivers: bool = False) -> Answers:
    """The answers of a dashboard state's question (:meth:`skbmodel.question.Question.of_state`)."""
    return of_question(Question.of_state(state), drivers)


#: the frame size the path bases were measured at (seed 003, the xdp-project runs: 64-byte frames)
CALIBRATION_FRAME_BYTES = 64


def wire_note(params: Mapping) -> str | None:
    """What a scenario's frame size means for its numbers (one line), or None at the calibration's 64 bytes:
    every rate of a path fed from the wire stops at the line rate (:func:`skbmodel.physics.budget.line_rate_mpps`),
    and the per-byte work a larger frame brings is not priced."""
    frame = float(params.get("frame_bytes", CALIBRATION_FRAME_BYTES))
    if frame <= CALIBRATION_FRAME_BYTES:
        return None
    link = float(params.get("link_gbps", 10.0))
    line = float(budget.line_rate_mpps(link, frame))
    return (f"At {frame:g}-byte frames the {link:g} Gbit/s link carries {line:.3g} Mpps, and no rate from the wire "
            "exceeds it. The model prices the work per packet measured with 64-byte frames; the work per byte of a "
            "larger frame is left out: the NIC's DMA and the CPU's cache misses over the payload, copying it "
            "(a socket read, an skb linearised), checksums over it, a page_pool page of higher order or "
            "fragments, and multi-buffer XDP (xdp_frags) for frames above one page.")


def of_question(q: Question, drivers: bool = False) -> Answers:
    """The answers of a question (its page, A and, where the page shows one, B).

    ``drivers``: also what the headline of a page without B rests on (B's differences always carry theirs).
    Cached per question: the page's metrics, the text block and the report of one view ask once.
    """
    key = (q.key, drivers)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _of_question(q, drivers)
        notes = tuple(dict.fromkeys(n for s in (q.compare_a, q.b) if s is not None
                                    for n in [wire_note(s.params)] if n))
        if notes:
            hit = dataclasses.replace(hit, notes=notes)
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = hit
    return hit


def _of_question(q: Question, drivers: bool) -> Answers:
    page, a = q.page, q.a
    spec = BY_SLUG[page]
    outs = [o for o, _ in spec.summary]
    labels = dict(spec.summary)
    if page == "design":
        sa, sb = q.a, q.b
        pa, pb = sa.params, sb.params
        bad_a = composer.problem_text(pa)
        bad_a = (bad_a and f"the composition makes no sense ({bad_a})") or q.refusal("a")
        bad_b = (composer.problem_text(pb) if pb.get("path") == "design" else None) or q.refusal("b")
        nf = float(pa["noise_ns"])
        if bad_a:  # no numbers; the charts still draw what each side's composition gives
            drawn = {s: _split(_one_side(x, spec.drawn, {}, nf)[0], 0, spec.drawn)[1]
                     for s, x in (("a", sa), ("b", sb))}
            return Answers(page=page, profile_a=ProfileIdentity.of(a.profile, float(pa["ghz"])), problem=bad_a,
                           has_b=True, drawn=drawn)
        if bad_b:
            res = answer(sa, None, outs, labels=labels, page=page, with_drivers=drivers, drawn=spec.drawn)
            drawn_b = _split(_one_side(sb, spec.drawn, {}, nf)[0], 0, spec.drawn)[1]
            return dataclasses.replace(res, problem_b=bad_b, has_b=True, drawn={**res.drawn, "b": drawn_b})
        return answer(sa, sb, outs, labels=labels, page=page, differences=["path.ns_per_packet", "path.mpps"],
                      drawn=spec.drawn)
    if page == "validation":
        return Answers(page=page, profile_a=ProfileIdentity.of(a.profile, float(a.params["ghz"])))
    bad = None
    uses_path = any(o.startswith("path.") for o in outs)  # the page's numbers are of A's chosen path
    if uses_path and a.params.get("path") == "design":
        bad = composer.problem_text(a.params)
        bad = bad and f"the composition makes no sense ({bad})"
    bad = bad or q.refusal("a")
    if not bad and spec.has_b and q.refusal("b"):  # the answer is about B - A: no numbers without B's
        bad = f"B: {q.refusal('b')}"
    if bad:
        return Answers(page=page, profile_a=ProfileIdentity.of(a.profile, float(a.params["ghz"])), problem=bad,
                       has_b=spec.has_b)
    if spec.has_b:
        return answer(a, q.b, outs, labels=labels, page=page, pair=q.pair)
    return answer(a, None, outs, labels=labels, page=page, with_drivers=drivers)
