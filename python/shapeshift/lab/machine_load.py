"""How busy the machine was while the lab measured: load average, CPU time taken by other
processes, CPU frequency, and this process's own CPU time (its reaped children included, so
``shapeshift`` processes the lab runs count as ours).

Every timed sample goes through :class:`LoadProbe` (``LabContext`` does it), so every study
records the same figures the same way. Linux only; where a file is missing (another OS, a
container without ``/sys``) the figure is ``None`` and the figures that need it are left out.
"""

from __future__ import annotations

import functools
import glob
import os
import resource
import time
from dataclasses import asdict, dataclass
from pathlib import Path

# Share of the machine (all cores) that other processes may use before a figure is flagged as
# taken under load. A quiet machine shows 0-3% (system daemons); a build or a second benchmark
# on one core of two shows ~50%.
LOADED_SHARE = 0.10


def read_loadavg(path: str | Path = "/proc/loadavg") -> float | None:
    """The one-minute load average, or ``None`` when unreadable."""
    try:
        return float(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_cpu_jiffies(path: str | Path = "/proc/stat") -> tuple[int, int] | None:
    """(busy, total) clock ticks of all CPUs since boot from the ``cpu`` line of /proc/stat.

    Busy is user + nice + system + irq + softirq + steal; total adds idle and iowait. (guest
    time is already counted in user, so it is not added again.)"""
    try:
        with open(path) as file:
            for line in file:
                if line.startswith("cpu "):
                    fields = [int(v) for v in line.split()[1:]]
                    break
            else:
                return None
    except (OSError, ValueError):
        return None
    fields += [0] * (8 - len(fields))
    user, nice, system, idle, iowait, irq, softirq, steal = fields[:8]
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


@functools.lru_cache(maxsize=None)
def _frequency_files(pattern: str) -> tuple[str, ...]:
    """The files ``pattern`` names, listed once (CPUs do not come and go during a run)."""
    return tuple(glob.glob(pattern))


def read_cpu_mhz(pattern: str = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq") -> float | None:
    """Mean current frequency over the CPUs that expose it (MHz), or ``None`` (most VMs)."""
    values = []
    for name in _frequency_files(pattern):
        try:
            values.append(int(Path(name).read_text().split()[0]) / 1000)
        except (OSError, ValueError, IndexError):
            continue
    return sum(values) / len(values) if values else None


def own_cpu_seconds() -> float:
    """User + system CPU seconds of this process (all threads) and its reaped children."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


@dataclass
class Load:
    """The machine during one measured interval."""

    wall_s: float
    cpu_s: float  # ours: this process and the children it reaped during the interval
    others_share: float | None  # other processes' CPU time / (wall time x all cores)
    loadavg: float | None  # one-minute load average at the end of the interval
    cpu_mhz: float | None

    def as_dict(self) -> dict:
        return asdict(self)


class LoadProbe:
    """Measures one interval: ``probe = LoadProbe(); ...; load = probe.stop()``.

    The file paths are parameters so tests can feed it fake /proc content."""

    def __init__(
        self,
        stat_path: str | Path = "/proc/stat",
        loadavg_path: str | Path = "/proc/loadavg",
        freq_pattern: str = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq",
        clock_ticks: int | None = None,
        own_cpu=own_cpu_seconds,
    ):
        self._stat_path, self._loadavg_path, self._freq_pattern = stat_path, loadavg_path, freq_pattern
        self._ticks = clock_ticks or os.sysconf("SC_CLK_TCK")
        self._own_cpu = own_cpu
        self._jiffies = read_cpu_jiffies(stat_path)
        self._cpu = own_cpu()
        self._start = time.perf_counter()

    def stop(self) -> Load:
        wall = time.perf_counter() - self._start
        cpu = self._own_cpu() - self._cpu
        jiffies = read_cpu_jiffies(self._stat_path)
        others = None
        if self._jiffies is not None and jiffies is not None:
            busy = (jiffies[0] - self._jiffies[0]) / self._ticks
            total = (jiffies[1] - self._jiffies[1]) / self._ticks
            if total > 0:
                # Ticks are 10 ms: over short intervals this is coarse, and over the study it
                # is exact (see StudyLoad).
                others = min(1.0, max(0.0, (busy - cpu) / total))
        return Load(wall, cpu, others, read_loadavg(self._loadavg_path), read_cpu_mhz(self._freq_pattern))


def summarize_loads(loads: list[Load]) -> dict:
    """The load over many intervals: others' share weighted by each interval's length (about
    the share over their union), the highest share and load average, the frequency range."""
    shares = [(l.others_share, l.wall_s) for l in loads if l.others_share is not None]
    weight = sum(w for _, w in shares)
    mhz = [l.cpu_mhz for l in loads if l.cpu_mhz is not None]
    averages = [l.loadavg for l in loads if l.loadavg is not None]
    return {
        "samples": len(loads),
        "others_share": sum(s * w for s, w in shares) / weight if weight > 0 else None,
        "others_share_max": max((s for s, _ in shares), default=None),
        "loadavg_max": max(averages, default=None),
        "cpu_mhz_min": min(mhz, default=None),
        "cpu_mhz_max": max(mhz, default=None),
    }


def is_loaded(others_share: float | None) -> bool:
    return others_share is not None and others_share >= LOADED_SHARE


def describe(others_share: float | None, cores: int | None = None) -> str:
    """``measured while other processes used 48% of the machine (~1.0 of 2 cores)``."""
    if others_share is None:
        return "load not measured (no /proc/stat)"
    cores = cores or os.cpu_count() or 1
    return (
        f"measured while other processes used {100 * others_share:.0f}% of the machine "
        f"(~{others_share * cores:.1f} of {cores} cores)"
    )


# What must be equal for two runs' figures to be comparable; ``build`` and ``peers`` are
# recorded beside it (comparing two builds is what ``compare`` is for).
MACHINE_KEYS = ("cpu_model", "cores", "memory_gib", "kernel", "python")
PEER_PACKAGES = ("array_record", "ytsaurus-yson", "pyarrow", "pcodec", "vortex-data", "grain", "numpy")


def _cpu_model(path: str = "/proc/cpuinfo") -> str:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def _memory_gib(path: str = "/proc/meminfo") -> float | None:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _git(*args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def fingerprint() -> dict:
    """The machine and software a run measured: ``MACHINE_KEYS``, the build, the peers."""
    import platform
    from importlib import metadata

    def version(package: str) -> str | None:
        try:
            return metadata.version(package)
        except metadata.PackageNotFoundError:
            return None

    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "build": {
            "shapeshift": version("shapeshift"),
            "git_commit": _git("rev-parse", "HEAD"),
            "git_dirty": bool(status) if status is not None else None,
        },
        "peers": {p: version(p) for p in PEER_PACKAGES},
    }
