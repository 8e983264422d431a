"""Where a run's areas run (``assay.run.placement``) and how a discovery tells that an area's worker died
(``assay.liveness.area_gone_because``): decided without Prefect."""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess

import pytest

from assay.errors import ConfigError
from assay.liveness import area_gone_because
from assay.models import utcnow
from assay.run.placement import area_runs_setting, place_areas

DEP = "assay-area/area"


@pytest.mark.parametrize("index", ["store", "server"])
def test_a_discovery_on_a_work_pool_spreads_its_areas(index):
    p = place_areas("auto", work_pool="assay", index_kind=index, deployment=DEP)
    assert p.flow_runs and "work pool 'assay'" in p.why and DEP in p.why


def test_without_a_work_pool_areas_stay_in_process():
    for index in ("store", "server", "local"):
        p = place_areas("auto", work_pool=None, index_kind=index, deployment=DEP, api_server=False)
        assert not p.flow_runs and "not on a work pool" in p.why
    assert not place_areas("inline", work_pool="assay", index_kind="store", deployment=DEP).flow_runs


def test_a_pool_with_the_local_index_keeps_areas_in_process_and_says_why():
    p = place_areas("auto", work_pool="assay", index_kind="local", deployment=DEP)
    assert not p.flow_runs and "Qdrant local mode" in p.why and "MONGODB_URI" in p.why


def test_forcing_flow_runs_needs_a_shared_index_and_a_server():
    assert place_areas("deployment", work_pool=None, index_kind="store", deployment=DEP).flow_runs
    with pytest.raises(ConfigError, match="Qdrant local mode admits one process"):
        place_areas("deployment", work_pool="assay", index_kind="local", deployment=DEP)
    with pytest.raises(ConfigError, match="PREFECT_API_URL"):
        place_areas("deployment", work_pool=None, index_kind="server", deployment=DEP, api_server=False)


def test_the_setting_is_read_and_a_bad_one_is_one_line():
    assert area_runs_setting({}) == "auto"
    assert area_runs_setting({"ASSAY_AREA_RUNS": " Deployment "}) == "deployment"
    with pytest.raises(ConfigError, match=r"ASSAY_AREA_RUNS='always'.*auto.*deployment.*inline"):
        area_runs_setting({"ASSAY_AREA_RUNS": "always"})


def test_an_area_whose_process_died_is_gone_and_a_live_one_is_not():
    dead = subprocess.Popen(["true"])
    dead.wait()
    now = utcnow()
    here = socket.gethostname()
    beat = {"flow_run": "fr1", "host": here, "pid": dead.pid, "heartbeat_at": now.isoformat(), "heartbeat_s": 15}
    assert "stopped without ending it" in area_gone_because(beat, "fr1")
    alive = {**beat, "pid": os.getpid()}
    assert area_gone_because(alive, "fr1") is None
    # another host: judged by silence only
    far = {**beat, "host": "elsewhere", "heartbeat_at": (now - dt.timedelta(seconds=30)).isoformat()}
    assert area_gone_because(far, "fr1") is None
    far["heartbeat_at"] = (now - dt.timedelta(seconds=120)).isoformat()
    assert "no heartbeat from elsewhere" in area_gone_because(far, "fr1")
    # an earlier attempt's beat, or none yet, says nothing about this flow run
    assert area_gone_because(beat, "fr2") is None and area_gone_because(None, "fr1") is None
