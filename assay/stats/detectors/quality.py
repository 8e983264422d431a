"""Detectors of how the data was made: impossible values, empty columns, rows that end before they
start, a status that flips at one date for every row (generation or ETL), and a measure empty because
the event did not happen."""

from __future__ import annotations

import pandas as pd

from ..probes import EndBeforeStartMeta, NullReasonMeta, NullStatusMeta, StatusSwitchMeta
from .candidate import ARTIFACT, Candidate, Kind
from .countsql import Source, quote, since as since_sql
from ..columns import names_the_table
from .wording import pct, words

SWITCH_TOLERANCE_DAYS = 31
NULL_EXPLAINED = 0.95  # share of the measure's empty rows that another column's emptiness must cover
KEY_UNIQUE_SHARE = 0.9  # a row's own key with at least this share of distinct values, but not all: repeated rows


def own_key(col: str, table: str) -> bool:
    """The table's own identifier by its name: ``id``, invoices.invoice_id, orders.order_number."""
    n, t = col.lower(), table.lower()
    stem = t[:-1] if t.endswith("s") else t
    return n in ("id", f"{stem}_id", f"{t}_id", f"{stem}id") or names_the_table(n, t)


def quality_from_profile(row: dict, meta, step: int, table: str, ref: str, columns: list[str]) -> list[Candidate]:
    out = []
    n = int(row.get("row_count") or 0)
    if n == 0:
        return out
    src = Source(ref)
    for c in columns:
        if own_key(c, table):
            filled = n - int(row.get(f"{c}__nulls") or 0)
            distinct = int(row.get(f"{c}__distinct") or 0)
            repeats = filled - distinct
            # a row's own key repeated in a few rows (duplicated loads), not a column of repeated values
            if 0 < repeats and distinct >= KEY_UNIQUE_SHARE * filled:
                out.append(Candidate(
                    kind=Kind.DATA_QUALITY, name=f"{repeats:,} rows of {table} repeat another row's {c}",
                    description=(f"{table} has {filled:,} rows with a {c} but {distinct:,} distinct values of it: "
                                 f"{repeats:,} rows repeat a {c} another row has (duplicated rows, or a key that is "
                                 f"not one), and every count and total of {table} includes them."),
                    table=table, step=step, effect=min(1.0, 0.4 + repeats / filled), p_value=1e-12,
                    count_sql=src.count(what=f"count({quote(c)}) - count(DISTINCT {quote(c)})"), segment=c,
                    affected=repeats, indicators=[f"rows with a {c} = {filled:,}", f"distinct {c} = {distinct:,}"],
                    area_text=f"{table} {c} data quality duplicate key",
                ))
        neg = row.get(f"{c}__negative")
        if neg:
            out.append(Candidate(
                kind=Kind.DATA_QUALITY, name=f"{int(neg):,} rows of {table} have a negative {c}",
                description=(f"{int(neg):,} of {n:,} rows in {table} have {c} < 0, which is impossible for this "
                             f"column and distorts every average of it."),
                table=table, step=step, effect=min(1.0, 0.3 + neg / n), p_value=1e-12,
                count_sql=src.count(f"{quote(c)} < 0"), segment=c, affected=int(neg),
                indicators=[f"negative {c} = {int(neg):,}", f"rows = {n:,}"],
                area_text=f"{table} {c} data quality negative",
            ))
        nulls = int(row.get(f"{c}__nulls") or 0)
        if 0 < nulls and nulls / n >= 0.01 and nulls / n < 0.5:
            out.append(Candidate(
                kind=Kind.DATA_QUALITY, name=f"{nulls:,} rows of {table} have no {c} ({pct(nulls / n)})",
                description=(f"{nulls:,} of {n:,} rows in {table} have an empty {c}; they drop out of every "
                             f"breakdown by {c}."),
                table=table, step=step, effect=min(1.0, 0.2 + nulls / n), p_value=1e-9,
                count_sql=src.count(f"{quote(c)} IS NULL"), segment=c, affected=nulls,
                indicators=[f"null {c} = {nulls:,}", f"null rate = {pct(nulls / n)}"],
                area_text=f"{table} {c} data quality missing null",
            ))
    return out


