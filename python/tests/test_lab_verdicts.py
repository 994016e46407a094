"""Target verdicts (met / not met / unresolved), paired comparisons with wall and CPU ratios,
and adaptive repetition, from synthetic samples."""

from __future__ import annotations

import itertools

import pytest

from shapeshift.lab.machine_load import Load
from shapeshift.lab.stats import median_ci, ratio_interval, summarize
from shapeshift.lab.study import LabContext, Target, paired_comparison, worst_of


def _loads(walls, cpus=None, share=0.0):
    cpus = walls if cpus is None else cpus
    return [Load(w, c, share, 0.1, None) for w, c in zip(walls, cpus)]


def test_verdict_from_the_ci():
    assert Target("x", 2.5, 2.0, ci=(2.2, 2.8)).verdict == "met"
    assert Target("x", 1.5, 2.0, ci=(1.3, 1.7)).verdict == "not met"
    straddling = Target("x", 2.1, 2.0, ci=(1.7, 2.5))
    assert straddling.verdict == "unresolved" and straddling.met  # `met` keeps its meaning
    assert "straddles the goal" in straddling.unresolved_because
    lower = Target("overhead", 3.0, 5.0, "%", lower_is_better=True, ci=(2.0, 4.0))
    assert lower.verdict == "met"
    assert Target("overhead", 4.0, 5.0, "%", lower_is_better=True, ci=(3.0, 6.0)).verdict == "unresolved"


def test_a_miss_under_load_is_unresolved_but_a_size_is_not():
    missed = Target("GB/s", 0.8, 1.0, "GB/s", others_share=0.45)
    assert missed.verdict == "unresolved" and missed.under_load
    assert "45% of the machine" in missed.unresolved_because
    assert Target("GB/s", 0.8, 1.0, "GB/s", others_share=0.02).verdict == "not met"
    assert Target("GB/s", 1.2, 1.0, "GB/s", others_share=0.45).verdict == "met"
    size = Target("size excess", 2.0, 0.5, "%", lower_is_better=True, timed=False, others_share=0.45)
    assert size.verdict == "not met" and not size.under_load
    record = missed.as_dict()
    assert record["met"] is False and record["verdict"] == "unresolved" and record["under_load"]


def test_median_ci_covers_the_median_and_needs_six_samples():
    assert median_ci([1, 2, 3, 4, 5]) is None
    low, high = median_ci(list(range(1, 31)))
    assert low < 15.5 < high and (low, high) == (10, 21)
    assert median_ci([5.0] * 8) == (5.0, 5.0)


def test_ratio_interval_is_positive_and_symmetric_in_log():
    up = ratio_interval(summarize([1.9, 2.0, 2.1]))
    down = ratio_interval(summarize([1 / 1.9, 1 / 2.0, 1 / 2.1]))
    assert up[0] > 0 and down[0] > 0
    assert up[0] * down[1] == pytest.approx(1) and up[1] * down[0] == pytest.approx(1)
    assert ratio_interval(summarize([2.0])) is None


def test_comparison_ranks_a_clear_speedup_and_not_noise():
    clear = paired_comparison("ours", "peer", {"ours": _loads([1.0, 1.02, 0.98, 1.01]),
                                               "peer": _loads([3.0, 3.1, 2.9, 3.05])})
    assert clear.ranks(goal=2.0)
    assert Target("s", 3.0, 2.0, ci=ratio_interval(clear.ratio)).verdict == "met"
    noisy = paired_comparison("ours", "peer", {"ours": _loads([1.0, 1.0, 1.0]),
                                               "peer": _loads([0.6, 1.6, 2.9])})
    assert not noisy.ranks(goal=2.0)
    target = worst_of("speedup", [clear, noisy], 2.0)
    assert target.verdict == "unresolved"
    assert target.measured == pytest.approx(min(1.4, 3.0), rel=0.3)


def test_worst_of_is_not_met_when_one_side_is_surely_below():
    fast = paired_comparison("a", "b", {"a": _loads([1.0] * 4), "b": _loads([3.0, 3.1, 2.9, 3.0])})
    slow = paired_comparison("a", "b", {"a": _loads([1.0] * 4), "b": _loads([1.2, 1.25, 1.15, 1.2])})
    assert worst_of("w", [fast, slow], 2.0).verdict == "not met"
    assert worst_of("w", [fast], 2.0).verdict == "met"


def test_cpu_ratio_is_believed_for_single_threaded_work_under_load():
    # Under load our side waited for a core: wall 2x the CPU time; the peer ran undisturbed.
    ours = _loads([2.0, 2.1, 1.9, 2.0], [1.0, 1.0, 1.0, 1.0], share=0.5)
    peer = _loads([2.0, 2.0, 2.05, 1.95], [2.0, 2.0, 2.05, 1.95], share=0.5)
    c = paired_comparison("ours", "peer", {"ours": ours, "peer": peer})
    assert c.disagree
    assert c.believe[0] == "cpu" and "survives the contention" in c.believe[1]
    assert c.ratio is c.cpu and c.ratio.mean == pytest.approx(2.0, rel=0.05)
    quiet = paired_comparison("ours", "peer", {"ours": _loads([2.0, 2.1, 1.9, 2.0], [1.0] * 4),
                                               "peer": _loads([2.0, 2.0, 2.05, 1.95])})
    assert quiet.believe[0] == "wall"
    # Multi-threaded (CPU > wall on one side): only the wall ratio says what a user waits for.
    threaded = paired_comparison("ours", "peer", {"ours": _loads([1.0] * 4, [3.0, 3.1, 2.9, 3.0], share=0.5),
                                                  "peer": _loads([2.0, 2.1, 1.9, 2.0], share=0.5)})
    assert threaded.believe[0] == "wall" and "multi-threaded" in threaded.believe[1]


