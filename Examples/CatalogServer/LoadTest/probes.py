"""Watchers that run beside wrk: a probe that requests one path on a schedule, a sampler of a process's
resident memory, and a reader of a server-sent events stream."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from http_calls import call


@dataclass
class ProbeAnswer:
    """One probe request: when it started (wall clock), its status (0: no answer), whether a non-200
    body was a typed JSON error, and how long it took."""

    started: float
    status: int
    json_error: bool
    seconds: float


class Probe(threading.Thread):
    """Requests `path_of(n)` every `interval` seconds (the n-th request) until stopped."""

    def __init__(self, base_url: str, path_of: Callable[[int], str], interval: float, timeout: float = 15.0):
        super().__init__(daemon=True)
        self.base_url = base_url
        self.path_of = path_of
        self.interval = interval
        self.timeout = timeout
        self.answers: list[ProbeAnswer] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        number = 0
        while not self._stop_event.is_set():
            started = time.time()
            try:
                answer = call("GET", self.base_url + self.path_of(number), timeout=self.timeout)
                self.answers.append(ProbeAnswer(started, answer.status,
                                                answer.status != 200 and answer.is_json_error(), answer.seconds))
            except OSError:
                self.answers.append(ProbeAnswer(started, 0, False, time.time() - started))
            number += 1
            self._stop_event.wait(max(0.0, self.interval - (time.time() - started)))

    def stop(self) -> list[ProbeAnswer]:
        self._stop_event.set()
        self.join(timeout=self.timeout + 5)
        return list(self.answers)


class RssSampler(threading.Thread):
    """Samples a process's VmRSS (KiB) every `interval` seconds until stopped."""

    def __init__(self, child, interval: float):
        super().__init__(daemon=True)
        self.child = child
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        while not self._stop_event.is_set():
            rss = self.child.rss_kib()
            if rss is not None:
                self.samples.append((time.monotonic() - start, rss))
            self._stop_event.wait(self.interval)

    def stop(self) -> list[tuple[float, int]]:
        self._stop_event.set()
        self.join(timeout=self.interval + 5)
        return list(self.samples)


class EventWatcher(threading.Thread):
    """Reads a server-sent events stream (`GET path`), keeping each `data:` line with the time it
    arrived, until closed."""

    def __init__(self, host: str, port: int, path: str, read_timeout: float = 60.0):
        super().__init__(daemon=True)
        self.connection = http.client.HTTPConnection(host, port, timeout=read_timeout)
        self.path = path
        self.lines: list[tuple[float, str]] = []
        self.status: Optional[int] = None
        self.error: Optional[str] = None
        self._changed = threading.Condition()
        self._closed = False

    def run(self) -> None:
        try:
            self.connection.request("GET", self.path, headers={"Accept": "text/event-stream"})
            response = self.connection.getresponse()
            with self._changed:
                self.status = response.status
                self._changed.notify_all()
            while True:
                raw = response.readline()
                if not raw:
                    break
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if line.startswith("data:"):
                    with self._changed:
                        self.lines.append((time.time(), line[5:].strip()))
                        self._changed.notify_all()
        except Exception as error:  # closing the connection under a blocked read raises varied errors
            if not self._closed:
                self.error = f"{type(error).__name__}: {error}"
        finally:
            with self._changed:
                self._closed = True
                self._changed.notify_all()

    def wait_for(self, predicate: Callable[[str], bool], timeout: float, after: int = 0) -> Optional[float]:
        """Waits at most `timeout` seconds for a data line, from the `after`-th on, for which `predicate`
        holds; returns the wall-clock time it arrived, or None."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for arrived, line in self.lines[after:]:
                    if predicate(line):
                        return arrived
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    return None
                self._changed.wait(remaining)

    def close(self) -> None:
        self._closed = True
        sock = self.connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.connection.close()
        self.join(timeout=5)
