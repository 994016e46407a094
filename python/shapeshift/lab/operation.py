"""A local stand-in for a YT Map operation: an input table split into jobs, each job a process.

Every job is a separate ``shapeshift job`` process, reading its part of the input on standard
input and writing its output table on standard output (file descriptor 1, table 0 of YT's
``3k+1`` rule), both in the operation's format — the job protocol of a YT map job. At most
``parallelism`` jobs run at once (the number of cores by default), like the slots of a node.

Per job the runner records what YT's UI shows for a job: wall time (from spawning the
process to reaping it), CPU time (user + system, from ``os.wait4``'s rusage of that very
process) and peak resident memory (``ru_maxrss``), plus bytes in and out and the job's own
summary (rows, the scenario's statistic, seconds spent in the scenario, from the last line
of its standard error).

Standard input and output are unnamed files in memory (``/dev/shm``), so a job runs as fast
as it can read and write, never waiting for this Python process. A bandwidth limit (bytes per
second, per job) turns the input into a pipe fed by a thread with a token bucket, so the job
sees its input arrive as over a slow network link.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

_CHUNK = 1 << 16


@dataclass
class JobResult:
    wall_s: float
    cpu_s: float
    maxrss_kib: int
    bytes_in: int
    bytes_out: int
    rows_in: int
    rows_out: int
    stat: str
    scenario_s: float  # time the job spent in the scenario itself (no process start-up)
    output: bytes | None = field(default=None, repr=False)


@dataclass
class OperationResult:
    scenario: str
    format: str
    path: str
    jobs: list[JobResult]
    wall_s: float  # the whole operation

    @property
    def job_walls(self) -> list[float]:
        return [j.wall_s for j in self.jobs]


class JobFailed(RuntimeError):
    pass


def find_cli() -> str:
    """The ``shapeshift`` executable: ``$SHAPESHIFT_CLI``, else next to this Python, else on
    ``PATH``."""
    if os.environ.get("SHAPESHIFT_CLI"):
        return os.environ["SHAPESHIFT_CLI"]
    exe = shutil.which("shapeshift", path=os.path.dirname(sys.executable)) or shutil.which(
        "shapeshift"
    )
    if exe is None:
        raise RuntimeError("the shapeshift CLI is not installed (run `make build`)")
    return exe


def _feed(stdin, data: bytes, bandwidth: float | None, errors: list) -> None:
    """Writes ``data`` to the job, at most ``bandwidth`` bytes/s when given (token bucket
    with a one-chunk burst)."""
    try:
        view = memoryview(data)
        start = time.perf_counter()
        sent = 0
        chunk = _CHUNK if bandwidth is None else max(1024, min(_CHUNK, int(bandwidth / 100)))
        while sent < len(view):
            if bandwidth is not None:
                allowed = (time.perf_counter() - start) * bandwidth + chunk
                if sent + chunk > allowed:
                    time.sleep((sent + chunk - allowed) / bandwidth)
            piece = view[sent : sent + chunk]
            stdin.write(piece)
            sent += len(piece)
    except BrokenPipeError:
        pass  # the job died early; its exit status tells why
    except Exception as error:  # pragma: no cover - reported by the caller
        errors.append(error)
    finally:
        try:
            stdin.close()
        except BrokenPipeError:
            pass


def _drain(stream, keep: bool, out: dict) -> None:
    total = 0
    parts = []
    while True:
        piece = stream.read(1 << 20)
        if not piece:
            break
        total += len(piece)
        if keep:
            parts.append(piece)
    out["bytes"] = total
    out["data"] = b"".join(parts) if keep else None


def _scratch_file():
    """An unnamed temporary file, in memory (``/dev/shm``) where there is one."""
    directory = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    return tempfile.TemporaryFile(dir=directory)


class _Running:
    """One job process. Without a bandwidth limit its input is a file on fd 0 and its output a
    file on fd 1, so the runner's own speed never limits the job's; with one, the input is a
    pipe fed by a throttled thread."""

    def __init__(self, args, data, bandwidth, keep_output):
        """``data``: the job's input, as bytes or as the path of a file holding it."""
        self.keep_output = keep_output
        self.errors: list = []
        self.err: dict = {}
        self.stdout_file = _scratch_file()
        self.stdin_file = None
        if isinstance(data, (str, os.PathLike)):
            if bandwidth is None:
                self.stdin_file = open(data, "rb")  # noqa: SIM115 - closed in _output
                self.bytes_in = os.fstat(self.stdin_file.fileno()).st_size
            else:
                with open(data, "rb") as file:
                    data = file.read()
        if self.stdin_file is None:
            self.bytes_in = len(data)
            if bandwidth is None:
                self.stdin_file = _scratch_file()
                self.stdin_file.write(data)
                self.stdin_file.flush()
                self.stdin_file.seek(0)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            args,
            stdin=self.stdin_file if self.stdin_file is not None else subprocess.PIPE,
            stdout=self.stdout_file,
            stderr=subprocess.PIPE,
        )
        self.threads = [threading.Thread(target=_drain, args=(self.proc.stderr, True, self.err))]
        if self.stdin_file is None:
            self.threads.append(
                threading.Thread(target=_feed, args=(self.proc.stdin, data, bandwidth, self.errors))
            )
        for t in self.threads:
            t.start()

    def _output(self) -> tuple[int, bytes | None]:
        size = os.fstat(self.stdout_file.fileno()).st_size
        data = None
        if self.keep_output:
            self.stdout_file.seek(0)
            data = self.stdout_file.read()
        self.stdout_file.close()
        if self.stdin_file is not None:
            self.stdin_file.close()
        return size, data

    def finish(self, status: int, rusage, ended: float) -> JobResult:
        for t in self.threads:
            t.join()
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.proc.stderr.close()
        bytes_out, output = self._output()
        stderr = (self.err.get("data") or b"").decode("utf-8", "replace").strip()
        if self.proc.returncode != 0 or self.errors:
            raise JobFailed(
                f"job {self.proc.args[1:]} exited with {self.proc.returncode}: "
                f"{stderr or self.errors}"
            )
        try:
            summary = json.loads(stderr.splitlines()[-1])
        except (IndexError, ValueError) as error:
            raise JobFailed(f"job {self.proc.args[1:]} wrote no summary: {stderr!r}") from error
        return JobResult(
            wall_s=ended - self.started,
            cpu_s=rusage.ru_utime + rusage.ru_stime,
            # The job's own VmHWM: a vfork-spawned child's ru_maxrss starts at the parent's peak.
            maxrss_kib=int(summary.get("peak_rss_kib") or rusage.ru_maxrss),
            bytes_in=self.bytes_in,
            bytes_out=bytes_out,
            rows_in=int(summary["rows_in"]),
            rows_out=int(summary["rows_out"]),
            stat=str(summary["stat"]),
            scenario_s=float(summary["seconds"]),
            output=output,
        )


