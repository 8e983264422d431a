"""Where task results persist: storage every worker reads (a Retry on another worker re-uses them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.settings import load_settings, result_storage_target


def test_result_storage_is_shared_by_default_and_configurable(monkeypatch, tmp_path):
    monkeypatch.delenv("ASSAY_RESULT_STORAGE", raising=False)
    settings = load_settings()
    assert result_storage_target(settings) == ("path", str(settings.home / "results"))
    for value, want in ((str(tmp_path / "shared"), ("path", str(tmp_path / "shared"))),
                        ("~/results", ("path", str(Path("~/results").expanduser()))),
                        ("s3-bucket/assay-results", ("block", "s3-bucket/assay-results")),
                        ("prefect", ("prefect", ""))):
        monkeypatch.setenv("ASSAY_RESULT_STORAGE", value)
        assert result_storage_target(load_settings()) == want
    monkeypatch.setenv("ASSAY_RESULT_STORAGE", "results")
    with pytest.raises(ConfigError, match="ASSAY_RESULT_STORAGE='results': give an absolute folder"):
        result_storage_target(load_settings())


def test_the_cached_phases_persist_to_the_shared_storage():
    """Every task a retried flow run re-uses persists into the configured storage, not $PREFECT_HOME."""
    from assay_flows.tasks import phases

    kept = [phases.init_task, phases.context_task, phases.schema_task, phases.exploration_task, phases.area_task]
    for t in kept:
        assert t.persist_result and Path(t.result_storage) == load_settings().home / "results", t.name
