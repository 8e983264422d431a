"""``ASSAY_QUERY_TRACE``: every statement through a slotted warehouse leaves one line, from every thread, and the
peak of statements running at once is counted from those lines (the load figure of bench/scale_out.py)."""

from __future__ import annotations

import threading
import time

from assay.models import WarehouseConfig
from assay.warehouse.slots import SlottedWarehouse, peak_concurrency


class Slow:
    def query(self, sql, *, row_cap, timeout_s):
        time.sleep(0.05)
        return sql


def test_every_statement_is_traced_and_the_peak_is_counted(tmp_path, monkeypatch):
    trace = tmp_path / "q.trace"
    monkeypatch.setenv("ASSAY_QUERY_TRACE", str(trace))
    wh = SlottedWarehouse(Slow(), WarehouseConfig(kind="duckdb", settings={}))
    threads = [threading.Thread(target=wh.query, args=("select 1",), kwargs={"row_cap": 1, "timeout_s": 1})
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wh.query("select 2", row_cap=1, timeout_s=1)  # after the others: never counted with them
    lines = trace.read_text().splitlines()
    assert len(lines) == 4 and all(x.split()[1] == "query" for x in lines)
    assert peak_concurrency(lines) == 3


def test_peak_of_intervals_touching_end_to_start_is_not_an_overlap():
    assert peak_concurrency(["1 q 0 2", "1 q 2 4", "2 q 4 5"]) == 1
    assert peak_concurrency(["1 q 0 3", "2 q 1 4", "2 q 2 5", "3 q 3.5 6"]) == 3
    assert peak_concurrency([]) == 0


def test_without_the_setting_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv("ASSAY_QUERY_TRACE", raising=False)
    monkeypatch.chdir(tmp_path)
    SlottedWarehouse(Slow(), WarehouseConfig(kind="duckdb", settings={})).query("x", row_cap=1, timeout_s=1)
    assert list(tmp_path.iterdir()) == []