def run_operation(
    scenario: str,
    fmt: str,
    path: str,
    inputs: list[bytes | str | os.PathLike],
    *,
    exe: str | None = None,
    parallelism: int | None = None,
    bandwidth: float | None = None,
    bm6_rows: int = 0,
    keep_output: bool = False,
) -> OperationResult:
    """Runs one map operation: one job per element of ``inputs`` (that job's input table,
    as bytes or as the path of a file holding it; a file is handed to the job as its standard
    input directly).

    ``bandwidth`` throttles each job's input to that many bytes per second; ``bm6_rows`` is
    the number of rows each BM6 job writes; ``keep_output`` keeps job 0's output bytes.
    Raises :class:`JobFailed` with the job's own message when a job fails.
    """
    exe = exe or find_cli()
    parallelism = max(1, parallelism or os.cpu_count() or 1)
    args = [exe, "job", "--scenario", scenario, "--format", fmt, "--path", path]
    if bm6_rows:
        args += ["--rows", str(bm6_rows)]
    pending = list(enumerate(inputs))
    running: dict[int, tuple[int, _Running]] = {}
    results: list[JobResult | None] = [None] * len(inputs)
    started = time.perf_counter()
    failure: JobFailed | None = None
    try:
        while pending or running:
            while pending and len(running) < parallelism and failure is None:
                index, data = pending.pop(0)
                job = _Running(args, data, bandwidth, keep_output and index == 0)
                running[job.proc.pid] = (index, job)
            if not running:
                break
            pid, status, rusage = os.wait4(-1, 0)
            ended = time.perf_counter()
            if pid not in running:
                continue  # some other child of this process
            index, job = running.pop(pid)
            try:
                results[index] = job.finish(status, rusage, ended)
            except JobFailed as error:
                failure = failure or error
                pending.clear()
    finally:
        for _, job in running.values():
            job.proc.kill()
            job.proc.wait()
    if failure is not None:
        raise failure
    return OperationResult(
        scenario=scenario,
        format=fmt,
        path=path,
        jobs=[r for r in results if r is not None],
        wall_s=time.perf_counter() - started,
    )


def generate(
    dataset: str,
    rows: int,
    seed: int,
    fmt: str,
    cardinality: str = "high",
    exe: str | None = None,
    out_path: str | os.PathLike | None = None,
) -> bytes | None:
    """A seeded table serialized in ``fmt`` (``shapeshift generate``): its bytes, or written
    straight to ``out_path`` (then ``None``)."""
    exe = exe or find_cli()
    args = [
        exe,
        "generate",
        "--dataset",
        dataset,
        "--rows",
        str(rows),
        "--seed",
        str(seed),
        "--format",
        fmt,
        "--cardinality",
        cardinality,
    ]
    if out_path is None:
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    else:
        with open(out_path, "wb") as out:
            done = subprocess.run(args, stdout=out, stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.decode("utf-8", "replace").strip())
    return done.stdout if out_path is None else None


def split_rows(total: int, jobs: int) -> list[int]:
    """``total`` rows over ``jobs`` jobs as evenly as possible (every job at least one)."""
    jobs = max(1, jobs)
    base, extra = divmod(max(total, jobs), jobs)
    return [base + (1 if i < extra else 0) for i in range(jobs)]
