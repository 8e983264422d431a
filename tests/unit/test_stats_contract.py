"""The planner-to-detector contract (one typed model per probe kind) and the count-SQL builder."""

from __future__ import annotations

import pandas as pd

from assay.stats import detectors as D
from assay.stats.detectors.countsql import Source, eq, since
from assay.stats.probes import MODELS, GroupMeta, Join, JoinedBreakdownMeta, SeasonMeta, parse

from tests.unit.test_stats_golden import profile


def test_every_planned_probe_round_trips_through_the_stored_dict():
    p = profile("flights", [("year", "BIGINT"), ("month", "BIGINT"), ("day", "BIGINT"), ("sched_dep_time", "BIGINT"),
                            ("dep_delay", "DOUBLE"), ("carrier", "VARCHAR"), ("dep_time", "BIGINT")], 300_000,
                {"year": 1, "month": 12, "day": 31, "sched_dep_time": 1000, "dep_delay": 500, "carrier": 16,
                 "dep_time": 1200},
                lo={"year": 2013, "month": 1, "day": 1, "sched_dep_time": 106, "dep_delay": -43, "dep_time": 1},
                hi={"year": 2013, "month": 12, "day": 31, "sched_dep_time": 2359, "dep_delay": 1301, "dep_time": 2400},
                nulls={"dep_delay": 8000, "dep_time": 8000})
    from assay.stats.planner import Planner

    pl = Planner([p.table], lambda x: f'"{x}"', ["delay"], goal="delays")
    probes = pl.plan({p.table.fqn: p})
    assert {pr.kind for pr in probes} >= {"breakdown", "season", "null_reason"}
    for pr in probes:
        assert type(pr.meta) is MODELS[pr.kind]  # the model of its kind, never a bare dict
        stored = {"kind": pr.kind, "table": pr.table, **pr.meta.to_dict()}
        assert parse(stored) == pr.meta


def test_a_stored_probe_of_an_older_run_parses_with_defaults():
    meta = parse({"kind": "joined_breakdown", "table": "main.orders", "dim": "region", "unknown_key": 1,
                  "join": {"table": "main.customers", "on": "customer_id", "key": "id"}})
    assert meta == JoinedBreakdownMeta(dim="region", join=Join(table="main.customers", on="customer_id", key="id"))
    assert parse({"kind": "no_such_probe", "table": "main.t"}) is None
    assert GroupMeta.of({}) == GroupMeta()  # a detector called with a plain dict gets the typed model


def test_count_sql_of_a_table_and_of_a_join():
    plain = Source('"main"."t"')
    assert plain.count(eq(plain.dim("carrier"), "UA")) == 'SELECT count(*) AS count FROM "main"."t" WHERE "carrier" = \'UA\''
    joined = Source('"main"."f"', Join(table="main.d", on="d_id", key="id", ref='"main"."d"'))
    assert joined.count_distinct("customer_id", eq(joined.dim("region"), "EU"), since(joined.fact("at"), "2026-01-01")) == (
        'SELECT count(DISTINCT f."customer_id") AS count FROM "main"."f" f JOIN "main"."d" o ON f."d_id" = o."id" '
        'WHERE o."region" = \'EU\' AND f."at" >= TIMESTAMP \'2026-01-01\'')
    assert joined.count_never("customer_id", "converted", eq(joined.dim("region"), "EU")) == (
        'SELECT count(*) AS count FROM (SELECT f."customer_id" FROM "main"."f" f JOIN "main"."d" o ON '
        'f."d_id" = o."id" WHERE o."region" = \'EU\' GROUP BY f."customer_id" HAVING max(CASE WHEN '
        'f."converted" THEN 1 ELSE 0 END) = 0) AS never')


def test_the_registry_reads_a_stored_probe_and_marks_catalogue_findings():
    df = pd.DataFrame({"hour_of_day": [5, 8, 12, 17, 20], "n": [500] * 5,
                       "avg_dep_delay": [1.0, 4.0, 9.0, 21.0, 24.0], "sd_dep_delay": [20.0] * 5})
    meta = SeasonMeta(dim="hour_of_day", expr='CAST(floor("t" / 100) AS INTEGER)', calendar="hour", catalogue=True)
    out = D.detect_probe({"kind": "season", "table": "main.flights", **meta.to_dict()}, df, 3,
                         lambda fqn: '"main"."flights"')
    assert [c.kind for c in out] == [D.Kind.GROUP_EFFECT] and out[0].catalogue and out[0].kind == "group_effect"
    assert out[0].count_sql.endswith('WHERE CAST(floor("t" / 100) AS INTEGER) = 20')
    assert D.detect_probe({"kind": "season", "table": "main.flights"}, pd.DataFrame(), 3, str) == []
