"""A throwaway PostgreSQL server for the load test: initdb and pg_ctl into a temporary folder, on a free
loopback port, with its unix socket in that folder; run as the `postgres` user when the load test runs as
root (PostgreSQL refuses root). The same approach as the Swift helper
Integrations/Postgres/Sources/StoreFlowablePostgresTestServer/TestPostgresServer.swift, watchdog included:
a shell loop stops the server and deletes the folder once the load test's process is gone, however it
ended."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from typing import Optional


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server binaries (or the user to run them as) are missing."""


def find_binaries() -> str:
    """The folder holding initdb and pg_ctl: on PATH, else the newest /usr/lib/postgresql/*/bin."""
    for folder in os.environ.get("PATH", "").split(":"):
        if folder and all(os.access(os.path.join(folder, tool), os.X_OK) for tool in ("initdb", "pg_ctl")):
            return folder
    candidates = glob.glob("/usr/lib/postgresql/*/bin")

    def version(path: str) -> int:
        name = path.split("/")[-2]
        return int(name) if name.isdigit() else 0

    for folder in sorted(candidates, key=version, reverse=True):
        if all(os.access(os.path.join(folder, tool), os.X_OK) for tool in ("initdb", "pg_ctl")):
            return folder
    raise PostgresUnavailable(
        "PostgreSQL's initdb and pg_ctl are neither on PATH nor in /usr/lib/postgresql/*/bin "
        "(Debian: apt-get install postgresql)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    """One throwaway server. `start()` and `stop()` may be called again (a restart keeps the data)."""

    user = "storeflowable"

    def __init__(self, processes) -> None:
        self.binaries = find_binaries()
        self.run_as: Optional[str] = None
        if os.geteuid() == 0:
            try:
                account = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable("running as root, but there is no 'postgres' user to run PostgreSQL as")
            self.run_as = "postgres"
        self.folder = tempfile.mkdtemp(prefix="catalog-loadtest-pg-")
        if self.run_as:
            os.chown(self.folder, account.pw_uid, account.pw_gid)
        self.port = free_port()
        self._start_watchdog()
        processes.add_cleanup(self.destroy)
        self._run("initdb", ["-D", f"{self.folder}/data", "-A", "trust", "-U", self.user, "-E", "UTF8",
                             "--no-sync"])
        self.start()

    @property
    def url(self) -> str:
        return f"postgres://{self.user}@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=200 "
                   "-c fsync=off -c full_page_writes=off")
        self._run("pg_ctl", ["-D", f"{self.folder}/data", "-l", f"{self.folder}/server.log", "-w", "-t", "60",
                             "-o", options, "start"])

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", ["-D", f"{self.folder}/data", "-m", mode, "-w", "-t", "60", "stop"])

    def destroy(self) -> None:
        """Stops the server (if it runs) and deletes its folder."""
        subprocess.run(self._as_user([f"{self.binaries}/pg_ctl", "-D", f"{self.folder}/data", "-m", "immediate",
                                      "-w", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _as_user(self, command: list[str]) -> list[str]:
        if not self.run_as:
            return command
        runuser = "/usr/sbin/runuser" if os.path.exists("/usr/sbin/runuser") else "/sbin/runuser"
        return [runuser, "-u", self.run_as, "--"] + command

    def _run(self, tool: str, arguments: list[str]) -> None:
        command = self._as_user([f"{self.binaries}/{tool}"] + arguments)
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=120, check=False)
        if done.returncode != 0:
            log = ""
            try:
                with open(f"{self.folder}/server.log", encoding="utf-8", errors="replace") as server_log:
                    log = server_log.read()[-2000:]
            except OSError:
                pass
            raise RuntimeError(f"{' '.join(command)} exited with {done.returncode}:\n"
                               f"{done.stdout.decode(errors='replace')[-2000:]}\n{log}")

    def _start_watchdog(self) -> None:
        stop = " ".join(f"'{part}'" for part in self._as_user(
            [f"{self.binaries}/pg_ctl", "-D", f"{self.folder}/data", "-m", "immediate", "-w", "stop"]))
        script = (f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done\n"
                  f"{stop} >/dev/null 2>&1\nrm -rf '{self.folder}'\n")
        shell = ["/bin/sh", "-c", script]
        if shutil.which("setsid"):
            shell = [shutil.which("setsid")] + shell
        subprocess.Popen(shell, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
