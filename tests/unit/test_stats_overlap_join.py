"""Joins found by value overlap with another table's unique column, with no declared key and no name
that gives it away (flights.origin -> airports.faa)."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from assay.models import ColumnInfo, TableInfo
from assay.stats.planner import Planner, _profile_from_row


def _q(x: str) -> str:
    return '"' + x + '"'


def _table(con, name, df):
    con.register("tmp_df", df)
    con.execute(f'CREATE TABLE s."{name}" AS SELECT * FROM tmp_df')
    con.unregister("tmp_df")
    cols = con.execute(f'DESCRIBE s."{name}"').fetchall()
    return TableInfo(schema="s", name=name, row_count=len(df), columns=[ColumnInfo(name=c[0], type=c[1]) for c in cols])


def test_a_column_whose_values_are_another_tables_unique_key_becomes_a_join():
    rng = np.random.default_rng(3)
    con = duckdb.connect()
    con.execute("CREATE SCHEMA s")
    airports = pd.DataFrame({"faa": ["EWR", "JFK", "LGA", "ATL", "ORD", "BOS"],
                             "tzone": ["east", "east", "east", "east", "central", "east"],
                             "alt": [18, 13, 22, 1026, 668, 19]})
    n = 6000
    flights = pd.DataFrame({"origin": rng.choice(["EWR", "JFK", "LGA"], n),
                            "dest": rng.choice(["ATL", "ORD", "BOS", "XNA"], n),  # XNA: not an airport row
                            "carrier": rng.choice(["UA", "AA"], n),
                            "dep_delay": rng.normal(10, 5, n).round(1)})
    ta, tf = _table(con, "airports", airports), _table(con, "flights", flights)
    pl = Planner([tf, ta], _q, [])
    profiles = {t.fqn: _profile_from_row(t, con.execute(pl.profile_probe(t).sql).df().iloc[0].to_dict())
                for t in (tf, ta)}
    probes = pl.overlap_probes(profiles)
    cols = [(pr.table, pr.meta.column, pr.meta.target, pr.meta.key) for pr in probes]
    assert ("s.flights", "origin", "s.airports", "faa") in cols and ("s.flights", "dest", "s.airports", "faa") in cols
    assert not any(c[1] == "dep_delay" for c in cols)  # a measure is never a key
    learned = {pr.meta.column: pl.learn_overlap(pr.table, pr.meta, con.execute(pr.sql).df().iloc[0].to_dict())
               for pr in probes}
    assert learned["origin"] is True
    assert learned["dest"] is False  # XNA is no airport: 3 of 4 values (0.75) is below the bar
    joined = [pr for pr in pl.plan(profiles) if pr.kind == "joined_breakdown"]
    assert [(pr.meta.dim, pr.meta.join.on, pr.meta.join.key) for pr in joined] == [("tzone", "origin", "faa")]
    rows = con.execute(joined[0].sql).df()
    assert int(rows["n"].sum()) == n  # every flight found its origin airport
    assert pl.referenced == {"airports"}  # the airports table is now a reference table


def test_integers_that_are_not_keys_never_join_by_overlap():
    con = duckdb.connect()
    con.execute("CREATE SCHEMA s")
    months = pd.DataFrame({"code": [f"m{i}" for i in range(1, 13)], "id": np.arange(1, 13)})
    facts = pd.DataFrame({"month": np.tile(np.arange(1, 13), 50), "amount": np.arange(600, dtype=float)})
    tm, tf = _table(con, "months", months), _table(con, "facts", facts)
    pl = Planner([tf, tm], _q, [])
    profiles = {t.fqn: _profile_from_row(t, con.execute(pl.profile_probe(t).sql).df().iloc[0].to_dict())
                for t in (tf, tm)}
    assert pl.overlap_probes(profiles) == []
