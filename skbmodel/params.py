"""The scenario parameters: one :class:`Param` per key, with its type, range, default and choice labels.

The one place a parameter's default or the text shown for a choice is written: the codec
(:mod:`skbmodel.state`), the model's defaults for a partial scenario (:mod:`skbmodel.model`), the sidebar
and the charts read it from here.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import design, page_alloc
from . import profile as _profile

MAX_VALUE_CHARS = 200
#: Scenario B of the A/B comparison uses the keys of scenario A with this prefix.
B_PREFIX = "b_"


@dataclasses.dataclass(frozen=True)
class Param:
    key: str
    label: str
    kind: str  # "int" | "float" | "choice"
    default: object
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""
    step: float | None = None
    labels: tuple[str, ...] = ()  # what the sidebar and the charts show for each of ``choices``

    def label_of(self, value) -> str:
        """The text shown for a choice (the value itself when the parameter has no labels)."""
        if self.labels and value in self.choices:
            return self.labels[self.choices.index(value)]
        return str(value)

    def codes(self, value) -> np.ndarray:
        """The model's integer codes of a choice (the index in ``choices``) for names or codes, scalar
        or array: the model compares small integers, never strings."""
        a = np.asarray(value)
        if a.dtype.kind in "iub":
            return a
        if a.ndim == 0:
            return np.asarray(self.choices.index(str(a)), dtype=np.int8)
        out = np.full(a.shape, -1, dtype=np.int8)
        for i, name in enumerate(self.choices):
            out[a == name] = i
        return out

    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        kind = "an integer" if self.kind == "int" else "a number"
        return f"{kind} in [{_fmt(self.lo)}, {_fmt(self.hi)}]" + (f" {self.unit}" if self.unit else "")

    def parse(self, raw: str):
        """Parse a raw string: returns ``(value, problem)``; ``problem`` is None when valid.

        Out-of-range numbers come back clamped with a problem text; unusable input comes back as
        ``(None, problem)``.
        """
        raw = raw.strip()
        if len(raw) > MAX_VALUE_CHARS:
            return None, f"value too long; expected {self.allowed()}"
        if self.kind == "choice":
            if raw in self.choices:
                return raw, None
            return None, f"{_show(raw)} is not {self.allowed()}"
        try:
            x = float(raw)
        except ValueError:
            return None, f"{_show(raw)} is not {self.allowed()}"
        if not math.isfinite(x):
            return None, f"{_show(raw)} is not {self.allowed()}"
        if self.kind == "int":
            if x != int(x):
                xi = int(round(x))
                return self._clamp(xi, f"{_show(raw)} rounded to {xi}", raw)
            x = int(x)
        return self._clamp(x, None, raw)

    def _clamp(self, x, problem, raw=None):
        lo, hi = self.lo, self.hi
        if x < lo or x > hi:
            y = min(max(x, lo), hi)
            y = int(y) if self.kind == "int" else float(y)
            # quote what the link said ('1e9'), not the parsed number ('1000000000')
            return y, f"{_show(str(x) if raw is None else raw)} outside {self.allowed()}, clamped to {_fmt(y)}"
        return (int(x) if self.kind == "int" else float(x)), problem


def _fmt(x) -> str:
    """Shortest text that parses back to exactly ``x`` (``repr``; ``%g`` kept only 6 digits)."""
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return repr(float(x)) if isinstance(x, float) else str(x)


def _show(raw: str) -> str:
    raw = raw if len(raw) <= 40 else raw[:37] + "..."
    return repr(raw)


#: The modelled paths: the named compositions of :mod:`skbmodel.design`.
PATHS = design.START_PATHS
_PATH_LABELS = ("veth XDP_PASS (veth CPU)", "cpumap (destination CPU)", "XDP_PASS, one CPU",
                "kfree_skb_list drop path (pktgen CPU)")


def _design_label(option: str) -> str:
    """What the Design page shows for a stage option (a modelled path by its path label)."""
    return dict(zip(PATHS, _PATH_LABELS)).get(option) or design.OPTION_LABELS.get(option, option)


#: Parameters of one scenario (A; B uses the same with the ``b_`` prefix).
MODEL_PARAMS: tuple[Param, ...] = (
    Param("cpu", "CPU profile", "choice", _profile.DEFAULT_PROFILE, choices=tuple(_profile.available_profiles())),
    Param("ghz", "Clock (GHz)", "float", None, 0.5, 6.0, unit="GHz", step=0.05),
    Param("bulk", "kmem_cache bulk size (objects)", "int", 16, 1, 256, unit="objects", step=1),
    Param("obj_bytes", "SLUB object size (bytes)", "int", 256, 8, 1 << 20, unit="bytes", step=8),
    Param("zero", "Zeroing method", "choice", "gfp_zero", choices=("memset", "gfp_zero"),
          labels=("memset (rep stos)", "__GFP_ZERO")),
    Param("zero_bytes", "Bytes zeroed by memset (bytes)", "int", 184, 8, 1024, unit="bytes", step=8),
    Param("xdp_batch", "VETH_XDP_BATCH (skbs)", "int", 16, 1, 64, unit="skbs", step=1),
    Param("kfl_bulk", "KFREE_SKB_BULK_SIZE (skbs, 1 = no bulk)", "int", 16, 1, 64, unit="skbs", step=1),
    Param("drop_batch", "fq_codel drop_batch (packets)", "int", 64, 1, 1024, unit="packets", step=1),
    Param("clone_frac", "Cloned skbs in drop list (fraction)", "float", 0.0, 0.0, 1.0, step=0.05),
    Param("pp_recycle", "page_pool recycle ratio (fraction)", "float", 1.0, 0.0, 1.0, step=0.05),
    Param("page_bulk", "page_pool refill from the page allocator, bulk (pages)", "int",
          page_alloc.PP_ALLOC_CACHE_REFILL, 1, 256, unit="pages", step=1),
    Param("numa", "cpumap destination node", "choice", "same", choices=("same", "cross"),
          labels=("same NUMA node", "cross NUMA node")),
    Param("defer_cache", "Same-CPU defer free to NAPI cache (0/1)", "int", 1, 0, 1, step=1),
    Param("link_gbps", "Link speed (Gbit/s)", "float", 10.0, 1.0, 800.0, unit="Gbit/s", step=1.0),
    Param("frame_bytes", "Frame size (bytes, incl. FCS)", "int", 64, 64, 9216, unit="bytes", step=1),
    Param("noise_ns", "Benchmark noise per run (ns/packet)", "float", 2.0, 0.1, 50.0, unit="ns", step=0.1),
    Param("path", "Path shown in the overview", "choice", "veth", choices=PATHS + ("design",),
          labels=_PATH_LABELS + ("composed path (Design page)",)),
    # the composed path of the Design page (skbmodel.design); old links without these keys get the defaults
    *(Param(k, label, kind, default, lo, hi, choices=design.choices_of(k) if kind == "choice" else (),
            labels=tuple(_design_label(o) for o in design.choices_of(k)) if kind == "choice" else (),
            unit=unit, step=step) for k, label, kind, default, lo, hi, unit, step in design.KEYS),
)
MODEL_KEYS = tuple(p.key for p in MODEL_PARAMS)
BY_KEY: dict[str, Param] = {p.key: p for p in MODEL_PARAMS}


#: How the charts are drawn (not the model): one value for the whole view, no ``b_`` twin; kept in the link.
DISPLAY_PARAMS: tuple[Param, ...] = (
    Param("yzero", "Start the y axes at zero (0/1)", "int", 0, 0, 1, step=1),
)
DISPLAY_KEYS = tuple(p.key for p in DISPLAY_PARAMS)
