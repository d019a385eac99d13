"""A perf profile against the model: shares per stage, the model's share beside them, and the stages of the rest.

Three steps, each pure:

1. :func:`stage_shares`: a parsed profile (:mod:`.parsers.perf`) mapped symbol by symbol to the stages of
   :mod:`.kstages`; what the map does not place is ``None`` (unmapped) and listed with its share.
2. :func:`rest_stages`: a path's fitted "rest of path" (:data:`skbmodel.physics.rest.CONTENTS`) split into
   stages by a published profile of that path (``skbmodel/data/rest-stages.toml``).  A stage the model costs
   apart from the rest (a :class:`~.kstages.Stage` whose component is not the rest and not one the path's rest
   holds) is not part of it.  Each stage inside is, with the profile's scale,

   * ``time`` (the run's CPU is modelled): :math:`t_s = p_s / 100 \\cdot T \\cdot R / R_{run}` with
     :math:`T = 10^9 / \\text{rate}` the run's per-packet time [ns], :math:`p_s` the stage's share [%],
     :math:`R` the model's rest on the CPU asked and :math:`R_{run}` on the run's CPU [ns]: on the run's CPU a
     stage is its measured time, and another CPU takes the same fraction of its rest (as the model carries
     the rest itself);
   * ``share``: :math:`t_s = R \\cdot p_s / (100 - \\sum_{o} p_o)` with :math:`R` the model's rest [ns] and
     :math:`p_o` the shares of the stages the model costs apart;

   and if the named stages exceed the rest they are scaled down to it.  What stays is the stage "unnamed", so
   the stages sum to the rest.  cpumap has a rest per CPU (the destination's, the path's limit as modelled, and
   the source's, ``"cpumap:source"``), each named by a profile of that CPU; a run without a perf report of its
   own can be composed from a profile of the same setup less one stage and the two rates
   (:func:`compose_by_rate`).  Reference: the profiles' sources in rest-stages.toml and tests/data/perf/.
3. :func:`compare`: the run's share per row (a model component costed apart, or a stage of the rest) beside
   the model's share of the same path and CPU, the disagreements ranked with a reason each.
"""
from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from .. import folders, model
from ..params import REST_STAGE_OPTIONS, rest_stage_fractions
from ..physics import rest as sk_rest
from ..schema import COMPONENTS
from . import kstages
from .parsers import perf

TABLE = folders.DATA_DIR / "rest-stages.toml"
#: the paths whose rest is a fitted constant (skbmodel.physics.rest.CONTENTS)
PATHS = tuple(sk_rest.CONTENTS)
#: the rests a published profile can name: each path's (cpumap: its destination CPU's, the path's limit as
#: modelled), and the cpumap source CPU's, "cpumap:source" (the limit when the destination drops or is faster)
REST_KEYS = ("veth", "cpumap", "cpumap:source", "xdp_pass", "kfree_skb_list")
#: what the cpumap source CPU costs apart from its rest (skbmodel.model.cpumap_breakdown_ns: the RX page; the
#: skb, its zeroing and free and the cross-CPU transfer are the destination's; a test keeps the two equal)
SOURCE_APART = ("page alloc/recycle",)
UNNAMED = "unnamed"
#: the label of what no published profile names in a rest; the stages' own labels are kernel-symbols.toml's names
UNNAMED_LABEL = "rest, unnamed"
#: a stage id's option of the Design page's ``d_stage``
_OPTION_OF = {sid: o for o, sid in REST_STAGE_OPTIONS.items()}


@dataclasses.dataclass(frozen=True)
class Published:
    """One published profile of a modelled path, read into stage shares (rest-stages.toml)."""
    id: str
    path: str
    default: bool
    source: str
    cpu: str
    cpu_id: str         # the model's profile of the run's CPU ("" when none)
    kernel: str
    rate_pps: float     # the same run's rate [packets/s]
    rate_where: str
    scale: str          # "time" or "share" (the module's formulas)
    side: str           # the cpumap CPU ("source", "destination") or ""
    cpu_column: str     # for a report of several CPUs: the CPU whose entries the shares are ("" for all)
    listed_pct: float   # the samples the quoted lines hold [%]
    note: str
    shares: Mapping[str, float]   # stage id (or "unmapped") -> share of the run's samples [%]
    #: a run with no perf profile of its own, composed from a profile of the same setup without one stage
    #: (:func:`compose_by_rate`): that profile's id and the stage the two rates separate ("" for a read profile)
    derived_from: str = ""
    derived_stage: str = ""
    #: the saved text the profile reads, where it is another profile's (one report of two CPUs read twice)
    text: str = ""

    @property
    def text_id(self) -> str:
        """The name (without .txt) of the profile's text in tests/data/perf/."""
        return self.text or self.id

    @property
    def derived(self) -> bool:
        return bool(self.derived_from)

    @property
    def run_ns(self) -> float:
        """The run's per-packet time [ns]: 1e9 / rate."""
        return 1e9 / self.rate_pps


