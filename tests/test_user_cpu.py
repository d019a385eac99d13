"""The user's own CPU: its name or pasted cpuinfo matched to a machine description, and the fit's start."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skbmodel import model
from skbmodel.machine import cpuinfo, description
from skbmodel.evidence import userinput
from skbmodel.machine import profile as P
from tests.cli_util import skbmodel_cli

ROOT = Path(__file__).resolve().parent.parent

#: model names as /proc/cpuinfo prints them on these machines -> description
MODEL_NAMES = {
    "Intel(R) Xeon(R) CPU E5-1650 v4 @ 3.60GHz": "broadwell-ep",
    "Intel(R) Xeon(R) CPU E5-2670 v3 @ 2.30GHz": "haswell-ep",
    "Intel(R) Core(TM) i7-4790K CPU @ 4.00GHz": "haswell",
    "Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz": "skylake-sp",
    "Intel(R) Xeon(R) Platinum 8280 CPU @ 2.70GHz": "cascade-lake-sp",
    "Intel(R) Xeon(R) Gold 6354H CPU @ 3.00GHz": "cascade-lake-sp",   # Cooper Lake: the Cascade Lake core
    "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz": "ice-lake-sp",
    "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz": "sapphire-rapids",
    "Intel(R) Xeon(R) Platinum 8592+": "emerald-rapids",
    "Intel(R) Xeon(R) 6980P": "granite-rapids",
    "AMD EPYC 7601 32-Core Processor": "zen1-naples",
    "AMD EPYC 7742 64-Core Processor": "zen2-rome",
    "AMD EPYC 7763 64-Core Processor": "zen3-milan",
    "AMD EPYC 9654 96-Core Processor": "zen4-genoa",
    "AMD Ryzen 9 7950X 16-Core Processor": "zen4-genoa",
    "AMD EPYC 9B45 128-Core Processor": "zen5-turin",
}

X86_CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 85
model name\t: Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz
stepping\t: 4
cpu MHz\t\t: 2294.609
"""

ARM_CPUINFO = """processor\t: 0
BogoMIPS\t: 50.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs
CPU implementer\t: 0x41
CPU architecture: 8
CPU variant\t: 0x3
CPU part\t: {part}
CPU revision\t: 1
"""


@pytest.mark.parametrize("name", list(MODEL_NAMES))
def test_a_model_name_matches_exactly_one_description(name):
    hits = [d.name for d in description.descriptions().values() if any(re.search(rx, name, re.I) for rx in d.match)]
    assert hits == [MODEL_NAMES[name]]
    assert cpuinfo.match_cpu(name).description.name == MODEL_NAMES[name]


@pytest.mark.parametrize("part,want", [("0xd0c", "neoverse-n1"), ("0xd40", "neoverse-v1"), ("0xd4f", "neoverse-v2")])
def test_arm64_cpuinfo_is_read_by_its_cpu_part(part, want):
    m = cpuinfo.user_cpu(ARM_CPUINFO.format(part=part))
    assert m.description.name == want and m.text == f"CPU part 0x41:{part}"
    assert m.profile == f"derived-{want}"
    huawei = ARM_CPUINFO.format(part="0xd01").replace("0x41", "0x48")
    assert cpuinfo.user_cpu(huawei).profile == "kunpeng-920"   # measured: its own profile


def test_cpuinfo_lscpu_and_typed_names():
    assert cpuinfo.cpuinfo_text(X86_CPUINFO) == "Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz"
    assert cpuinfo.user_cpu(X86_CPUINFO).profile == "xeon-gold-6140"
    assert cpuinfo.user_cpu("Architecture:  aarch64\nModel name:    Neoverse-N1\n").description.name == "neoverse-n1"
    assert cpuinfo.user_cpu(" kmem-in-loop Per elem: 109 cycles(tsc) 30.532 ns (step:16)") is None
    # Zen 4 and Zen 1 have measured profiles (the EPYC 9684X, the EPYC 7351): such a CPU starts from its
    # data, not from the derivation
    for typed, want in (("zen4-genoa", "epyc-9684x"), ("AMD EPYC 9654 96-Core Processor", "epyc-9684x"),
                        ("zen1-naples", "epyc-7351"), ("AMD EPYC 7601 32-Core Processor", "epyc-7351"),
                        ("zen3-milan", "derived-zen3-milan"), ("derived-zen3-milan", "derived-zen3-milan"),
                        ("xeon-gold-6140", "xeon-gold-6140"), ("Xeon Gold 6140", "xeon-gold-6140"),
                        ("e5-1650v4-2025", "e5-1650v4")):
        assert cpuinfo.match_cpu(typed).profile == want, typed


