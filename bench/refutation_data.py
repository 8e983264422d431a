"""Synthetic warehouses for the refuter: comparisons that are true in total but confounded (a mix shift, a
reversal inside segments, an effect confined to one period) and clean ones, each with the claim an analyst
would write and the verification query a verifier would run. Used by bench/refutation.py and the tests."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import numpy as np

from assay.models import Claim, MetricKind, ValidationStatus

KINDS = ("mix", "reversal", "period", "clean")


@dataclass
class Case:
    name: str
    kind: str          # mix | reversal | period | clean
    table: str
    claim: Claim


def _frame(rng, kind: str, n: int, *, seg="paid", other="organic", mix_levels=("desktop", "mobile"),
           lean: float = 0.8):
    seg_mask = rng.random(n) < 0.4
    channel = np.where(seg_mask, seg, other)
    k = len(mix_levels)
    # the mix dimension: the segment leans to the first level when confounded
    if kind in ("mix", "reversal"):
        p_first = np.where(seg_mask, lean, 1 - lean)
    else:
        p_first = np.full(n, 1.0 / k)
    first = rng.random(n) < p_first
    rest = rng.integers(1, k, n) if k > 1 else np.zeros(n, dtype=int)
    mix = np.where(first, mix_levels[0], np.array(mix_levels)[rest])
    base_rate = np.where(mix == mix_levels[0], 0.20, 0.05)
    day = rng.integers(0, 360, n)
    if kind == "mix":
        rate = base_rate
    elif kind == "reversal":
        rate = base_rate + np.where(seg_mask, -0.03, 0.0)
    elif kind == "period":
        rate = 0.10 + np.where(seg_mask & (day >= 180), 0.10, 0.0)
    else:  # clean: the segment converts better everywhere, whatever the mix or the date
        rate = 0.08 + np.where(seg_mask, 0.06, 0.0) + np.where(mix == mix_levels[0], 0.02, 0.0)
    converted = (rng.random(n) < rate).astype(int)
    region = rng.choice(["north", "south", "east", "west"], n)
    amount = np.round(rng.gamma(2.0, 30.0, n) * (1 + 0.5 * converted), 2)
    at = [dt.datetime(2026, 1, 1) + dt.timedelta(days=int(d), hours=int(h)) for d, h in zip(day, rng.integers(0, 24, n))]
    return {"visit_id": np.arange(1, n + 1), "channel": channel, "device": mix, "region": region,
            "converted": converted, "amount": amount, "visited_at": at}


QUERY_FORMS = (
    "SELECT avg(CASE WHEN {seg} THEN converted END) AS segment_value, "
    "avg(CASE WHEN {base} THEN converted END) AS baseline_value FROM {t}",
    "SELECT count(*) FILTER (WHERE {seg} AND converted = 1) * 1.0 / count(*) FILTER (WHERE {seg}) AS segment_value, "
    "count(*) FILTER (WHERE {base} AND converted = 1) * 1.0 / count(*) FILTER (WHERE {base}) AS baseline_value "
    "FROM {t}",
    "SELECT sum(CASE WHEN {seg} THEN converted ELSE 0 END) * 1.0 / sum(CASE WHEN {seg} THEN 1 ELSE 0 END) "
    "AS segment_value, sum(CASE WHEN {base} THEN converted ELSE 0 END) * 1.0 / "
    "sum(CASE WHEN {base} THEN 1 ELSE 0 END) AS baseline_value FROM {t}",
)


def build(path, *, per_kind: int = 10, n: int = 6000, seed: int = 7, leans: tuple[float, ...] = (0.8, 0.72, 0.65),
          vary_size: bool = True) -> list[Case]:
    """Write the tables into a DuckDB file at ``path``; return the cases with their claims verified."""
    rng = np.random.default_rng(seed)
    con = duckdb.connect(str(path))
    cases: list[Case] = []
    levels = [("desktop", "mobile"), ("desktop", "mobile", "tablet"), ("web", "app", "store", "phone")]
    for kind in KINDS:
        for i in range(per_kind):
            table = f"{kind}_{i}"
            # confounding of several strengths and sample sizes: the segment leans 80/20 .. 65/35 to one level
            frame = _frame(rng, kind, n if i % 2 == 0 or not vary_size else n // 2,
                           mix_levels=levels[i % len(levels)], lean=leans[i % len(leans)])
            import pandas as pd

            df = pd.DataFrame(frame)  # noqa: F841 (read by DuckDB below)
            con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM df")
            seg, base = "channel = 'paid'", "channel <> 'paid'"
            sql = QUERY_FORMS[i % len(QUERY_FORMS)].format(seg=seg, base=base, t=table)
            seg_v, base_v = con.execute(sql).fetchone()
            claim = Claim(metric=MetricKind.rate, measure="conversion rate", entity="visits",
                          segment="paid visits", segment_sql=seg, baseline="other visits", baseline_sql=base,
                          value=round(seg_v, 4), baseline_value=round(base_v, 4), query=sql,
                          verified_value=seg_v, verified_baseline_value=base_v, verdict=ValidationStatus.confirmed)
            cases.append(Case(table, kind, table, claim))
    con.close()
    return cases


def stats_form(path, case: Case) -> Claim | None:
    """The same comparison as the statistical analyst states it: its breakdown probe (rows and a rate per
    channel) and the claim the analyst's own code writes over it (a segment against the other values,
    pooled), verified (its values computed on the warehouse)."""
    import duckdb as _duckdb

    from assay.models import ExplorationStep, StepAction
    from assay.stats.claims import candidate_claims
    from assay.stats.detectors.candidate import Candidate

    probe = (f'SELECT "channel", count(*) AS n, avg(CASE WHEN "converted" = 1 THEN 1.0 ELSE 0.0 END) AS '
             f'"converted_rate" FROM "main"."{case.table}" GROUP BY 1 ORDER BY 1')
    con = _duckdb.connect(str(path), read_only=True)
    try:
        df = con.execute(probe).fetchdf()
        step = ExplorationStep(run_id="refute", step=1, action=StepAction.query, query=probe)
        cand = Candidate(kind="mean_outlier", name=f"paid has a higher converted rate ({case.table})",
                         description="", table=case.table, step=1, effect=0.5, p_value=0.001, count_sql=None,
                         segment="channel=paid", measure="converted_rate")
        claims = candidate_claims(cand, step, df, "duckdb")
        if not claims:
            return None
        c = claims[0]
        row = con.execute(c.verification_sql).fetchone()
    finally:
        con.close()
    return c.model_copy(update={"query": c.verification_sql, "verified_value": row[0],
                                "verified_baseline_value": row[1], "verdict": ValidationStatus.confirmed})