def compose_by_rate(base: Published, rate_pps: float, stage: str) -> tuple[dict[str, float], float]:
    """The stage shares [%] and listed share [%] of a run at ``rate_pps`` that is ``base``'s setup plus one
    ``stage`` (``base`` measured without it, on the same CPU and kernel): the two per-packet times differ by the
    stage, :math:`t_{stage} = 10^9/\\text{rate} - 10^9/\\text{rate}_{base}` [ns], and every stage of ``base``
    keeps its nanoseconds, :math:`p'_s = p_s \\cdot T_{base} / T` with :math:`T = 10^9/\\text{rate}`.
    Reference: the rates and the profile of one page (rest-stages.toml's ``derived_from``)."""
    run_ns = 1e9 / rate_pps
    if run_ns <= base.run_ns:
        raise ValueError(f"{base.id}: the composed run must be slower than the run without the stage")
    keep = base.run_ns / run_ns
    shares = {s: v * keep for s, v in base.shares.items()}
    added = 100.0 * (run_ns - base.run_ns) / run_ns
    shares[stage] = shares.get(stage, 0.0) + added
    return dict(sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))), base.listed_pct * keep + added


@lru_cache(maxsize=1)
def published() -> tuple[Published, ...]:
    """Every published profile shipped in rest-stages.toml; a ``derived_from`` row's shares are composed
    from its base profile and the two rates (:func:`compose_by_rate`)."""
    doc = tomllib.loads(TABLE.read_text(encoding="utf-8"))
    read = {p["id"]: Published(**{**p, "shares": dict(p["shares"])}) for p in doc["profile"] if "shares" in p}
    out = []
    for p in doc["profile"]:
        if "shares" in p:
            out.append(read[p["id"]])
            continue
        shares, listed = compose_by_rate(read[p["derived_from"]], p["rate_pps"], p["derived_stage"])
        out.append(Published(**{**p, "shares": shares, "listed_pct": listed}))
    out = tuple(out)
    stages = set(kstages.load().stages) | {"unmapped"}
    for p in out:
        if p.path not in PATHS or p.scale not in ("time", "share") or set(p.shares) - stages:
            raise ValueError(f"{TABLE.name}: profile {p.id}: path, scale or stage names are not known")
    return out


def default_for(path: str, side: str = "") -> Published | None:
    """The profile that names ``path``'s rest (``None``: no published profile of the path).  ``path`` may be a
    :data:`REST_KEYS` key (``"cpumap:source"``); cpumap's rest is its destination CPU's unless ``side`` says."""
    path, _, key_side = path.partition(":")
    want = side or key_side or ("destination" if path == "cpumap" else "")
    return next((p for p in published() if p.path == path and p.default and p.side == want), None)


def by_id(pid: str) -> Published:
    for p in published():
        if p.id == pid:
            return p
    raise KeyError(pid)


# ---------------------------------------------------------------- 1. stages of a profile
def symbol_stages(profile: perf.Profile) -> list[tuple[str, str | None, float]]:
    """``[(symbol, stage or None, share [%])]``, largest share first.  A symbol perf truncated takes the stage
    of the map's exact names it begins, when they agree on one."""
    out = []
    names = [(n, r.stage) for r in kstages.load().rows for n in r.names]
    truncated = {e.symbol for e in profile.entries if e.truncated}
    for sym, share in profile.shares().items():
        stage = kstages.stage_of(sym)
        if stage is None and sym in truncated:
            hits = {s for n, s in names if n.startswith(kstages.clean(sym))}
            stage = hits.pop() if len(hits) == 1 else None
        out.append((sym, stage, share))
    return out


