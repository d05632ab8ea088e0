"""The headline measurement, (a) the store-backed service, (b) the same handler calling the upstream on
every request and (c) a fixed value from memory, side by side with the same wrk settings; (a′) the store-backed
service with nothing to refresh; and the soak."""

from __future__ import annotations

import math
import statistics

from harness import PRODUCTS, Harness
from probes import RssSampler
from processes import Child
from report import MET, MISSED, NOT_RUN, CheckRow, LoadRow, Report
from wrk_runner import WrkResult, run_wrk

FRESH_FOR = 5
STALE_WHILE_REVALIDATE = 30
STALE_IF_ERROR = 300
# (a′): fresh for longer than its warm-up and measurement, so that nothing is refreshed while it runs.
STEADY_FRESH_FOR = 600


def _row(name: str, result: WrkResult, stats: dict | None) -> LoadRow:
    return LoadRow(
        scenario=name, requests=result.requests, seconds=result.seconds, throughput=result.throughput,
        p50_ms=result.p50_ms, p99_ms=result.p99_ms, non_2xx=result.non_2xx, socket_errors=result.socket_errors,
        upstream_requests=None if stats is None else int(stats["requests"]),
        upstream_ids=None if stats is None else int(stats["idsServed"]),
        distinct_ids=result.distinct_ids)


def headline(harness: Harness, report: Report) -> tuple[Child, Child]:
    """Runs (a), (b) and (c) against one upstream and one service, then (a′) on a second service whose
    products stay fresh through its run; returns the upstream and the first service, still running."""
    upstream = harness.start_upstream("upstream")
    service = harness.start_service("service", upstream, fresh_for=FRESH_FOR,
                                    stale_while_revalidate=STALE_WHILE_REVALIDATE, stale_if_error=STALE_IF_ERROR)
    seconds = harness.durations.load
    passes, covered = _warm(harness, upstream, service, "")

    results: dict[str, tuple[WrkResult, dict]] = {}
    for key, name, path in (("a", "(a) store-backed GET /products/{id}", "/products/"),
                            ("b", "(b) direct GET /direct/products/{id}", "/direct/products/"),
                            ("c", "(c) fixed GET /fixed/products/{id}", "/fixed/products/")):
        harness.reset_stats(upstream)
        result = run_wrk(harness.processes, key, service.url, harness.wrk, seconds, harness.log_dir, path=path)
        stats = harness.stats(upstream)
        results[key] = (result, stats)
        report.load.append(_row(name, result, stats))

    # (a′): the same handler on a service of its own whose products stay fresh for the whole measurement,
    # so that nothing is refreshed while it runs: what the stores' hit path costs, apart from refreshes.
    steady_service = harness.start_service("service-steady", upstream, fresh_for=STEADY_FRESH_FOR,
                                           stale_while_revalidate=STALE_WHILE_REVALIDATE,
                                           stale_if_error=STALE_IF_ERROR)
    try:
        _warm(harness, upstream, steady_service, "steady-")
        harness.reset_stats(upstream)
        steady = run_wrk(harness.processes, "a-steady", steady_service.url, harness.wrk, seconds, harness.log_dir)
        steady_stats = harness.stats(upstream)
    finally:
        harness.processes.stop(steady_service)
    report.load.append(_row(f"(a′) as (a), nothing to refresh (--fresh-for {STEADY_FRESH_FOR})", steady,
                            steady_stats))

    a, a_stats = results["a"]
    c, _ = results["c"]
    ratio = a.throughput / c.throughput if c.throughput else 0.0
    report.targets.append(_target("(a) throughput ≥ 0.8 × (c) once warm", ratio >= 0.8,
                                  f"{ratio:.2f} × ({a.throughput:,.0f} vs {c.throughput:,.0f} req/s)", "≥ 0.80 ×"))
    p99_ratio = a.p99_ms / c.p99_ms if c.p99_ms else math.inf
    report.targets.append(_target("(a) p99 ≤ 2 × (c) p99", p99_ratio <= 2.0,
                                  f"{p99_ratio:.2f} × ({a.p99_ms:.2f} vs {c.p99_ms:.2f} ms)", "≤ 2.00 ×"))
    # Each key is fetched at most once per freshness period: at its first request, then on the first
    # request after it went stale (one fetch shared by every caller: single flight).
    refreshes = math.floor(a.seconds / FRESH_FOR) + 1
    bound = a.distinct_ids * refreshes
    fetched = int(a_stats["idsServed"])
    # The upstream counts the requests it served; those it refused as malformed apart (the service should
    # send none).
    requests = int(a_stats["requests"])
    refused = int(a_stats.get("rejectedRequests", 0))
    report.targets.append(_target(
        "(a) upstream requests ≤ distinct keys × refreshes", fetched <= bound and requests <= bound and refused == 0,
        f"{requests} requests for {fetched} ids ({a.requests} served), {refused} refused as malformed",
        f"≤ {a.distinct_ids} keys × {refreshes} refreshes (⌊{a.seconds:.0f} s / fresh-for {FRESH_FOR} s⌋ + 1) "
        f"= {bound}"))
    everything = list(results.items()) + [("a′", (steady, steady_stats))]
    all_200 = all(result.non_2xx == 0 and result.socket_errors == 0 for _, (result, _) in everything)
    report.fault("steady load: every answer of (a), (b), (c), (a′) is a 200", all_200,
                 ", ".join(f"({key}) {result.non_2xx} non-2xx, {result.socket_errors} socket errors"
                           for key, (result, _) in everything),
                 "0 non-2xx, 0 socket errors")
    report.notes.append(
        f"(a)'s service: --fresh-for {FRESH_FOR} --stale-while-revalidate {STALE_WHILE_REVALIDATE} "
        f"--stale-if-error {STALE_IF_ERROR}; upstream latency {harness.upstream_latency_ms} ms. Warm-up: every id "
        f"in turn ({passes} × {harness.durations.warm_up_catalogue:g} s: {covered} of {PRODUCTS:,} ids fetched), then "
        f"{harness.durations.warm_up:g} s of the mix. The upstream's counts are reset before each scenario.")
    steady_ratio = steady.throughput / c.throughput if c.throughput else 0.0
    steady_p99 = steady.p99_ms / c.p99_ms if c.p99_ms else math.inf
    report.notes.append(
        f"(a′), not a target: the same handler and warm-up on a second service with --fresh-for {STEADY_FRESH_FOR}, "
        f"so no product is refreshed while it is measured: {steady_ratio:.2f} × (c)'s throughput, p99 "
        f"{steady_p99:.2f} × (c)'s. The difference from (a) is what refreshing the products that went stale "
        f"costs ({fetched} ids in (a)).")
    return upstream, service


