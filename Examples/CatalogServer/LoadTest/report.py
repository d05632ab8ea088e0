"""The load test's results: rows in three tables (load, targets, faults), printed as Markdown and saved
as JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

PASS, FAIL, MET, MISSED, NOT_RUN, INFO = "PASS", "FAIL", "MET", "MISSED", "NOT RUN", "INFO"


@dataclass
class LoadRow:
    scenario: str
    requests: int
    seconds: float
    throughput: float
    p50_ms: float
    p99_ms: float
    non_2xx: int
    socket_errors: int
    upstream_requests: Optional[int]
    upstream_ids: Optional[int]
    distinct_ids: int

    @property
    def upstream_per_served(self) -> Optional[float]:
        if self.upstream_requests is None or self.requests == 0:
            return None
        return self.upstream_requests / self.requests


@dataclass
class CheckRow:
    name: str
    result: str
    measured: str
    bound: str = ""


@dataclass
class Report:
    mode: str
    settings: dict[str, Any]
    load: list[LoadRow] = field(default_factory=list)
    targets: list[CheckRow] = field(default_factory=list)
    faults: list[CheckRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    def fault(self, name: str, passed: bool, measured: str, bound: str = "") -> None:
        self.faults.append(CheckRow(name, PASS if passed else FAIL, measured, bound))

    def failed(self) -> list[CheckRow]:
        return [row for row in self.faults if row.result == FAIL]

    def missed(self) -> list[CheckRow]:
        return [row for row in self.targets if row.result == MISSED]

    def markdown(self) -> str:
        lines = [f"### Catalogue server load test ({self.mode}, {self.duration_s:.0f} s)", ""]
        lines.append("Settings: " + ", ".join(f"{key} {value}" for key, value in self.settings.items()))
        lines += ["", "| Scenario | Requests | Throughput (req/s) | p50 (ms) | p99 (ms) | Non-2xx | Socket errors "
                  "| Upstream requests (ids) | Upstream req per served | Distinct ids |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for row in self.load:
            upstream = "—" if row.upstream_requests is None else f"{row.upstream_requests} ({row.upstream_ids})"
            per = "—" if row.upstream_per_served is None else f"{row.upstream_per_served:.4f}"
            lines.append(f"| {row.scenario} | {row.requests} | {row.throughput:,.0f} | {row.p50_ms:.2f} | "
                         f"{row.p99_ms:.2f} | {row.non_2xx} | {row.socket_errors} | {upstream} | {per} | "
                         f"{row.distinct_ids} |")
        if self.targets:
            lines += ["", "| Target | Bound | Measured | Result |", "|---|---|---|---|"]
            for row in self.targets:
                lines.append(f"| {row.name} | {row.bound} | {row.measured} | {row.result} |")
        if self.faults:
            lines += ["", "| Check | Expected | Measured | Result |", "|---|---|---|---|"]
            for row in self.faults:
                lines.append(f"| {row.name} | {row.bound} | {row.measured} | {row.result} |")
        if self.notes:
            lines += [""] + [f"- {note}" for note in self.notes]
        return "\n".join(lines)

    def to_json(self) -> str:
        data = asdict(self)
        for row, source in zip(data["load"], self.load):
            row["upstream_per_served"] = source.upstream_per_served
        return json.dumps(data, indent=2)