def stage_shares(profile: perf.Profile) -> dict[str, float]:
    """The run's share per stage id [% of its samples]; unmapped symbols under ``"unmapped"``."""
    out: dict[str, float] = {}
    for _, stage, share in symbol_stages(profile):
        key = stage or "unmapped"
        out[key] = out.get(key, 0.0) + share
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def outside_rest(path: str, side: str = "") -> set[str]:
    """The stages the model costs apart from ``path``'s rest: their component is not the rest and not one the
    path's rest holds (:attr:`skbmodel.physics.rest.Rest.holds`); on the cpumap source CPU, those of
    :data:`SOURCE_APART` only."""
    holds = set(sk_rest.CONTENTS[path].holds)
    source = path == "cpumap" and side == "source"
    return {s.id for s in kstages.load().stages.values()
            if s.component != "rest of path" and s.component not in holds
            and (not source or s.component in SOURCE_APART)}


# ---------------------------------------------------------------- 2. the rest in stages
def split_rest(rest_ns, shares: Mapping[str, float], outside: set[str], *, scale: str, run_ns: float = 0.0,
               rest_run_ns=1.0) -> dict[str, np.ndarray]:
    """The rest ``rest_ns`` [ns] (array or scalar) in stages [ns], ``{stage: ns, ..., "unnamed": ns}``: the
    module's formulas for ``scale`` ``"time"`` (the run's per-packet ``run_ns`` and the model's rest on the run's
    CPU ``rest_run_ns`` [ns]) or ``"share"``.  Stages in ``outside`` and unmapped symbols are not named; the
    values sum to ``rest_ns``."""
    rest = np.asarray(rest_ns, dtype=float)
    inside = {s: p for s, p in shares.items() if s not in outside and s != "unmapped" and p > 0}
    if scale == "time":
        named = {s: rest * (p / 100.0 * run_ns / np.asarray(rest_run_ns, dtype=float)) for s, p in inside.items()}
    else:
        covered = 100.0 - sum(p for s, p in shares.items() if s in outside)
        named = {s: rest * p / covered for s, p in inside.items()}
    total = sum(named.values()) if named else np.zeros_like(rest)
    # a run whose named stages exceed the model's rest (a slower kernel, another NIC) names all of it
    fit = np.where(total > rest, rest / np.where(total > 0, total, 1.0), 1.0)
    out = {s: v * fit for s, v in named.items()}
    out[UNNAMED] = rest - total * fit
    return out


def _params(path: str, cpu: str | None) -> dict:
    params = model.default_params(cpu)
    params["path"] = path
    return params


def model_parts_ns(path: str, cpu: str | None = None, side: str = "") -> dict[str, np.ndarray]:
    """The model's breakdown of ``path`` on ``cpu`` [ns] (cpumap: the ``side`` CPU's, else the limiting one)."""
    params = _params(path, cpu)
    if path == "cpumap" and side:
        return model.cpumap_breakdown_ns(params)[side]
    return model.breakdown_ns(params)


def rest_stages(path: str, cpu: str | None = None, profile: Published | None = None) -> dict:
    """``path``'s rest on ``cpu`` (default: the default profile) in stages named by ``profile`` (default: the
    path's :func:`default_for`): ``{"rest_ns", "stages": {stage: ns}, "unnamed_ns", "named_pct_of_path",
    "profile": Published | None}``.  With no published profile the whole rest is unnamed."""
    profile = profile if profile is not None else default_for(path)
    parts = model_parts_ns(path, cpu, profile.side if profile else "")
    rest_ns = float(parts["rest of path"])
    total_ns = float(sum(float(v) for v in parts.values()))
    if profile is None:
        stages = {UNNAMED: np.asarray(rest_ns)}
    else:
        rest_run = (float(model_parts_ns(path, profile.cpu_id, profile.side)["rest of path"])
                    if profile.scale == "time" else rest_ns)
        stages = split_rest(rest_ns, profile.shares, outside_rest(path, profile.side), scale=profile.scale,
                            run_ns=profile.run_ns, rest_run_ns=rest_run)
    named = {s: float(v) for s, v in stages.items() if s != UNNAMED}
    apart = total_ns - rest_ns
    return {"path": path, "rest_ns": rest_ns, "total_ns": total_ns, "stages": named,
            "unnamed_ns": float(stages[UNNAMED]), "profile": profile,
            "named_pct_of_path": 100.0 * (apart + sum(named.values())) / total_ns}


