"""``python -m shapeshift.lab compare``: real changes reported, noise not, and runs from
different machines refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shapeshift.lab import compare
from shapeshift.lab.__main__ import main as lab_main

MACHINE = {
    "cpu_model": "Example CPU @ 2.0GHz", "cores": 2, "memory_gib": 7.8, "kernel": "6.1.0",
    "python": "3.11.7", "platform": "Linux", "build": {"git_commit": "a" * 40, "git_dirty": False},
    "peers": {},
}


def _run(rng, slowdown: dict | None = None, machine: dict | None = None, names: int = 40,
         samples: int = 10, noise: float = 0.02) -> dict:
    """A lab.json: ``names`` measurements of ``samples`` wall times each (lognormal noise)."""
    slowdown = slowdown or {}
    measurements = {"study": {}}
    for i in range(names):
        name = f"op{i}"
        base = 0.01 * (1 + i) * slowdown.get(name, 1.0)
        walls = base * np.exp(rng.normal(0, noise, samples))
        measurements["study"][name] = {"unit": "s", "wall_s": walls.tolist(), "cpu_s": walls.tolist(),
                                       "others_share": [0.01] * samples}
    return {"fingerprint": machine or MACHINE, "scale": 1.0, "measurements": measurements}


def _write(path, run):
    path.mkdir()
    (path / "lab.json").write_text(json.dumps(run))
    return path


def test_a_real_2x_slowdown_is_reported_and_nothing_else():
    rng = np.random.default_rng(7)
    old, new = _run(rng), _run(rng, slowdown={"op3": 2.0, "op11": 0.5})
    changes, unmatched = compare.compare_runs(old, new)
    status = {c.name: c.status() for c in changes}
    assert status.pop("op3") == "slower" and status.pop("op11") == "faster"
    assert set(status.values()) == {"no change"}
    slower = next(c for c in changes if c.name == "op3")
    assert slower.ratio == pytest.approx(2.0, rel=0.05) and slower.low > 1.8
    assert unmatched == []


def test_identical_distributions_report_no_change():
    for seed in range(3):
        rng = np.random.default_rng(100 + seed)
        changes, _ = compare.compare_runs(_run(rng, noise=0.05), _run(rng, noise=0.05))
        assert [c.line() for c in changes if c.status() != "no change"] == []


def test_measurements_in_one_run_only_are_listed_not_compared():
    rng = np.random.default_rng(1)
    old, new = _run(rng, names=3), _run(rng, names=4)
    new["measurements"]["study"]["op0"]["wall_s"] = [0.01]
    changes, unmatched = compare.compare_runs(old, new)
    assert {c.name for c in changes} == {"op1", "op2"}
    assert any("op3 (new run only)" in u for u in unmatched)
    assert any("op0 (too few samples" in u for u in unmatched)


def test_cli_refuses_other_machines_unless_forced(tmp_path, capsys):
    rng = np.random.default_rng(3)
    other = MACHINE | {"cpu_model": "Another CPU", "memory_gib": 15.6}
    old = _write(tmp_path / "old", _run(rng))
    new = _write(tmp_path / "new", _run(rng, slowdown={"op5": 2.0}, machine=other))
    assert lab_main(["compare", str(old), str(new)]) == 2
    err = capsys.readouterr().err
    assert "refusing" in err and "cpu_model" in err and "memory_gib" in err and "cores" not in err
    assert lab_main(["compare", str(old), str(new / "lab.json"), "--force"]) == 0
    out = capsys.readouterr().out
    assert "different machines" in out
    assert "slower beyond noise (1):\n  study: op5: " in out


def test_cli_explains_an_unusable_run(tmp_path, capsys):
    old = _write(tmp_path / "old", {"machine": {}, "studies": []})  # a lab.json without samples
    assert lab_main(["compare", str(old), str(tmp_path / "missing")]) == 2
    assert "written by an older lab" in capsys.readouterr().err


def test_three_samples_against_three_never_show_a_change():
    # All three new samples above all three old: the bootstrap CI excludes 1, but the
    # Mann-Whitney test cannot reject at 5% with so few samples (exact p = 0.1).
    old = {"fingerprint": MACHINE, "measurements": {"s": {"op": {"wall_s": [1.0, 1.01, 1.02]}}}}
    new = {"fingerprint": MACHINE, "measurements": {"s": {"op": {"wall_s": [1.5, 1.6, 1.7]}}}}
    (change,), _ = compare.compare_runs(old, new)
    assert change.low > 1 and change.p_value == pytest.approx(0.1)
    assert change.status() == "no change"


def test_mann_whitney_matches_known_values():
    from shapeshift.lab.stats import mann_whitney_p

    assert mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert mann_whitney_p([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]) == pytest.approx(0.6905, abs=1e-4)
    assert mann_whitney_p([2.0] * 50, [2.0] * 50) == 1.0  # all tied: no evidence at all
    rng = np.random.default_rng(5)
    assert mann_whitney_p(rng.normal(0, 1, 60), rng.normal(1, 1, 60)) < 1e-4


def test_benjamini_hochberg_adjusts_for_many_measurements():
    q = compare.benjamini_hochberg([0.01, 0.04, 0.03, 0.5])
    # sorted 0.01, 0.03, 0.04, 0.5 -> 0.04, min(0.06, 0.0533), 0.04 * 4 / 3, 0.5
    assert q == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])
    assert compare.benjamini_hochberg([]) == []
