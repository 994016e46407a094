"""The load sampler on fake /proc and /sys content: other processes' share of the machine,
load average, CPU frequency, and what the lab makes of them."""

from __future__ import annotations

import pytest

from shapeshift.lab import machine_load
from shapeshift.lab.machine_load import Load, LoadProbe, read_cpu_jiffies, summarize_loads


def _stat(user, nice, system, idle, iowait=0, irq=0, softirq=0, steal=0) -> str:
    return (
        f"cpu  {user} {nice} {system} {idle} {iowait} {irq} {softirq} {steal} 0 0\n"
        f"cpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345\n"
    )


class FakeMachine:
    """/proc/stat, /proc/loadavg and cpufreq files under ``tmp_path``, and our CPU clock."""

    def __init__(self, tmp_path, mhz=(2_400_000, 2_000_000)):
        self.stat = tmp_path / "stat"
        self.loadavg = tmp_path / "loadavg"
        for i, khz in enumerate(mhz):
            freq = tmp_path / f"cpu{i}" / "cpufreq"
            freq.mkdir(parents=True)
            (freq / "scaling_cur_freq").write_text(f"{khz}\n")
        self.freq_pattern = str(tmp_path / "cpu*" / "cpufreq" / "scaling_cur_freq")
        self.own = 0.0

    def set(self, jiffies: dict, loadavg: str = "0.50 0.40 0.30 1/200 999"):
        self.stat.write_text(_stat(**jiffies))
        self.loadavg.write_text(loadavg + "\n")

    def probe(self) -> LoadProbe:
        return LoadProbe(self.stat, self.loadavg, self.freq_pattern, clock_ticks=100, own_cpu=lambda: self.own)


def test_others_share_is_busy_time_not_ours(tmp_path):
    machine = FakeMachine(tmp_path)
    machine.set(dict(user=1000, nice=0, system=500, idle=8000))
    probe = machine.probe()
    # 2 s on 2 cores = 400 ticks: 300 busy (user 200, system 50, irq 10, steal 40), 100 idle;
    # we used 1.5 s of CPU (150 ticks), so others used 150 of 400 ticks.
    machine.set(dict(user=1200, nice=0, system=550, idle=8100, irq=10, steal=40), "1.75 0.9 0.3 3/210 1000")
    machine.own = 1.5
    load = probe.stop()
    assert load.others_share == pytest.approx(150 / 400)
    assert load.cpu_s == pytest.approx(1.5)
    assert load.loadavg == 1.75
    assert load.cpu_mhz == pytest.approx(2200)


def test_iowait_counts_as_idle_and_share_stays_in_range(tmp_path):
    machine = FakeMachine(tmp_path)
    machine.set(dict(user=0, nice=0, system=0, idle=0))
    probe = machine.probe()
    machine.set(dict(user=10, nice=0, system=0, idle=50, iowait=140))
    machine.own = 0.5  # more than the busy ticks (tick rounding): never a negative share
    assert probe.stop().others_share == 0.0
    machine.set(dict(user=0, nice=0, system=0, idle=0))
    probe = machine.probe()
    machine.set(dict(user=100, nice=100, system=0, idle=0))
    machine.own = 0.0
    assert probe.stop().others_share == 1.0


def test_unreadable_files_give_none_not_errors(tmp_path):
    probe = LoadProbe(tmp_path / "missing", tmp_path / "missing", str(tmp_path / "none*"), clock_ticks=100)
    load = probe.stop()
    assert load.others_share is None and load.loadavg is None and load.cpu_mhz is None
    assert load.wall_s >= 0
    (tmp_path / "stat").write_text("intr 1 2 3\n")
    assert read_cpu_jiffies(tmp_path / "stat") is None
    assert machine_load.describe(None) == "load not measured (no /proc/stat)"


def test_the_real_machine_is_readable():
    load = LoadProbe().stop()
    assert load.others_share is None or 0.0 <= load.others_share <= 1.0
    assert load.loadavg is None or load.loadavg >= 0


def test_children_cpu_counts_as_ours():
    import subprocess
    import sys

    before = machine_load.own_cpu_seconds()
    subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"], check=True)
    assert machine_load.own_cpu_seconds() - before > 0.05


def test_summary_weights_share_by_duration_and_flags_load():
    loads = [Load(1.0, 1.0, 0.0, 0.5, 2000.0), Load(3.0, 3.0, 0.5, 2.0, 1500.0), Load(1.0, 1.0, None, None, None)]
    summary = summarize_loads(loads)
    assert summary["others_share"] == pytest.approx(1.5 / 4)
    assert summary["others_share_max"] == 0.5
    assert summary["loadavg_max"] == 2.0
    assert (summary["cpu_mhz_min"], summary["cpu_mhz_max"]) == (1500.0, 2000.0)
    assert machine_load.is_loaded(0.375) and not machine_load.is_loaded(0.02)
    assert "38% of the machine (~0.8 of 2 cores)" in machine_load.describe(0.375, cores=2)


def test_fingerprint_names_the_machine_and_build():
    fp = machine_load.fingerprint()
    assert set(machine_load.MACHINE_KEYS) <= set(fp)
    assert fp["cores"] >= 1 and fp["python"].count(".") == 2
    assert "git_commit" in fp["build"]