# ---------------------------------------------------------------- 3. beside the model
#: why the run can spend more (index 0) or less (index 1) in a row than the model: one line each
_WHY = {
    "skb alloc": ("skb heads one at a time or from a cold slab", "skb heads from the NAPI cache or a warm bulk"),
    "zeroing": ("more bytes cleared (__GFP_ZERO) or a slower rep stos", "fewer bytes cleared (a memset up to tail)"),
    "page alloc/recycle": ("pages reach the page allocator: less recycling", "more page_pool recycling than modelled"),
    "cross-CPU transfer": ("more misses on the frames' first read", "warmer frames (prefetched, fewer lines)"),
    "skb free": ("frees one at a time or in __slab_free's slow path", "frees in bulk or into the NAPI cache"),
    "rest stage": ("heavier than in the rest's profile", "lighter than in the rest's profile"),
    "rest unnamed": ("samples unlisted or not placed by the map", "rest that no published profile names"),
}


def compare(prof: perf.Profile, path: str, cpu: str | None = None, side: str = "") -> dict:
    """The run's share beside the model's for ``path`` on ``cpu``, per row: each model component the path costs
    apart from its rest, then each stage of the rest as :func:`rest_stages` names it, then the rest left
    unnamed.  Shares are of the run's samples and of the model's per-packet time [%]; ``disagreements``
    are the rows by their difference, largest first, each with a reason; ``unmapped`` the symbols the map does
    not place, with their share.  The run's shares are of all its samples: what a quoted top list leaves out
    (100 - listed) is in the row of the unnamed rest with the unmapped symbols."""
    if path not in PATHS:
        raise ValueError(f"path {path!r}: expected one of {', '.join(PATHS)}")
    if path == "cpumap" and not side:
        # the kthread's loop is the destination's; the enqueue alone (and no kthread) is the source's
        kthread = any(kstages.clean(e.symbol) == "cpu_map_kthread_run" for e in prof.entries)
        side = "destination" if kthread else "source"
    sym = symbol_stages(prof)
    shares = stage_shares(prof)
    outside = outside_rest(path, side)
    smap = kstages.load()
    parts = model_parts_ns(path, cpu, side if path == "cpumap" else "")
    total = float(sum(float(v) for v in parts.values()))
    ref = default_for(path, side if path == "cpumap" else "")
    named = rest_stages(path, cpu, ref)
    # the run's stages the model costs apart, by component; the rest's stages (and the components its rest holds)
    run_comp = {c: 0.0 for c in COMPONENTS if c != "rest of path" and float(parts[c]) > 0}
    run_rest: dict[str, float] = {}
    for stage, share in shares.items():
        if stage in outside and smap.stages[stage].component in run_comp:
            run_comp[smap.stages[stage].component] += share
        else:
            run_rest[stage] = run_rest.get(stage, 0.0) + share
    rows = []
    for c, share in run_comp.items():
        rows.append({"row": c, "kind": "component", "run_pct": share,
                     "model_pct": 100.0 * float(parts[c]) / total, "stages": sorted(
                         s for s in shares if s in outside and smap.stages[s].component == c)})
    for stage in sorted(set(run_rest) | set(named["stages"]) - {"unmapped"}, key=lambda s: (-run_rest.get(s, 0.0), s)):
        if stage == "unmapped":
            continue
        model_ns = named["stages"].get(stage)
        rows.append({"row": stage_label(stage), "kind": "rest stage", "stage": stage,
                     "run_pct": run_rest.get(stage, 0.0),
                     "model_pct": None if model_ns is None else 100.0 * model_ns / total})
    rows.append({"row": UNNAMED_LABEL, "kind": "rest unnamed",
                 "run_pct": run_rest.get("unmapped", 0.0) + max(0.0, 100.0 - prof.listed_pct),
                 "model_pct": 100.0 * named["unnamed_ns"] / total})
    ranked = []
    for r in rows:
        if r["model_pct"] is None:
            continue
        d = r["run_pct"] - r["model_pct"]
        why = _WHY[r["row"] if r["kind"] == "component" else r["kind"]][0 if d > 0 else 1]
        ranked.append({"row": r["row"], "diff_pct": d, "why": why})
    ranked.sort(key=lambda x: -abs(x["diff_pct"]))
    return {"path": path, "cpu": cpu or folders.DEFAULT_PROFILE, "side": side, "format": prof.format,
            "listed_pct": prof.listed_pct, "model_total_ns": total, "rest_named_by": ref.id if ref else None,
            "rows": rows, "disagreements": ranked,
            "symbols": [{"symbol": s, "stage": st, "share_pct": p} for s, st, p in sym],
            "unmapped": [{"symbol": s, "share_pct": p} for s, st, p in sym if st is None]}


