"""The code location loads in the Dagster webserver: HTTP 200, the asset graph over GraphQL, a clean SIGINT stop."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import dagster as dg
import pytest


REPO = Path(__file__).resolve().parents[2]
EXPECTED = {("chunks",), ("reference_docs",), ("incidents",), ("l1_memories",), ("l2_memories",), ("memory_index",),
            ("symptom_projections",), ("failure_signatures",), ("typed_stores",), ("context_units",),
            ("incident_index",), ("typed_store_index",), ("rebuild_audit",)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def asset_keys(base: str) -> set[tuple[str, ...]]:
    body = json.dumps({"query": "{ assetNodes { assetKey { path } } }"}).encode()
    request = urllib.request.Request(f"{base}/graphql", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as resp:
        nodes = json.load(resp)["data"]["assetNodes"]
    return {tuple(n["assetKey"]["path"]) for n in nodes}


def test_definitions_load():
    from pipelines.definitions import defs

    assert {tuple(k.path) for k in defs.resolve_asset_graph().get_all_asset_keys()} == EXPECTED
    assert {j.name for j in defs.resolve_all_job_defs()} >= {"full_build", "rebuild"}
    assert defs.resolve_schedule_def("nightly_rebuild").cron_schedule == "0 3 * * *"
    assert defs.resolve_sensor_def("sources_sensor").job_name == "full_build"


def test_sources_sensor_ships_stopped():
    """Opening the UI must not start a build: the sensor is off until someone turns it on."""
    from pipelines.definitions import defs

    assert defs.resolve_sensor_def("sources_sensor").default_status == dg.DefaultSensorStatus.STOPPED


@pytest.mark.slow
def test_webserver_serves_the_asset_graph_and_stops_on_sigint(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, DAGSTER_HOME=str(tmp_path / "dagster-home"), POIMEN_HOME=str(tmp_path / "poimen-home"),
               DAGSTER_DISABLE_TELEMETRY="1")
    (tmp_path / "dagster-home").mkdir()
    webserver = Path(sys.executable).with_name("dagster-webserver")
    log = tmp_path / "webserver.log"  # a file, not a pipe: an unread pipe can fill and stall the server
    with log.open("w") as out:
        proc = subprocess.Popen([str(webserver), "-h", "127.0.0.1", "-p", str(port), "-w", str(REPO / "workspace.yaml")],
                                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        keys: set = set()
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and keys != EXPECTED:
            assert proc.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(base, timeout=5) as resp:
                    assert resp.status == 200
                keys = asset_keys(base)  # empty until the code location has loaded
            except (urllib.error.URLError, ConnectionError, TimeoutError, KeyError, TypeError):
                pass
            time.sleep(1)
        assert keys == EXPECTED, log.read_text()[-4000:]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0, log.read_text()[-4000:]
