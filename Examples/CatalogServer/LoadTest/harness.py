"""What every scenario shares: the built binaries, the log folder, the wrk settings and the durations,
and how the upstream and the service are started."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import Optional

from http_calls import call, get_json, put_json
from processes import Child, Processes
from wrk_runner import WrkSettings

PRODUCTS = 10_000


def id_of_rank(rank: int, products: int = PRODUCTS) -> int:
    """The product id of the `rank`-th most requested id in catalog.lua's mix (the same permutation)."""
    if products % 7919 == 0:
        return rank
    return ((rank - 1) * 7919) % products + 1


@dataclass
class Durations:
    """How long each part runs, in seconds."""

    warm_up_catalogue: float
    warm_up: float
    load: float
    slow: float
    outage_before: float
    outage_after: float
    outage_fresh_for: float
    outage_stale_while_revalidate: float
    outage_stale_if_error: float
    kill_load: float
    postgres_load: float
    postgres_down: float
    soak_minutes: float

    @staticmethod
    def short() -> "Durations":
        return Durations(warm_up_catalogue=3, warm_up=2, load=5, slow=10, outage_before=2, outage_after=2,
                         outage_fresh_for=1, outage_stale_while_revalidate=1, outage_stale_if_error=4,
                         kill_load=4, postgres_load=10, postgres_down=1, soak_minutes=0)

    @staticmethod
    def full(soak_minutes: float) -> "Durations":
        return Durations(warm_up_catalogue=5, warm_up=10, load=30, slow=30, outage_before=5, outage_after=5,
                         outage_fresh_for=2, outage_stale_while_revalidate=2, outage_stale_if_error=10,
                         kill_load=10, postgres_load=40, postgres_down=3, soak_minutes=soak_minutes)


@dataclass
class Harness:
    processes: Processes
    bin_dir: str
    log_dir: str
    wrk: WrkSettings
    durations: Durations
    short: bool
    upstream_latency_ms: int = 20

    def log(self, name: str) -> str:
        return os.path.join(self.log_dir, f"{name}.log")

    def start_upstream(self, name: str = "upstream") -> Child:
        return self.processes.start(
            name, [os.path.join(self.bin_dir, "catalog-upstream"), "--host", "127.0.0.1", "--port", "0",
                   "--products", str(PRODUCTS), "--latency-ms", str(self.upstream_latency_ms)],
            self.log(name))

    def start_service(self, name: str, upstream: Child, *, cache_directory: Optional[str] = None,
                      postgres: Optional[str] = None, instance_id: Optional[str] = None,
                      fresh_for: float = 5, stale_while_revalidate: float = 30,
                      stale_if_error: float = 300) -> Child:
        argv = [os.path.join(self.bin_dir, "catalog-server"), "--host", "127.0.0.1", "--port", "0",
                "--upstream", upstream.url or "", "--fresh-for", f"{fresh_for:g}",
                "--stale-while-revalidate", f"{stale_while_revalidate:g}", "--stale-if-error",
                f"{stale_if_error:g}", "--log-level", "warning"]
        if postgres:
            argv += ["--postgres", postgres, "--instance-id", instance_id or name]
        else:
            argv += ["--cache-directory", cache_directory or self.temporary_folder(name)]
        return self.processes.start(name, argv, self.log(name))

    def temporary_folder(self, name: str) -> str:
        return tempfile.mkdtemp(prefix=f"{name}-", dir=self.log_dir)

    # The upstream's control and counts.

    @staticmethod
    def control(upstream: Child, **fields) -> dict:
        return put_json(f"{upstream.url}/control", fields)

    @staticmethod
    def reset_stats(upstream: Child) -> None:
        answer = call("POST", f"{upstream.url}/stats/reset")
        if answer.status != 200:
            raise RuntimeError(f"POST /stats/reset: {answer.status}")

    @staticmethod
    def stats(upstream: Child) -> dict:
        return get_json(f"{upstream.url}/stats")