def guess_path(prof: perf.Profile) -> str:
    """The modelled path a profile most likely is, from its stages: cpumap's kthread or enqueue, then veth's,
    then pktgen and the qdisc, else a NIC driver's XDP_PASS."""
    shares = stage_shares(prof)
    if shares.get("cpumap", 0) > 0:
        return "cpumap"
    if shares.get("veth", 0) > 0:
        return "veth"
    if any(s.startswith(("pktgen", "fq_codel", "kfree_skb_list")) for s in prof.shares()):
        return "kfree_skb_list"
    return "xdp_pass"


def source_of(p: Published) -> str:
    """Who published a profile: its source up to the first space (a page's address, or the list a mail went to),
    without a page's section; profiles from one page or one mail are one source."""
    return p.source.split(" ")[0].split("#")[0]


def held_back(path: str) -> list[dict]:
    """Stage shares of ``path`` predicted from one source's profiles and scored on another's: no share is
    fitted on the profile it is scored on.  Shares are of each profile's listed samples (a quoted top list is
    compared on what it lists), a source's prediction the mean of its profiles.  One row per (predicted from,
    scored on), each named by its profiles' ids, with ``{stage: (predicted, measured)}`` [%] and ``distance``:
    half the sum of the absolute differences [points] (0 when the shares agree, 100 when no stage is shared).
    Profiles of the two cpumap CPUs are compared CPU with CPU."""
    def norm(p: Published) -> dict[str, float]:
        return {s: 100.0 * v / p.listed_pct for s, v in p.shares.items()}

    groups: dict[tuple[str, str], list[Published]] = {}
    for p in published():
        # a profile composed from rates is not a reading of perf: it is not compared
        if p.path == path and not p.derived:
            groups.setdefault((p.side, source_of(p)), []).append(p)
    # a source by the profiles it published
    label = {src: " + ".join(p.id for p in ps) for src, ps in groups.items()}
    mean = {}
    for src, ps in groups.items():
        shares = [norm(p) for p in ps]
        mean[src] = {s: sum(g.get(s, 0.0) for g in shares) / len(shares) for s in set().union(*shares)}
    rows = []
    for a in mean:
        for b in mean:
            if a == b or a[0] != b[0]:
                continue
            stages = sorted(set(mean[a]) | set(mean[b]), key=lambda s: (-mean[b].get(s, 0.0), s))
            pairs = {s: (mean[a].get(s, 0.0), mean[b].get(s, 0.0)) for s in stages}
            rows.append({"path": path, "from": label[a], "on": label[b], "stages": pairs,
                         "distance": 0.5 * sum(abs(x - y) for x, y in pairs.values())})
    return rows


# ---------------------------------------------------------------- 4. a breakdown with the rest in stages
def stage_label(stage: str) -> str:
    """The label of a stage of the rest wherever a breakdown is drawn or printed: the stage's name in
    kernel-symbols.toml, or :data:`UNNAMED_LABEL`."""
    return UNNAMED_LABEL if stage == UNNAMED else kstages.load().stages[stage].name


def profile_source(p: Published | None) -> str:
    """Where a rest's stages come from, in one line: the profile's id, its CPU and kernel."""
    if p is None:
        return "no published perf profile names this rest: all of it is unnamed"
    return f"perf profile {p.id} ({p.cpu.split(' (')[0]}, kernel {p.kernel})"


def describe_stages(path: str) -> str:
    """One line: ``path``'s rest in its named stages, each as % of the rest (:func:`rest_fractions`, the same
    on every CPU), what stays unnamed, and the profile that names them."""
    fr = rest_fractions(path)
    parts = [f"{stage_label(s)} {100 * f:.0f} %" for s, f in fr.items()]
    parts.append(f"{UNNAMED_LABEL} {100 * (1 - sum(fr.values())):.0f} %")
    return f"Its stages ({profile_source(default_for(path))}): " + ", ".join(parts) + "."


def computed_rest_fractions(key: str) -> dict[str, float]:
    """Each named stage's fraction of the rest ``key`` (:data:`REST_KEYS`; :func:`rest_stages` by its default
    profile, divided by the rest), largest first.  The fraction does not depend on the CPU: a ``time`` profile
    names the same fraction of the rest on every CPU, a ``share`` profile its share of the covered samples."""
    ref = default_for(key)
    r = rest_stages(key.partition(":")[0], ref.cpu_id or None, ref) if ref else None
    if r is None or r["rest_ns"] <= 0:
        return {}
    fr = {s: v / r["rest_ns"] for s, v in r["stages"].items() if v > 0}
    return dict(sorted(fr.items(), key=lambda kv: (-kv[1], kv[0])))