def _warm(harness: Harness, upstream: Child, service: Child, tag: str) -> tuple[int, int]:
    """Warms `service`: every id once (many connections, so that the misses go out in full batches; a busy
    machine may need more than one pass, at most four), then the mix. Returns the passes and how many
    distinct ids the upstream served."""
    harness.reset_stats(upstream)
    covered = 0
    passes = 0
    for attempt in range(4):
        passes += 1
        run_wrk(harness.processes, f"{tag}warm-up-catalogue-{attempt}", service.url, harness.wrk,
                harness.durations.warm_up_catalogue, harness.log_dir, mix="sequential",
                connections=max(harness.wrk.connections, 256))
        covered = int(harness.stats(upstream)["distinctIdsServed"])
        if covered >= PRODUCTS:
            break
    run_wrk(harness.processes, f"{tag}warm-up", service.url, harness.wrk, harness.durations.warm_up,
            harness.log_dir)
    return passes, covered


def _target(name: str, met: bool, measured: str, bound: str) -> CheckRow:
    return CheckRow(name, MET if met else MISSED, measured, bound)


def soak(harness: Harness, report: Report, service: Child) -> None:
    """The mixed load (94% product reads, 5% list pages, 1% writes) for `soak_minutes`, sampling the
    service's RSS every 5 seconds; flat when the last minute's mean is within 10% (+8 MiB) of the first's."""
    minutes = harness.durations.soak_minutes
    if minutes <= 0:
        report.faults.append(_not_run("soak: RSS after the mixed load is flat", "run with --soak 10"))
        return
    sampler = RssSampler(service, interval=5.0)
    sampler.start()
    try:
        result = run_wrk(harness.processes, "soak", service.url, harness.wrk, minutes * 60, harness.log_dir,
                         mix="mixed", statuses=True)
    finally:
        samples = sampler.stop()
    first = [rss for at, rss in samples if at < 60]
    last = [rss for at, rss in samples if at >= samples[-1][0] - 60] if samples else []
    if not first or not last:
        report.fault(f"soak ({minutes:g} min): RSS flat", False, "no RSS samples (the service is gone?)")
        return
    first_mib = statistics.mean(first) / 1024
    last_mib = statistics.mean(last) / 1024
    flat = last_mib <= first_mib * 1.10 + 8 and service.alive()
    report.fault(
        f"soak ({minutes:g} min mixed load): RSS flat", flat,
        f"first minute {first_mib:.1f} MiB, last minute {last_mib:.1f} MiB, max "
        f"{max(rss for _, rss in samples) / 1024:.1f} MiB; {result.requests} requests, "
        f"{result.throughput:,.0f} req/s, statuses {_statuses(result.status_counts())}, {result.socket_errors} "
        f"socket errors",
        "last-minute mean ≤ 1.10 × first-minute mean + 8 MiB")


def _statuses(counts: dict[int, int]) -> str:
    return ", ".join(f"{count} × {status}" for status, count in sorted(counts.items())) or "none"


def _not_run(name: str, why: str) -> CheckRow:
    return CheckRow(name, NOT_RUN, why, "")