def end_before_start(df: pd.DataFrame, meta: EndBeforeStartMeta | dict, step: int, table: str,
                     ref: str) -> list[Candidate]:
    meta = EndBeforeStartMeta.of(meta)
    if df.empty:
        return []
    bad = int(df["bad"].iloc[0] or 0)
    n = int(df["n"].iloc[0] or 0)
    if bad == 0:
        return []
    s, e = meta.start, meta.end
    return [Candidate(
        kind=Kind.DATA_QUALITY, name=f"{bad:,} rows of {table} end before they start",
        description=f"{bad:,} of {n:,} rows in {table} have {e} earlier than {s}: a logging defect.",
        table=table, step=step, effect=min(1.0, 0.3 + bad / max(n, 1)), p_value=1e-12,
        count_sql=Source(ref).count(f"{quote(e)} < {quote(s)}"), segment=f"{e}<{s}", affected=bad,
        indicators=[f"rows with {e} < {s} = {bad:,}"], area_text=f"{table} {s} {e} data quality duration",
    )]


def status_switch(df: pd.DataFrame, meta: StatusSwitchMeta | dict, step: int, table: str,
                  ref: str) -> list[Candidate]:
    """A status whose values split the timeline at one date for every row (F before 1995-06-17, O
    after): how the data was generated or loaded, not many changes in the business. Reported once."""
    meta = StatusSwitchMeta.of(meta)
    dim, time_col = meta.dim, meta.time
    need = {"value", "first_at", "last_at", "n"}
    if not dim or not time_col or not need <= set(df.columns):
        return []
    d = df.dropna(subset=["value", "first_at", "last_at"]).copy()
    if len(d) < 2:
        return []
    d["first_at"], d["last_at"] = pd.to_datetime(d["first_at"]), pd.to_datetime(d["last_at"])
    total = float(d["n"].sum())
    start, end = d["first_at"].min(), d["last_at"].max()
    tol = pd.Timedelta(days=SWITCH_TOLERANCE_DAYS)
    if end - start < 6 * tol or total <= 0:
        return []
    for cut in sorted(d["last_at"].unique())[:-1]:
        cut = pd.Timestamp(cut)
        before = d[d["last_at"] <= cut + tol]
        after = d[(d["first_at"] >= cut - tol) & ~d.index.isin(before.index)]
        nb, na = float(before["n"].sum()), float(after["n"].sum())
        if before.empty or after.empty or nb + na < 0.95 * total or min(nb, na) < 0.05 * total:
            continue
        switch = pd.Timestamp(after["first_at"].min()).date().isoformat()
        old = ", ".join(str(v) for v in before["value"])
        new = ", ".join(str(v) for v in after["value"])
        return [Candidate(
            kind=ARTIFACT,
            name=f"{words(dim)} switches from {old} to {new} on {switch} for every row: a data-generation or ETL pattern",
            description=(f"In {table}, every row before {switch} has {dim} {old} ({int(nb):,} rows) and every row "
                         f"from {switch} has {new} ({int(na):,} rows). A status that flips at one date for all rows "
                         f"comes from how the data was generated or loaded, not from the business: changes of other "
                         f"measures dated at {switch} are this pattern, not separate findings."),
            table=table, step=step, effect=0.5, p_value=1e-12,
            count_sql=Source(ref).count(since_sql(quote(time_col), switch)),
            segment=f"switch at {switch}", indicators=[f"switch date = {switch}", f"before: {old}", f"after: {new}"],
            area_text=f"{table} {dim} status switch data generation etl pattern",
        )]
    return []


