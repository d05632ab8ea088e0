"""The faults, each a row of the report with its outcome: an upstream outage under load, a slow
upstream, a `kill -9` of the service and its restart on the same cache, and PostgreSQL restarted under
two instances' load with an update through one seen on the other's event stream."""

from __future__ import annotations


import subprocess
import time
from typing import Optional

from harness import PRODUCTS, Harness, id_of_rank
from http_calls import call, get_json, put_json
from postgres import PostgresServer, PostgresUnavailable
from probes import EventWatcher, Probe, ProbeAnswer, RssSampler
from processes import Child
from report import NOT_RUN, CheckRow, Report
from wrk_runner import WrkResult, WrkRun, run_wrk

HOTTEST = id_of_rank(1)


def _statuses(counts: dict[int, int]) -> str:
    return ", ".join(f"{count} × {status}" for status, count in sorted(counts.items())) or "none"


def _between(answers: list[ProbeAnswer], start: float, end: float) -> list[ProbeAnswer]:
    return [answer for answer in answers if start <= answer.started < end]


def outage(harness: Harness, report: Report, upstream: Child) -> None:
    """The upstream goes down under load: the service serves its stale values inside the stale-if-error
    window, typed 503s past it, and never crashes."""
    d = harness.durations
    fresh, swr, sie = d.outage_fresh_for, d.outage_stale_while_revalidate, d.outage_stale_if_error
    service = harness.start_service("service-outage", upstream, fresh_for=fresh, stale_while_revalidate=swr,
                                    stale_if_error=sie)
    # No value stored before the outage can be served past this long after it began.
    servable = fresh + max(swr, sie)
    load_seconds = d.outage_before + servable + d.outage_after + 2
    probe = Probe(service.url, lambda _: f"/products/{HOTTEST}", interval=0.1)
    wrk = WrkRun(harness.processes, "outage", service.url, harness.wrk, load_seconds, harness.log_dir,
                 statuses=True)
    probe.start()
    outage_started: Optional[float] = None
    try:
        time.sleep(d.outage_before)
        outage_started = time.time()
        harness.control(upstream, outage=True)
        result = wrk.result()
    finally:
        outage_ended = time.time()
        answers = probe.stop()
        harness.control(upstream, outage=False)
    if outage_started is None:
        raise RuntimeError("the outage did not start")
    alive = service.alive()

    # The hottest key is refreshed whenever it goes stale, so it was stored less than `fresh` before the
    # outage: it is servable for at least `sie` after the outage began, and at most `servable`.
    inside = _between(answers, outage_started + 0.3, outage_started + sie - 0.5)
    past_start = outage_started + servable + 1.5
    past = _between(answers, past_start, outage_ended)
    inside_ok = bool(inside) and all(answer.status == 200 for answer in inside)
    past_ok = bool(past) and all(answer.status == 503 and answer.json_error for answer in past)

    load_inside = result.statuses_between(outage_started + 1, outage_started + sie - 1)
    load_past = result.statuses_between(past_start, outage_ended)
    load_ok = set(load_inside) <= {200, 503} and set(load_past) == {503} and result.socket_errors == 0
    recovered = False
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not recovered:
        try:
            recovered = call("GET", f"{service.url}/products/{HOTTEST}", timeout=5).status == 200
        except OSError:
            pass
        if not recovered:
            time.sleep(0.2)

    window = f"fresh-for {fresh:g} s, stale-while-revalidate {swr:g} s, stale-if-error {sie:g} s"
    report.fault(
        "upstream outage: stale values served inside the stale-if-error window",
        inside_ok and alive,
        f"hottest key: {sum(a.status == 200 for a in inside)}/{len(inside)} probes 200 in the window; "
        f"all load in the window: {_statuses(load_inside)}",
        f"every probe of the hottest key 200 from the outage to {sie - 0.5:g} s in ({window})")
    report.fault(
        "upstream outage: typed 503s past the window, no crash",
        past_ok and load_ok and alive,
        f"hottest key past {servable + 1.5:g} s: {_statuses(_count(past))} (JSON errors: "
        f"{sum(a.json_error for a in past)}); all load past it: {_statuses(load_past)}; "
        f"socket errors {result.socket_errors}; service {'alive' if alive else 'DEAD'}",
        "only 503 with {\"error\": …} once every stored value is past fresh-for + its windows")
    report.fault("upstream outage ended: the service serves again", recovered,
                 "200 within 10 s" if recovered else "no 200 within 10 s", "a 200 within 10 s")
    harness.processes.stop(service)


