"""The EPYC 9684X under SRSO safe-RET against the same machine under IBPB: every path's cost and the
microbenchmarks a return thunk moves, at each profile's defaults, as JSON.

    python benchmarks/srso_headlines.py > after.json        # in any checkout: it imports the one it runs in
    (cd <checkout> && python /path/to/benchmarks/srso_headlines.py) > before.json

Keys: ``"<profile> <path>.ns"`` (``path.ns_per_packet`` [ns]) and ``"<profile> <output>"``.
"""
import json
import os
import sys

sys.path.insert(0, os.getcwd())
from skbmodel import model  # noqa: E402
from skbmodel.links import state as sk_state  # noqa: E402
from skbmodel.machine.profile import load_profile  # noqa: E402

PROFILES = ("epyc-9684x-srso", "epyc-9684x")
OUTPUTS = ("slub.loop_ns", "slub.bulk_ns", "zero.gfp_zero_ns", "page_alloc.single_cycles")


def main() -> None:
    out = {}
    for pid in PROFILES:
        prof = load_profile(pid)
        for path in sk_state.PATHS:
            st = {**model.default_params(pid), "path": path}
            out[f"{pid} {path}.ns"] = round(float(model.evaluate(st, prof)["path.ns_per_packet"]), 3)
        values = model.evaluate(model.default_params(pid), prof)
        out.update({f"{pid} {k}": round(float(values[k]), 3) for k in OUTPUTS})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
