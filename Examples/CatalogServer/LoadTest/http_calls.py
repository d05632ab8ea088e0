"""Plain HTTP calls to the upstream and the service, on loopback only, each with a timeout."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class Answer:
    """An HTTP answer: status, body, and how long the call took in seconds."""

    status: int
    body: bytes
    seconds: float

    def json(self) -> Any:
        return json.loads(self.body)

    def is_json_error(self) -> bool:
        """Whether the body is `{"error": "..."}` with a non-empty message."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return False
        return isinstance(value, dict) and isinstance(value.get("error"), str) and bool(value["error"])


def _split(url: str) -> tuple[str, int, str]:
    parts = urllib.parse.urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"the load test only talks to loopback, not {parts.hostname}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.hostname, parts.port or 80, path


def call(method: str, url: str, body: Optional[Any] = None, timeout: float = 10.0) -> Answer:
    """Calls `url` once (a new connection), with `body` as JSON when given. Raises OSError (and
    http.client errors) when the call fails; every status is an answer."""
    host, port, path = _split(url)
    headers = {"Connection": "close"}
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    started = time.monotonic()
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return Answer(response.status, data, time.monotonic() - started)
    finally:
        connection.close()


def get_json(url: str, timeout: float = 10.0) -> Any:
    """GETs `url` and returns its JSON body; raises RuntimeError on a status other than 200."""
    answer = call("GET", url, timeout=timeout)
    if answer.status != 200:
        raise RuntimeError(f"GET {url}: {answer.status} {answer.body[:200]!r}")
    return answer.json()


def put_json(url: str, body: Any, timeout: float = 10.0) -> Any:
    """PUTs `body` to `url` and returns the JSON answer; raises RuntimeError on a status other than 200."""
    answer = call("PUT", url, body=body, timeout=timeout)
    if answer.status != 200:
        raise RuntimeError(f"PUT {url}: {answer.status} {answer.body[:200]!r}")
    return answer.json()