def null_reason(df: pd.DataFrame, meta: NullReasonMeta | dict, step: int, table: str, ref: str) -> list[Candidate]:
    """A measure empty on exactly the rows where another column is empty too (no departure time, no
    delay): those rows are events that did not happen (cancelled) or where the measure does not apply,
    not missing data."""
    meta = NullReasonMeta.of(meta)
    m, others = meta.measure, meta.others or []
    if not m or df.empty or "missing" not in df or "n" not in df:
        return []
    row = df.iloc[0]
    n, missing = int(row["n"] or 0), int(row["missing"] or 0)
    if n <= 0 or missing <= 0:
        return []
    cover = {c: int(row.get("both_" + c) or 0) for c in others}
    best = max(cover, key=lambda c: (cover[c], c), default=None)
    if best is None or cover[best] < NULL_EXPLAINED * missing:
        return []
    share = missing / n
    return [Candidate(
        kind=Kind.NULL_REASON, measure=m,
        name=(f"{missing:,} {table} ({pct(share)}) have no {words(m)} because they have no {words(best)}: "
              f"cancelled or not applicable"),
        description=(f"{missing:,} of {n:,} rows in {table} have an empty {m}; {cover[best]:,} of them also have no "
                     f"{best}. These rows never took place (cancelled) or the measure does not apply to them: they "
                     f"are left out of every average of {words(m)}, not lost data."),
        table=table, step=step, effect=min(1.0, 0.3 + share), p_value=1e-9,
        count_sql=Source(ref).count(f"{quote(m)} IS NULL"), segment=m,
        support=n, support_share=1.0,
        indicators=[f"empty {m} = {missing:,}", f"also empty {best} = {cover[best]:,}", f"rows = {n:,}"],
        area_text=f"{table} {m} missing cancelled not applicable {best}",
    )]


NULL_STATUS_EMPTY = 0.9  # share of a status value's rows without the measure: the status says why


def null_status_reason(df: pd.DataFrame, meta: NullStatusMeta | dict, step: int, table: str,
                       ref: str) -> list[Candidate]:
    """A measure empty on the rows of one or a few values of a status column (status = cancelled: no
    delivery time): the status says why. Those rows did not happen or the measure does not apply to
    them; they are not missing data."""
    meta = NullStatusMeta.of(meta)
    m, status = meta.measure, meta.status
    if not m or not status or df.empty or not {"value", "n", "missing"} <= set(df.columns):
        return []
    d = df.copy()
    d["n"] = pd.to_numeric(d["n"], errors="coerce").fillna(0)
    d["missing"] = pd.to_numeric(d["missing"], errors="coerce").fillna(0)
    total, missing = float(d["n"].sum()), float(d["missing"].sum())
    if total <= 0 or missing <= 0:
        return []
    d = d[d["value"].notna()]
    why = d[(d["n"] > 0) & (d["missing"] >= NULL_STATUS_EMPTY * d["n"])].sort_values("missing", ascending=False)
    covered, rows = float(why["missing"].sum()), float(why["n"].sum())
    if why.empty or covered < NULL_EXPLAINED * missing or rows >= 0.5 * total:
        return []  # the status does not say why, or the empty rows are the rule rather than an exception
    values = [str(v) for v in why["value"]]
    said = values[0] if len(values) == 1 else ", ".join(values[:-1]) + " or " + values[-1]
    share = missing / total
    return [Candidate(
        kind=Kind.NULL_REASON, measure=m,
        name=(f"{int(missing):,} {table} ({pct(share)}) have no {words(m)} because their {words(status)} is "
              f"{said}"),
        description=(f"{int(missing):,} of {int(total):,} rows in {table} have an empty {m}; {int(covered):,} of "
                     f"them have {status} {said}, and {pct(covered / rows)} of the rows with that {status} have "
                     f"no {m}. These rows did not happen ({said}) or the measure does not apply to them: they are "
                     f"left out of every average of {words(m)}, not lost data."),
        table=table, step=step, effect=min(1.0, 0.3 + share), p_value=1e-9,
        count_sql=Source(ref).count(f"{quote(m)} IS NULL"), segment=m, support=int(total), support_share=1.0,
        indicators=[f"empty {m} = {int(missing):,}", f"of them with {status} {said} = {int(covered):,}",
                    f"rows = {int(total):,}"],
        area_text=f"{table} {m} missing {status} {said} cancelled not applicable",
    )]