def rest_fractions(path: str) -> dict[str, float]:
    """:func:`computed_rest_fractions` as shipped (skbmodel/data/rest-fractions.json, written by
    scripts/rest_fractions.py; a test keeps them equal): the numbers the model and the charts use."""
    return rest_stage_fractions(path)


def _rest_paths(params: Mapping, prof) -> np.ndarray:
    """Per state, the rest (:data:`REST_KEYS`) the breakdown's "rest of path" is: a modelled path's, or the cpumap
    source CPU's where that CPU limits the path (``""``: a rest no profile describes: a custom rest, a cpumap
    whose destination limits it and drops every frame, other paths)."""
    path = np.asarray(params.get("path", "veth")).astype(str)
    d_rest = np.asarray(params.get("d_rest", "from")).astype(str)
    d_from = np.asarray(params.get("d_from", "veth")).astype(str)
    rest_of = np.where(path == "design", np.where(d_rest == "from", d_from, d_rest), path)
    rest_of = np.where(np.isin(rest_of, PATHS), rest_of, "")
    if np.any(rest_of == "cpumap"):
        # the cpumap path's rest is the source CPU's where that CPU limits it, else the destination's: its stack,
        # unless it drops every frame (a rest no profile names)
        sides = model.cpumap_breakdown_ns(params, prof)
        src, dst = (sum(np.asarray(v, dtype=float) for v in sides[s].values()) for s in ("source", "destination"))
        stack = np.asarray(params.get("cpumap_prog", "pass")).astype(str) != "drop"
        cpumap = path == "cpumap"
        rest_of = np.where(cpumap & (src > dst), "cpumap:source", np.where(cpumap & ~stack, "", rest_of))
    return rest_of


def breakdown_stages_ns(params: Mapping, prof=None) -> dict:
    """The chosen path's breakdown [ns] (:func:`skbmodel.model.breakdown_ns`) with its "rest of path" split
    into named stages: ``{"parts": {component: ns}, "stages": {stage id: ns}, "paths": the path each state's
    rest is (:func:`_rest_paths`)}``; ``stages`` holds every stage any state names and :data:`UNNAMED`, and
    sums to ``parts["rest of path"]`` (states broadcast as the model's).  Each stage is its fraction of the
    rest (:func:`rest_fractions`) times the state's rest: the stages split the rest, they do not re-price it;
    a composition that re-prices one (``d_stage`` at ``d_stage_pct`` = k %, :func:`skbmodel.composer.restaged_cycles`)
    has that stage at k % of its named time and the others at theirs: with the rest R and the stage's fraction
    f, the rest before the re-pricing is ``R / (1 - f (1 - k/100))``.
    Labels: :func:`stage_label`; sources: :func:`profile_source` of :func:`default_for` each path."""
    parts = model.breakdown_ns(params, prof)
    rest = np.asarray(parts["rest of path"], dtype=float)
    rest_of = _rest_paths(params, prof)
    # the stage a composition re-prices (its option) and its price [fraction of its named time]
    option = np.where(np.asarray(params.get("path", "veth")).astype(str) == "design",
                      np.asarray(params.get("d_stage", "from")).astype(str), "none")
    k = np.asarray(params.get("d_stage_pct", 100.0), dtype=float) / 100.0
    # in the order of the paths' fractions, largest first: an order the values do not move (a sweep's
    # columns stay the figure's traces)
    stages: dict[str, np.ndarray] = {}
    for path in (p for p in REST_KEYS if np.any(rest_of == p)):  # the rests, not the states
        on = rest_of == path
        fr = rest_fractions(path)
        f_chosen = sum(np.where(option == o, fr.get(sid, 0.0), 0.0) for o, sid in REST_STAGE_OPTIONS.items())
        den = 1.0 - f_chosen * (1.0 - k)
        before = rest * np.where(den > 0, 1.0 / np.where(den > 0, den, 1.0), 0.0)
        for s, f in fr.items():
            price = np.where(option == _OPTION_OF.get(s, ""), k, 1.0)
            stages[s] = stages.get(s, 0.0) + np.where(on, before * f * price, 0.0)
    stages[UNNAMED] = rest - sum(stages.values()) if stages else rest
    return {"parts": parts, "stages": stages, "paths": rest_of}
