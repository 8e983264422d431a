"""What a warehouse query slot costs: the lean lease (tasks/warehouse_limit.py) against Prefect's own
``prefect.concurrency.sync.concurrency``, on a temporary Prefect server (SQLite).

Each statement holds its slot for HOLD_S; the figure is the time around it (acquire + release), in ms,
for N statements one after another, and the wall time of N statements from 4 threads with a limit of 4
and of 1 (and the peak number held at once, which must not exceed the limit).

    python bench/warehouse_slots.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="bench-slots-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

HOLD_S = 0.05


def measure(slot_for, limit: int, n: int) -> dict:
    held = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def one(_):
        t = time.perf_counter()
        with slot_for(limit):
            with lock:
                held["now"] += 1
                held["peak"] = max(held["peak"], held["now"])
            time.sleep(HOLD_S)
            with lock:
                held["now"] -= 1
        return (time.perf_counter() - t - HOLD_S) * 1000

    one(0)  # creates the limit
    seq = [one(i) for i in range(n)]
    t = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(one, range(n)))
    return {"seq_ms": statistics.median(seq), "par_wall_s": time.perf_counter() - t, "peak": held["peak"]}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 12
    from prefect.client.orchestration import get_client
    from prefect.concurrency.sync import concurrency
    from prefect.testing.utilities import prefect_test_harness

    from assay.models import WarehouseConfig
    from assay_flows.tasks.warehouse_limit import warehouse_slot

    with prefect_test_harness(server_startup_timeout=300):
        def lean(limit):
            cfg = WarehouseConfig(kind="duckdb", settings={"path": f"/bench/lean{limit}.duckdb"},
                                  max_concurrent_queries=limit)
            return warehouse_slot(cfg)

        @contextmanager
        def prefect_cm(limit):
            name = f"bench-prefect-{limit}"
            with get_client(sync_client=True) as c:
                c.upsert_global_concurrency_limit_by_name(name, limit)
            with concurrency(name, occupy=1, lease_duration=60):
                yield

        for label, slot_for in (("lean", lean), ("prefect_concurrency", prefect_cm)):
            for limit in (4, 1):
                m = measure(slot_for, limit, n)
                if limit == 4:
                    print(f"slot_overhead_ms_{label}: {m['seq_ms']:.1f}")
                print(f"parallel{n}_wall_s_{label}_limit{limit}: {m['par_wall_s']:.2f}")
                print(f"peak_held_{label}_limit{limit}: {m['peak']}")
        print(f"ideal_wall_s_limit1: {n * HOLD_S:.2f}")


if __name__ == "__main__":
    main()
