"""The tracing switch reads the environment at every run, through a fast path for the
common answer (no endpoint set): a variable set or removed after import still counts."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nodeloom.observability.switch import configured_by_environment

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


@pytest.fixture
def no_otel(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*ENDPOINTS, "OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_without_an_endpoint_variable_tracing_is_off(no_otel):
    assert configured_by_environment() is False


@pytest.mark.parametrize("name", ENDPOINTS)
def test_an_endpoint_set_after_import_turns_tracing_on_and_removing_it_off(no_otel, name):
    no_otel.setenv(name, "http://127.0.0.1:4318")
    assert configured_by_environment() is True
    no_otel.delenv(name)
    assert configured_by_environment() is False


def test_an_empty_endpoint_or_a_disabled_sdk_keeps_tracing_off(no_otel):
    no_otel.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
    assert configured_by_environment() is False
    no_otel.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    no_otel.setenv("OTEL_SDK_DISABLED", "true")
    assert configured_by_environment() is False
    no_otel.delenv("OTEL_SDK_DISABLED")
    no_otel.setenv("OTEL_TRACES_EXPORTER", "none")
    assert configured_by_environment() is False


def test_the_tracer_follows_an_endpoint_set_after_import(tmp_path):
    code = (
        "import os\n"
        "from nodeloom.observability.switch import active_tracer\n"
        "assert active_tracer() is None\n"
        "os.environ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] = 'http://127.0.0.1:9/v1/traces'\n"
        "assert active_tracer() is not None\n"
        "print('ok')\n"
    )
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environment["NODELOOM_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
