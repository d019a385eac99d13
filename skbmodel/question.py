"""One question, resolved once: the page, scenario A, and where the page compares, scenario B.

A dashboard state (the link's flat keys) asks a question; :meth:`Question.of_state` resolves it once: A's
and B's parameters and profiles (:class:`skbmodel.scenario.Scenario`; on the Design page B is the
comparison path in A's scenario, composed here and nowhere else), the page's outputs and their labels, what
its charts draw.  The entry points ask it (the page's start, ``eval``, ``patch``, ``export``, the report) and
hand it down: every surface of one view (the page's metrics and tables, the charts, the live control, the
text block) renders the same object, read as its state where it needs a display key, and reads its
scenarios from it.  Only this module and the link codec read a scenario from flat keys (:func:`scenario_of`).

On a page that compares A with B the question also holds the one paired propagation of every output
(:attr:`Question.pair`: values of both sides, ``B - A`` with its interval, the elasticities the drivers
read): the A/B table, the delta chart and the answer's differences all read it.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from . import composer, uncertainty
from .links import state as sk_state
from . import model
from .links.pages import BY_SLUG, DEFAULT_PAGE
from .machine import custom
from .machine.profile import ProfileError
from .scenario import Scenario

_CACHE: dict[tuple, Question] = {}
_CACHE_MAX = 32


class ProfileFileError(ValueError):
    """A ``--profile`` file that cannot be read, or is no profile a question can run on."""


def with_profile_file(state: Mapping, path: str, given=()) -> dict:
    """``state`` asking its question on the profile of a file (``--profile FILE.toml``: a derived, fitted or
    edited profile that inherits a shipped one), as the dashboard's upload does: the state's custom profile
    (``prof``, on today's version of its base), its base as ``cpu``, its clock unless ``given`` (the keys the
    user gave) holds ``ghz``, and the noise floor it measured.  Every answer, the text block, the exports and
    the share link then run on it and name it.  Raises :class:`ProfileFileError`."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ProfileFileError(f"--profile {path}: cannot read it ({e.__class__.__name__})") from None
    try:
        prof = custom.load_profile_text(text, origin=path)  # the checks an uploaded profile gets
        shipped = _shipped_twin(text, prof)
        if shipped is not None:  # a copy of a shipped profile is that profile: its id, version, kernels, link
            out = {k: v for k, v in state.items() if k not in ("prof", "pv")}
            out["cpu"] = shipped.id
            if "ghz" not in given:
                out["ghz"] = shipped.ghz
            return out
        return sk_state.with_custom_profile(state, prof, keep=set(given))
    except (custom.ProfileLinkError, ProfileError) as e:
        raise ProfileFileError(str(e)) from None


def _shipped_twin(text: str, prof):
    """The shipped profile a profile file is a copy of (the id it states, every resolved constant the same
    value, the same kernels and topology), or None."""
    import tomllib
    from .machine.profile import available_profiles, load_profile
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    pid = str(doc.get("id", ""))
    if pid not in available_profiles():
        return None
    shipped = load_profile(pid)
    kernels = tuple(str(k) for k in doc.get("kernels", shipped.kernels))  # the file's own, not its base's
    same = shipped.values() == prof.values() and kernels == tuple(shipped.kernels)
    return shipped if same else None


def scenario_of(state: Mapping, which: str = "a") -> Scenario:
    """Scenario ``"a"`` or ``"b"`` of a decoded state (B: A plus B's overrides, on B's profile or A's; a custom
    profile or an archived version included): the one reading of a scenario from a link's flat keys."""
    return Scenario(MappingProxyType(sk_state.scenario(state, which)), sk_state.profile_for(state, which))


class _shared:
    """A property computed once per question and shared by every view of it (:meth:`Question.viewed_as`): the
    same resolution read with another state's display keys computes nothing again."""

    def __init__(self, fn):
        self.fn, self.name = fn, fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, q, owner=None):
        if q is None:
            return self
        memo = q._memo
        if self.name not in memo:
            memo[self.name] = self.fn(q)
        return memo[self.name]


def clear_cache() -> None:
    """Forget every resolved question."""
    _CACHE.clear()


def state_key(state: Mapping) -> tuple:
    """What of a state decides its question: the model parameters of A and B, the profiles and their versions,
    and the page."""
    return tuple(sorted((k, str(v)) for k, v in state.items()
                        if k in sk_state.PARAMS or k in sk_state.PROFILE_KEYS or k in sk_state.PV_KEYS))