def _count(answers: list[ProbeAnswer]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for answer in answers:
        counts[answer.status] = counts.get(answer.status, 0) + 1
    return counts


def slow(harness: Harness, report: Report, upstream: Child) -> None:
    """The upstream answers in 2 s (the service's upstream timeout) under load, on a service whose cache
    holds only the keys a short warm-up asked for: every request ends (an answer or a typed error) within
    wrk's timeout, and the service's memory stays flat."""
    seconds = harness.durations.slow
    latency_ms = 2000
    service = harness.start_service("service-slow", upstream)
    run_wrk(harness.processes, "slow-warm-up", service.url, harness.wrk, 2, harness.log_dir)
    harness.reset_stats(upstream)
    sampler = RssSampler(service, interval=0.5)
    # Ids the warm-up is unlikely to have asked for: the tail of the Zipf ranks.
    probe = Probe(service.url, lambda n: f"/products/{id_of_rank(PRODUCTS - n)}", interval=0.5)
    sampler.start()
    harness.control(upstream, latencyMilliseconds=latency_ms)
    probe.start()
    try:
        result = WrkRun(harness.processes, "slow", service.url, harness.wrk, seconds, harness.log_dir,
                        statuses=True).result()
    finally:
        harness.control(upstream, latencyMilliseconds=harness.upstream_latency_ms)
        answers = probe.stop()
        samples = sampler.stop()
    stats = harness.stats(upstream)
    alive = service.alive()
    statuses = result.status_counts()
    timeouts = int(result.errors.get("timeout", 0))
    typed = all(answer.status == 200 or (answer.status >= 500 and answer.json_error) for answer in answers)
    slowest = max((answer.seconds for answer in answers), default=0.0)
    bounded = timeouts == 0 and set(statuses) <= {200, 503, 504} and typed and slowest <= harness.wrk.timeout_s
    third = max(len(samples) // 3, 1)
    first = max(rss for _, rss in samples[:third]) / 1024 if samples else 0.0
    last = max(rss for _, rss in samples[-third:]) / 1024 if samples else 0.0
    flat = bool(samples) and last <= first * 1.25 + 16
    report.fault(
        f"upstream slow ({latency_ms} ms, the service's upstream timeout): errors and timeouts bounded",
        bounded and alive,
        f"{result.requests} answers ({result.throughput:,.0f}/s): {_statuses(statuses)}; wrk timeouts {timeouts}; "
        f"cold-key probes {_statuses(_count(answers))}, slowest {slowest:.1f} s; upstream {stats['requests']} "
        f"requests ({stats['requests'] / max(result.seconds, 1):.0f}/s) for {stats['idsServed']} ids",
        f"no request past wrk's {harness.wrk.timeout_s} s timeout; only 200 or typed 503/504")
    report.fault(
        "upstream slow: the service's RSS stays flat", flat and alive,
        f"max RSS first third {first:.1f} MiB, last third {last:.1f} MiB ({len(samples)} samples over "
        f"{seconds:g} s)",
        "last third ≤ 1.25 × first third + 16 MiB")
    harness.processes.stop(service)


def kill9(harness: Harness, report: Report, upstream: Child) -> None:
    """The service is killed with SIGKILL under load, then restarted on the same cache folder: it serves
    the keys it had cached at once, without calling the upstream."""
    folder = harness.temporary_folder("service-kill9-cache")
    options = dict(cache_directory=folder, fresh_for=600, stale_while_revalidate=0, stale_if_error=600)
    service = harness.start_service("service-kill9", upstream, **options)
    keys = [id_of_rank(rank) for rank in range(1, 51)]
    before = {}
    for key in keys:
        answer = call("GET", f"{service.url}/products/{key}")
        before[key] = answer.json() if answer.status == 200 else None
    cached_ok = all(value is not None for value in before.values())
    wrk = WrkRun(harness.processes, "kill9", service.url, harness.wrk, harness.durations.kill_load,
                 harness.log_dir)
    time.sleep(harness.durations.kill_load / 2)
    harness.processes.kill9(service)
    killed_status = service.popen.returncode
    wrk.result()
    counted = harness.stats(upstream)["requests"]

    started = time.monotonic()
    restarted = harness.start_service("service-kill9-restarted", upstream, **options)
    to_listening = time.monotonic() - started
    first = call("GET", f"{restarted.url}/products/{keys[0]}")
    after = {keys[0]: first.json() if first.status == 200 else None}
    for key in keys[1:]:
        answer = call("GET", f"{restarted.url}/products/{key}")
        after[key] = answer.json() if answer.status == 200 else None
    upstream_calls = harness.stats(upstream)["requests"] - counted
    served = sum(after[key] is not None and after[key] == before[key] for key in keys)
    report.fault(
        "kill -9 mid-load, restart on the same SQLite cache: cached keys served at once",
        cached_ok and killed_status == -9 and served == len(keys) and upstream_calls == 0,
        f"killed (status {killed_status}); listening again in {to_listening:.2f} s; first request "
        f"{first.seconds * 1000:.1f} ms; {served}/{len(keys)} cached keys served unchanged; upstream "
        f"requests during the restart and reads: {upstream_calls}",
        "all 50 keys cached before the kill served as before, 0 upstream requests")
    harness.processes.stop(restarted)


def postgres(harness: Harness, report: Report, upstream: Child) -> None:
    """Two instances sharing PostgreSQL: an update through A seen on B's event stream (and its latency),
    PostgreSQL restarted under both instances' load (errors during the restart only, both recover), and
    the update seen again after the restart (invalidation resumes)."""
    names = ("PostgreSQL: update via A seen on B's /events", "PostgreSQL restarted under load",
             "PostgreSQL: invalidation resumes after the restart")
    help_text = subprocess.run([f"{harness.bin_dir}/catalog-server", "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    if "--postgres" not in help_text:
        for name in names:
            report.faults.append(CheckRow(name, NOT_RUN, "catalog-server has no --postgres option", ""))
        return
    try:
        server = PostgresServer(harness.processes)
    except PostgresUnavailable as error:
        for name in names:
            report.faults.append(CheckRow(name, NOT_RUN, str(error), ""))
        return

    a = harness.start_service("service-pg-a", upstream, postgres=server.url, instance_id="a")
    b = harness.start_service("service-pg-b", upstream, postgres=server.url, instance_id="b")
    key = id_of_rank(PRODUCTS // 2)
    first_latency, first_outcome = _update_seen(a, b, key, "before the restart", limit=10)
    report.fault(names[0], first_latency is not None, first_outcome, "seen within 10 s")

    seconds = harness.durations.postgres_load
    half = max(1, harness.wrk.connections // 2)
    loads = [WrkRun(harness.processes, f"pg-{name}", child.url, harness.wrk, seconds, harness.log_dir,
                    statuses=True, threads=1, connections=half) for name, child in (("a", a), ("b", b))]
    probes = [Probe(child.url, lambda _: f"/products/{HOTTEST}", interval=0.2) for child in (a, b)]
    for probe in probes:
        probe.start()
    load_started = time.time()
    try:
        time.sleep(seconds / 3)
        stopped = time.time()
        server.stop("fast")
        time.sleep(harness.durations.postgres_down)
        server.start()
        started = time.time()
        results = [load.result() for load in loads]
        load_ended = time.time()
    finally:
        answers = [probe.stop() for probe in probes]
    alive = a.alive() and b.alive()

    figures = []
    ok = alive
    for name, result, probed in zip("AB", results, answers):
        before = result.statuses_between(load_started, stopped)
        during = result.statuses_between(stopped - 1, load_ended)
        tail = result.last_full_seconds(2)
        recovery = _recovery_seconds(result, started, load_ended - 1)
        ok = ok and set(before) <= {200} and bool(tail) and set(tail) <= {200} and recovery is not None
        errors = sum(count for status, count in during.items() if status != 200)
        unanswered = sum(answer.status == 0 for answer in probed)
        ok = ok and unanswered == 0
        slowest = max((answer.seconds for answer in probed), default=0.0)
        figures.append(f"{name}: before {_statuses(before)}; from the stop on {errors} non-200 "
                       f"({_statuses({s: c for s, c in during.items() if s != 200})}), "
                       f"{result.socket_errors} socket errors, slowest answer {result.max_ms / 1000:.1f} s; "
                       f"probes {_statuses(_count(probed))}, slowest {slowest:.1f} s; "
                       + (f"all 200 again {recovery:.0f} s after the start" if recovery is not None else
                          "NOT recovered"))
    report.fault(names[1], ok,
                 f"down {started - stopped:.1f} s; " + "; ".join(figures),
                 "no error before the stop, only 200s in the last 2 s, every probe answered (15 s), "
                 "both instances alive")

    # The instances reconnect their listeners with a backoff, so the first update after the restart may
    # take longer than the one before; how long is the figure.
    since_restart = time.time() - started
    second_latency, second_outcome = _update_seen(a, b, key, "after the restart", limit=30)
    report.fault(names[2], second_latency is not None and alive,
                 f"{second_outcome}; asked {since_restart:.0f} s after PostgreSQL was back",
                 "seen within 30 s")
    harness.processes.stop(a)
    harness.processes.stop(b)


def _recovery_seconds(result: WrkResult, restarted: float, end: float) -> Optional[float]:
    """How long after `restarted` the answers were all 200 again, until `end` (None: never)."""
    seconds = sorted(int(second) for second in result.statuses_per_second)
    recovered_at: Optional[int] = None
    for second in seconds:
        if second + 1 > end:
            break
        statuses = result.statuses_per_second[str(second)]
        if any(status != "200" for status in statuses):
            recovered_at = None
        elif recovered_at is None:
            recovered_at = second
    if recovered_at is None:
        return None
    return max(0.0, recovered_at - restarted)


def _update_seen(a: Child, b: Child, key: int, label: str, limit: float) -> tuple[Optional[float], str]:
    """PUTs a renamed product through A and waits for B's event stream to show it. Returns the seconds
    from the PUT to the event (None when not seen within `limit`) and what happened, in words."""
    watcher = EventWatcher("127.0.0.1", b.port or 0, f"/products/{key}/events")
    opened = time.time()
    watcher.start()
    try:
        if watcher.wait_for(lambda _: True, timeout=limit) is None:
            return None, (f"B's /events stream sent no first state within {limit:g} s "
                          f"(status {watcher.status}, {watcher.error or 'no error'})")
        first_state = time.time() - opened
        product = get_json(f"{a.url}/products/{key}", timeout=limit)
        name = f"Renamed {label} {time.time():.6f}"
        product["name"] = name
        seen_before = len(watcher.lines)
        put_started = time.time()
        put_json(f"{a.url}/products/{key}", product, timeout=limit)
        put_seconds = time.time() - put_started
        seen = watcher.wait_for(lambda line: name in line, timeout=limit, after=seen_before)
        if seen is None:
            return None, (f"not seen within {limit:g} s (first state after {first_state * 1000:.0f} ms, PUT "
                          f"answered in {put_seconds * 1000:.0f} ms)")
        return seen - put_started, (f"seen {(seen - put_started) * 1000:.0f} ms after the PUT (PUT answered in "
                                    f"{put_seconds * 1000:.0f} ms)")
    finally:
        watcher.close()
