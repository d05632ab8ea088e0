"""The processes the load test starts, and the guarantee that every one of them ends with it.

Each child runs in a process group of its own (so that a signal reaches everything it started) and, on
Linux, is told to die with the load test (PR_SET_PDEATHSIG), so that even a `kill -9` of the load test
leaves nothing behind. `Processes.stop_all` ends the groups that are still running: the load test calls it
in a `finally`, at exit, and on SIGINT, SIGTERM and SIGHUP.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import re
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

LISTENING = re.compile(r"listening on (http://[0-9.]+:(\d+))")


def _die_with_parent() -> None:
    """Runs in the child before exec: asks Linux to send SIGKILL when the load test dies."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass  # not Linux: the process group and stop_all still end the child


class StartError(RuntimeError):
    """A child that could not start, or did not print its `listening on` line in time."""


@dataclass
class Child:
    """One started process: its name, its `Popen`, its log, and its URL once listening."""

    name: str
    popen: subprocess.Popen
    log_path: str
    url: Optional[str] = None
    port: Optional[int] = None
    drainer: Optional[threading.Thread] = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def rss_kib(self) -> Optional[int]:
        """The resident set size from /proc/PID/status (VmRSS), or None once the process is gone."""
        try:
            with open(f"/proc/{self.pid}/status", encoding="ascii", errors="replace") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except (OSError, ValueError, IndexError):
            return None
        return None

    def log_tail(self, lines: int = 20) -> str:
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                return "".join(log.readlines()[-lines:])
        except OSError:
            return ""


class Processes:
    """Starts children and ends them all, however the load test ends."""

    def __init__(self) -> None:
        self._children: list[Child] = []
        self._cleanups: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        atexit.register(self.stop_all)

    def add_cleanup(self, cleanup: Callable[[], None]) -> None:
        """Runs `cleanup` in stop_all, after the children are stopped (last added, first run)."""
        with self._lock:
            self._cleanups.append(cleanup)

    def start(
        self,
        name: str,
        argv: list[str],
        log_path: str,
        wait_listening: bool = True,
        timeout: float = 60.0,
        env: Optional[dict[str, str]] = None,
    ) -> Child:
        """Starts `argv`, its standard error (and standard output after the first line) into
        `log_path`, and, with `wait_listening`, waits at most `timeout` seconds for its
        `listening on http://HOST:PORT` line."""
        log = open(log_path, "ab")
        try:
            popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if wait_listening else log,
                stderr=log,
                start_new_session=True,
                preexec_fn=_die_with_parent,
                env=env,
            )
        finally:
            log.close()
        child = Child(name=name, popen=popen, log_path=log_path)
        with self._lock:
            self._children.append(child)
        if wait_listening:
            self._wait_listening(child, timeout)
        return child

    def _wait_listening(self, child: Child, timeout: float) -> None:
        assert child.popen.stdout is not None
        stdout = child.popen.stdout
        deadline = time.monotonic() + timeout
        buffered = b""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop(child)
                raise StartError(
                    f"{child.name} printed no 'listening on' line within {timeout:.0f} s; its log:\n"
                    + child.log_tail())
            ready, _, _ = select.select([stdout], [], [], min(remaining, 0.5))
            if not ready:
                if not child.alive():
                    raise StartError(
                        f"{child.name} exited with status {child.popen.returncode} before listening; its log:\n"
                        + child.log_tail())
                continue
            chunk = os.read(stdout.fileno(), 4096)
            if not chunk:
                child.popen.wait(timeout=5)
                raise StartError(
                    f"{child.name} closed its output (status {child.popen.returncode}) before listening; "
                    f"its log:\n" + child.log_tail())
            buffered += chunk
            match = LISTENING.search(buffered.decode("utf-8", errors="replace"))
            if match:
                child.url = match.group(1)
                child.port = int(match.group(2))
                break
        # Keep reading what the child writes later, so that a full pipe never blocks it.
        child.drainer = threading.Thread(target=self._drain, args=(stdout, child.log_path), daemon=True)
        child.drainer.start()

    @staticmethod
    def _drain(stdout, log_path: str) -> None:
        with open(log_path, "ab") as log:
            while True:
                try:
                    chunk = os.read(stdout.fileno(), 65536)
                except OSError:
                    return
                if not chunk:
                    return
                log.write(chunk)
                log.flush()

    def kill9(self, child: Child) -> None:
        """Sends SIGKILL to the child alone (not its group), as a crash would, and reaps it."""
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            child.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def stop(self, child: Child, grace: float = 10.0) -> Optional[int]:
        """Sends SIGTERM to the child's group, waits at most `grace` seconds, then SIGKILLs the group.
        Returns the child's exit status (None if it could not be reaped)."""
        if child.alive():
            self._signal_group(child, signal.SIGTERM)
            try:
                child.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        # Whatever is left of the group, the child included.
        self._signal_group(child, signal.SIGKILL)
        try:
            child.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None
        if child.popen.stdout is not None:
            try:
                child.popen.stdout.close()
            except OSError:
                pass
        with self._lock:
            if child in self._children:
                self._children.remove(child)
        return child.popen.returncode

    @staticmethod
    def _signal_group(child: Child, sig: int) -> None:
        try:
            os.killpg(child.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop_all(self) -> None:
        """Stops every child still running, then runs the cleanups. Safe to call more than once."""
        with self._lock:
            children = list(self._children)
            cleanups = list(reversed(self._cleanups))
            self._cleanups.clear()
        for child in children:
            self.stop(child, grace=5.0)
        for cleanup in cleanups:
            try:
                cleanup()
            except Exception as error:  # a cleanup that fails must not stop the others
                print(f"loadtest: cleanup failed: {error}")


def exit_on_signals() -> None:
    """Turns SIGTERM and SIGHUP into SystemExit (and SIGINT into KeyboardInterrupt, as usual), so that
    the `finally` blocks and the atexit handlers stop the children."""

    def handler(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)
    # Also when started in the background by a shell, which starts it with SIGINT ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