@dataclasses.dataclass(frozen=True, eq=False)
class Question(Mapping):
    """A page's question: scenario A, and scenario B where the page compares (else None).

    Read as a mapping it is the state it was asked with (what a surface reads beyond the question: the open
    chart, the grid's axes, a link's provenance), so a surface takes the question alone."""

    page: str
    a: Scenario
    b: Scenario | None
    #: the decoded state it was asked with (read-only)
    state: Mapping
    #: what is computed once per question (:class:`_shared`), shared by its views
    _memo: dict = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def of_state(cls, state: Mapping) -> Question:
        """The question of a decoded state, resolved once per question (cached on :func:`state_key`); read with
        ``state``'s own keys."""
        key = state_key(state)
        hit = _CACHE.get(key)
        if hit is None:
            hit = cls._resolve(MappingProxyType(dict(state)))
            if len(_CACHE) >= _CACHE_MAX:
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = hit
        return hit.viewed_as(state)

    def viewed_as(self, state: Mapping) -> Question:
        """This question read with ``state``'s keys (the same model parameters, profiles and page: what is not
        the question may differ); nothing is resolved or computed again."""
        if state is self.state or dict(state) == dict(self.state):
            return self
        return dataclasses.replace(self, state=MappingProxyType(dict(state)))

    def on_page(self, page: str) -> Question:
        """The question the same state asks on ``page`` (itself on its own page): what a surface of another
        page draws of it (the report's and the export's figures of every page)."""
        return self if page == self.page else Question.of_state({**self.state, "page": page})

    def __getitem__(self, key):
        return self.state[key]

    def __iter__(self) -> Iterator:
        return iter(self.state)

    def __len__(self) -> int:
        return len(self.state)

    @classmethod
    def _resolve(cls, state: Mapping) -> Question:
        page = state.get("page") or DEFAULT_PAGE
        a = scenario_of(state, "a")
        if page == "design":  # B: the comparison path (or a second composition) in A's scenario
            pa, pb = composer.compare_params(a.params, sk_state.b_overrides(state))
            return cls(page, Scenario.from_params(pa, a.profile), Scenario.from_params(pb, a.profile), state)
        return cls(page, a, scenario_of(state, "b") if BY_SLUG[page].has_b else None, state)

    @property
    def key(self) -> tuple:
        return state_key(self.state)

    @_shared
    def compare_a(self) -> Scenario:
        """Scenario A as the state gives it (on the Design page :attr:`a` is its composition)."""
        return self.a if self.page != "design" else scenario_of(self.state, "a")

    @_shared
    def compare_b(self) -> Scenario:
        """Scenario B as the Compare page reads it (A plus B's overrides), on any page."""
        return self.b if self.page != "design" and self.b is not None else scenario_of(self.state, "b")

    def scenario(self, which: str) -> Scenario:
        """Scenario ``"a"`` or ``"b"`` as the state gives them (B: A plus B's overrides), on any page."""
        return self.compare_a if which == "a" else self.compare_b

    def refusal(self, which: str = "a") -> str | None:
        """Why scenario ``which`` has no numbers on this page because its machine lacks the placement it asks
        for (:func:`placement_refused`), or None.  Every surface asks the question, so none answers it."""
        return self._refusals[which]

    @_shared
    def _refusals(self) -> dict:
        page = self.page
        if page == "design":  # A is the composition; B the comparison path in A's scenario
            return {"a": placement_refused(self.a, page), "b": placement_refused(self.b, page)}
        return {"a": placement_refused(self.a, page),
                "b": placement_refused(self.b, page) if self.b is not None else None}

    @_shared
    def pair(self) -> uncertainty.Linearisation:
        """The paired propagation of every output of A and the Compare page's B, with elasticities: one
        vectorised evaluation per side."""
        a, b = self.compare_a, self.compare_b
        return uncertainty.linearise(a.params, b.params, a.profile, b.profile, None, elasticities=True)

    def own(self, which: str, outputs) -> tuple[dict, dict]:
        """``(values, intervals)`` of scenario ``which``'s ``outputs`` with its own 90 % intervals (what
        :meth:`Scenario.with_intervals` gives), read from :attr:`pair`'s evaluations of that side."""
        scn = self.scenario(which)
        lin = self.pair.side(which.upper(), uncertainty.with_counted(list(outputs)))
        iv = uncertainty.physical_intervals(lin, scn.params, scn.profile)
        return {o: lin.value[o] for o in outputs}, {o: iv[o] for o in outputs}

    @_shared
    def pair_intervals(self) -> dict:
        """``{output: (lo, hi)}`` of every ``B - A`` of :attr:`pair`."""
        return self.pair.intervals()


def placement_refused(scn: Scenario, page: str) -> str | None:
    """Why a scenario's placement cannot be evaluated on its machine (one line), or None: the level ``place``
    is one the machine lacks, or a composition hands off to another node of a one-node machine
    (:func:`skbmodel.model.placement_problem`).  Asked on every page with numbers: a state that asks for a
    level the machine does not have has no answer anywhere (a Compare verdict follows what changed into
    cpumap whatever A's path)."""
    if page == "validation":
        return None
    params = scn.params
    hand = composer.resolved(params)["d_hand"] if params.get("path") == "design" else None
    return model.placement_problem(scn.profile, params.get("place", "same_l3"), hand)