def test_an_unknown_cpu_starts_from_the_default_with_one_line():
    pid, m = cpuinfo.start_profile("Intel(R) Core(TM) i9-13900K", default="e5-1650v4")
    assert pid == "e5-1650v4" and m.description is None
    line = m.line("e5-1650v4")
    assert "\n" not in line and line.startswith("unknown CPU 'Intel(R) Core(TM) i9-13900K'") and "e5-1650v4" in line
    assert cpuinfo.start_profile(None, ["no cpu here"], default="e5-1650v4") == ("e5-1650v4", None)
    # a name typed by the user wins over the cpuinfo pasted with the measurements
    assert cpuinfo.start_profile("AMD EPYC 7742", [X86_CPUINFO])[0] == "derived-zen2-rome"
    assert cpuinfo.start_profile("", [X86_CPUINFO])[0] == "xeon-gold-6140"


def test_the_calibrate_page_input_carries_the_cpu_it_names():
    parsed = userinput.parse_sources([("pasted text", X86_CPUINFO + PP_LINES), ("lab.txt", b"nothing")])
    assert parsed.cpu == "Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz" and len(parsed.measurements) == 6
    assert userinput.parse_sources([("pasted text", PP_LINES)]).cpu is None


PP_LINES = """[  1.3] time_bench: Type:no-softirq-page_pool01 Per elem: 14 cycles(tsc) 5.833 ns (step:0)
[  1.4] time_bench: Type:no-softirq-page_pool02 Per elem: 50 cycles(tsc) 20.833 ns (step:0)
[  1.5] time_bench: Type:no-softirq-page_pool03 Per elem: 170 cycles(tsc) 70.833 ns (step:0)
"""


def _fit(tmp_path, text, *args):
    f = tmp_path / "lab.txt"
    f.write_text(text)
    return skbmodel_cli("fit", str(f), *args, cwd=ROOT)


#: three made-up page_pool points of a Zen 4 at its 2.4 GHz TSC, near what its description derives
GENOA_PP_LINES = """[  1.3] time_bench: Type:no-softirq-page_pool01 Per elem: 10 cycles(tsc) 4.167 ns (step:0)
[  1.4] time_bench: Type:no-softirq-page_pool02 Per elem: 31 cycles(tsc) 12.917 ns (step:0)
[  1.5] time_bench: Type:no-softirq-page_pool03 Per elem: 110 cycles(tsc) 45.833 ns (step:0)
"""


def test_fit_starts_from_the_derived_profile_of_the_pasted_cpu(tmp_path):
    """Three page_pool points on a Zen 3 (described, no profile measures it): the 'before' column is the
    derived Zen 3 profile's prediction."""
    milan = X86_CPUINFO.replace("Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz", "AMD EPYC 7763 64-Core Processor")
    r = _fit(tmp_path, milan + GENOA_PP_LINES, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["base"] == "derived-zen3-milan" and doc["start"]["description"] == "zen3-milan"
    assert doc["start"]["cpu"] == "AMD EPYC 7763 64-Core Processor"
    base = P.load_profile("derived-zen3-milan").with_values({"ghz": doc["clock"]["ghz"]})
    pred = model.evaluate({}, base)
    before = {row["test"]: row["before"] for row in doc["rows"] if row["unit"] == "cycles"}
    assert before["no-softirq-page_pool01"] == pytest.approx(float(pred["page_pool.nosoftirq01_cycles"]), rel=1e-6)
    assert before["no-softirq-page_pool03"] == pytest.approx(float(pred["page_pool.nosoftirq03_cycles"]), rel=1e-6)
    # the derivation's start is within 20 % of these measured points; the fit then meets them
    assert all(abs(b / m - 1) < 0.2 for b, m in zip(before.values(), (10, 31, 110)))
    fitted = doc["profile"]["constants"]
    assert fitted["pp_fast_cycles"]["value"] == pytest.approx(10, abs=0.1)
    derived_fast = P.load_profile("derived-zen3-milan").value("pp_fast_cycles")
    assert fitted["pp_fast_cycles"]["base"] == pytest.approx(derived_fast)


def test_fit_cli_names_the_cpu_in_one_line_and_falls_back_for_an_unknown_one(tmp_path):
    r = _fit(tmp_path, X86_CPUINFO + PP_LINES)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == ("CPU 'Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz' is Skylake-SP (description "
                                        "skylake-sp): the fit starts from xeon-gold-6140")
    r = _fit(tmp_path, PP_LINES, "--cpu", "Intel(R) Core(TM) i9-13900K")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("unknown CPU") and "the default e5-1650v4" in first
    assert "on base e5-1650v4" in r.stdout
    r = _fit(tmp_path, PP_LINES)   # no CPU named: the default, no line about it
    assert "CPU" not in r.stdout.splitlines()[0] and "on base e5-1650v4" in r.stdout
    r = _fit(tmp_path, PP_LINES, "--cpu", "zen5-turin", "--base", "e5-1650v4")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "give one of them" in r.stderr