def _fake_clock(monkeypatch, walls: dict):
    """LabContext.sample without running anything: each side's next wall/CPU seconds."""
    def sample(self, fn):
        load = Load(*fn(), 0.0, 0.1, None)
        self.loads.append(load)
        return load

    monkeypatch.setattr(LabContext, "sample", sample)
    return {side: (lambda it=itertools.cycle(values): (next(it),) * 2) for side, values in walls.items()}


def test_compare_adds_rounds_until_ranked_within_budget(tmp_path, monkeypatch):
    ctx = LabContext(tmp_path, quiet=True)
    ctx.begin_study(rerun_budget_s=100.0)
    sides = _fake_clock(monkeypatch, {"ours": [1.0], "peer": [1.6, 2.6, 1.7, 2.5]})
    result = ctx.compare("op", sides, repeat=3, warmup=0, goal=2.0, max_repeat=40)
    assert result.extra_rounds > 0
    assert result.ranks(2.0) or result.extra_rounds == 37
    assert ctx.rerun_spent_s > 0
    assert set(ctx.measurements) == {"op/ours", "op/peer"}
    assert len(ctx.measurements["op/ours"]["wall_s"]) == 3 + result.extra_rounds


def test_compare_stops_at_the_budget_and_stays_unresolved(tmp_path, monkeypatch):
    ctx = LabContext(tmp_path, quiet=True)
    ctx.begin_study(rerun_budget_s=0.0)
    sides = _fake_clock(monkeypatch, {"ours": [1.0], "peer": [1.2, 3.0, 1.5]})
    result = ctx.compare("op", sides, repeat=3, warmup=0, goal=2.0)
    assert result.extra_rounds == 0 and not result.ranks(2.0)
    assert worst_of("t", [result], 2.0).verdict == "unresolved"


def test_time_records_cpu_and_load_per_sample(tmp_path):
    ctx = LabContext(tmp_path, quiet=True)
    summary = ctx.time(lambda: sum(range(20_000)), repeat=4, warmup=1, name="sum")
    assert summary.n == 4 and len(summary.cpu_samples) == 4 and len(summary.loads) == 4
    record = summary.as_dict()
    assert len(record["others_share"]) == 4 and len(record["cpu_samples"]) == 4
    assert ctx.measurements["sum"]["wall_s"] == summary.samples


def test_progress_without_a_terminal_prints_lines_with_an_eta(tmp_path, capsys):
    from shapeshift.lab.study import Progress

    ctx = LabContext(tmp_path)
    with Progress(ctx, 4, "study", every_s=0) as progress:
        for step in range(4):
            progress.advance(note=f"step {step}")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 4
    assert "study: 1/4 (25%), ETA" in lines[0] and lines[0].endswith("step 0")
    assert "4/4 (100%), ETA 0s" in lines[-1]


def test_summary_lines_name_what_load_left_unresolved():
    from shapeshift.lab.report import summary_lines
    from shapeshift.lab.study import StudyResult

    loaded = [Target("rate", 0.8, 1.0, "GB/s", others_share=0.5),
              Target("size", 1.0, 0.5, "%", lower_is_better=True, timed=False, others_share=0.5)]
    quiet = [Target("speedup", 2.1, 2.0, ci=(1.8, 2.4), others_share=0.01), Target("ok", 3.0, 2.0, others_share=0.01)]
    results = [StudyResult("busy", "Busy", "", targets=loaded), StudyResult("calm", "Calm", "", targets=quiet)]
    studies = [{"name": "busy", "load": {"others_share": 0.5}}, {"name": "calm", "load": {"others_share": 0.01}}]
    lines = summary_lines(results, studies)
    assert lines[0] == "Targets: 1 met, 1 not met, 2 unresolved."
    assert "busy measured while other processes used 50% of the machine" in lines[1]
    load_at = lines.index("Unresolved because of load (run again on a quiet machine):")
    assert lines[load_at + 1].startswith("- busy: rate (not met, measured while")
    noise_at = lines.index("Unresolved because the figures were too noisy to rank:")
    assert lines[noise_at + 1].startswith("- calm: speedup (95% CI 1.8 to 2.4")


def test_report_shows_load_ci_and_verdicts(tmp_path):
    from shapeshift.lab.machine_load import fingerprint
    from shapeshift.lab.report import write_report
    from shapeshift.lab.study import StudyResult

    targets = [Target("rate", 0.8, 1.0, "GB/s", ci=(0.7, 0.9), others_share=0.5),
               Target("speedup", 2.5, 2.0, ci=(2.2, 2.8), others_share=0.5)]
    result = StudyResult("busy", "Busy study", "summary", targets=targets)
    load = {"wall_s": 10.0, "cpu_s": 4.0, "others_share": 0.5, "loadavg": 3.2, "cpu_mhz": None,
            "samples": {"others_share_max": 0.9, "cpu_mhz_min": None}}
    meta = {"fingerprint": fingerprint(), "scale": 1.0, "seconds": 10.0,
            "studies": [{"name": "busy", "load": load, "rerun_seconds": 2.0, "rerun_budget_seconds": 5.0,
                         "targets": [t.as_dict() for t in targets]}]}
    write_report(tmp_path, [result], meta)
    page = (tmp_path / "index.html").read_text()
    assert "Measured while other processes used 50% of the machine" in page
    assert "at most 90% during one timed sample" in page and "2 s of its 5 s budget" in page
    assert "<th>95% CI</th>" in page and "0.7 to 0.9" in page
    assert "class='unresolved'>unresolved (not met, measured while" in page
    assert "class='met'>met [under load]" in page
    markdown = (tmp_path / "report.md").read_text()
    assert "Targets: 1 met, 0 not met, 1 unresolved." in markdown
