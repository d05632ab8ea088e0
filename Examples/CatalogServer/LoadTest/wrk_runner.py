"""Runs wrk with catalog.lua and reads the JSON its done() prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "catalog.lua")


class WrkError(RuntimeError):
    """wrk is missing, failed, or printed no result."""


def ensure_wrk() -> str:
    """The path of wrk; installs it with apt-get when it is missing and this runs as root with apt."""
    path = shutil.which("wrk")
    if path:
        return path
    print("wrk is not installed: it is the load generator (Debian/Ubuntu: apt-get install wrk; "
          "macOS: brew install wrk)")
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("running as root with apt-get: installing wrk")
        environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "wrk"]):
            subprocess.run(command, env=environment, check=False, timeout=600,
                           stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        path = shutil.which("wrk")
        if path:
            return path
    raise WrkError("wrk is not installed; install it (apt-get install wrk) and run again")


@dataclass
class WrkResult:
    """What one wrk run measured."""

    requests: int
    seconds: float
    errors: dict
    p50_ms: float
    p90_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float
    distinct_ids: int
    statuses_per_second: dict = field(default_factory=dict)

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds > 0 else 0.0

    @property
    def non_2xx(self) -> int:
        return int(self.errors.get("status", 0))

    @property
    def socket_errors(self) -> int:
        return sum(int(self.errors.get(key, 0)) for key in ("connect", "read", "write", "timeout"))

    def status_counts(self) -> dict[int, int]:
        """The statuses over the whole run (needs CATALOG_STATUSES)."""
        counts: dict[int, int] = {}
        for statuses in self.statuses_per_second.values():
            for status, count in statuses.items():
                counts[int(status)] = counts.get(int(status), 0) + int(count)
        return counts

    def last_full_seconds(self, count: int) -> dict[int, int]:
        """The statuses of the `count` whole seconds before the last second an answer came in (that one
        is partial). wrk's clock starts before its script has built its requests, so its answers can end
        seconds before the run does: the run's end is not where its last answers are."""
        if not self.statuses_per_second:
            return {}
        last = max(int(second) for second in self.statuses_per_second)
        return self.statuses_between(last - count, last)

    def statuses_between(self, start: float, end: float) -> dict[int, int]:
        """The statuses of the wall-clock seconds s with start <= s and s + 1 <= end."""
        counts: dict[int, int] = {}
        for second, statuses in self.statuses_per_second.items():
            if int(second) >= start and int(second) + 1 <= end:
                for status, count in statuses.items():
                    counts[int(status)] = counts.get(int(status), 0) + int(count)
        return counts


@dataclass
class WrkSettings:
    """The settings every scenario shares."""

    threads: int
    connections: int
    timeout_s: int = 10


class WrkRun:
    """A wrk process running in the background; `result()` waits for it."""

    def __init__(self, processes, name: str, url: str, settings: WrkSettings, seconds: float,
                 log_dir: str, path: str = "/products/", products: int = 10_000,
                 statuses: bool = False, mix: str = "products", threads: Optional[int] = None,
                 connections: Optional[int] = None) -> None:
        self.name = name
        self.seconds = seconds
        environment = dict(os.environ)
        environment.update({
            "CATALOG_PATH": path,
            "CATALOG_PRODUCTS": str(products),
            "CATALOG_MIX": mix,
            "CATALOG_STATUSES": "1" if statuses else "0",
        })
        duration = max(1, int(round(seconds)))
        argv = [
            ensure_wrk(), "-t", str(threads or settings.threads), "-c", str(connections or settings.connections),
            "-d", f"{duration}s", "--timeout", f"{settings.timeout_s}s", "-s", SCRIPT, url,
        ]
        self.output_path = os.path.join(log_dir, f"wrk-{name}.out")
        self.child = processes.start(f"wrk {name}", argv, self.output_path, wait_listening=False,
                                     env=environment)
        self.processes = processes
        self.limit = duration + settings.timeout_s + 30

    def result(self) -> WrkResult:
        try:
            self.child.popen.wait(timeout=self.limit)
        except subprocess.TimeoutExpired:
            self.processes.stop(self.child)
            raise WrkError(f"wrk {self.name} did not finish within {self.limit} s")
        self.processes.stop(self.child)
        with open(self.output_path, encoding="utf-8", errors="replace") as output:
            text = output.read()
        line = next((line for line in text.splitlines() if line.startswith("WRK_JSON ")), None)
        if line is None:
            raise WrkError(f"wrk {self.name} printed no result:\n{text[-2000:]}")
        data = json.loads(line[len("WRK_JSON "):])
        latency = data.get("latency_us", {})
        percentiles = latency.get("percentiles", {})

        def ms(key: str) -> float:
            return float(percentiles.get(key, 0)) / 1000.0

        return WrkResult(
            requests=int(data.get("requests", 0)),
            seconds=float(data.get("duration_us", 0)) / 1e6,
            errors=data.get("errors", {}),
            p50_ms=ms("50"), p90_ms=ms("90"), p99_ms=ms("99"), p999_ms=ms("99.9"),
            max_ms=float(latency.get("max", 0)) / 1000.0,
            distinct_ids=int(data.get("distinct_ids", 0)),
            statuses_per_second=data.get("statuses_per_second") or {},
        )


def run_wrk(processes, name: str, url: str, settings: WrkSettings, seconds: float, log_dir: str,
            **options) -> WrkResult:
    """Runs wrk in the foreground and returns what it measured."""
    return WrkRun(processes, name, url, settings, seconds, log_dir, **options).result()
