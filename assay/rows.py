"""Which rows of a result to keep when not all of them can be sent: the ones that carry the signal.

- An ordered series (a time or sorted key column, possibly per group such as month x platform):
  the rows on both sides of the largest changes of its value columns, and each value's extremes.
- A ranking (sorted by a numeric column): the top and the bottom.
- Anything else: the first and last rows, and each numeric column's extremes.

Pure and deterministic: positions come back sorted, the same input gives the same rows. The caller
says what was cut (``describe_cut``), always with the original count.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa


def _monotone(values: np.ndarray) -> int:
    """1 ascending, -1 descending, 0 neither (nulls break monotony)."""
    if len(values) < 3:
        return 0
    d = np.diff(values)
    if np.all(d >= 0) and np.any(d > 0):
        return 1
    if np.all(d <= 0) and np.any(d < 0):
        return -1
    return 0


def _as_sortable(col: pa.ChunkedArray) -> np.ndarray | None:
    t = col.type
    if col.null_count:
        return None
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return pd.to_datetime(pd.Series(col.to_pandas())).astype("int64").to_numpy()
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return col.to_numpy(zero_copy_only=False).astype("float64")
    return None


def _numeric(table: pa.Table) -> dict[str, np.ndarray]:
    out = {}
    for name in table.column_names:
        t = table.column(name).type
        if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            out[name] = pd.to_numeric(pd.Series(table.column(name).to_pandas()), errors="coerce").to_numpy(
                dtype="float64")
    return out


MAX_SERIES_ROWS = 100_000  # beyond this a result is a scan, not a series to read changes from


def _group_codes(table: pa.Table, key: str | None, numeric: dict[str, np.ndarray]) -> np.ndarray | None:
    """One code per row for the group it belongs to (the values of its columns that are neither the key nor
    numeric: month x platform has one group per platform); None when there is no such column."""
    groups = [c for c in table.column_names if c != key and c not in numeric]
    if not groups:
        return None
    return pd.DataFrame({c: table.column(c).to_pandas() for c in groups}).groupby(
        groups, sort=False, dropna=False).ngroup().to_numpy()


def _monotone_per_group(values: np.ndarray, codes: np.ndarray) -> bool:
    """A series per group in long form, ordered by group and then by time (``ORDER BY category, month``): each
    group's values run one way in table order, and the groups hold three rows each on average."""
    n_groups = int(codes.max()) + 1 if codes.size else 0  # no rows: no group
    if n_groups < 2 or len(values) < 3 * n_groups:
        return False
    perm = np.argsort(codes, kind="stable")  # each group's rows together, in table order: one pass, no loop
    within = np.diff(values[perm])[codes[perm][1:] == codes[perm][:-1]]
    return within.size > 0 and bool(np.all(within > 0) or np.all(within < 0))


def shape_of(table: pa.Table) -> tuple[str, str | None]:
    """("series", key) | ("ranking", column) | ("table", None)."""
    if table.num_rows > MAX_SERIES_ROWS:
        return "table", None
    for name in table.column_names:
        t = table.column(name).type
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            v = _as_sortable(table.column(name))
            if v is not None and _monotone(v):
                return "series", name
    for name in table.column_names:  # a series per group, ordered by group first (round 12: month x category)
        t = table.column(name).type
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            v = _as_sortable(table.column(name))
            codes = _group_codes(table, name, _numeric(table)) if v is not None else None
            if codes is not None and _monotone_per_group(v, codes):
                return "series", name
    for name in table.column_names[:1]:  # an ordered numeric first column is a key (day number, bucket)
        v = _as_sortable(table.column(name))
        if v is not None and _monotone(v) and len(np.unique(v)) > len(v) // 2:
            num = [c for c in table.column_names[1:] if c in _numeric(table)]
            if num:
                return "series", name
    for name, v in _numeric(table).items():
        if not np.isnan(v).any() and _monotone(v):
            return "ranking", name
    return "table", None


def select_rows(table: pa.Table, k: int) -> tuple[list[int], str]:
    """Positions (sorted) of at most ``k`` rows that carry the signal, and how they were chosen."""
    n = table.num_rows
    if n <= k:
        return list(range(n)), "all rows"
    shape, key = shape_of(table)
    picked: list[int] = []

    def add(*idx: int) -> None:
        for i in idx:
            if 0 <= i < n and i not in picked and len(picked) < k:
                picked.append(int(i))

    numeric = _numeric(table)
    if shape == "ranking":
        head = (k + 1) // 2
        add(*range(head))
        add(*range(n - (k - head), n))
        how = f"ranking by {key}: the top {head} and the bottom {k - head}"
        return sorted(picked), how
    add(0, n - 1)
    values = {c: v for c, v in numeric.items() if c != key}
    if shape == "series":
        # each row is compared with the previous row of its group (month x platform)
        codes = _group_codes(table, key, numeric)
        if codes is None:
            codes = np.zeros(n, dtype=np.int64)
        n_groups = int(codes.max()) + 1
        perm = np.argsort(codes, kind="stable")
        same = codes[perm][1:] == codes[perm][:-1]
        prev_rows, rows_ = perm[:-1][same], perm[1:][same]
        if 1 < n_groups <= k // 4:  # every group's latest row: where each series ends (round 12's models asked)
            last = np.full(n_groups, -1)
            last[codes[perm]] = perm
            add(*last)
        # a change is measured against its own group's scale (its span, or its level when that is larger): a small
        # category's halving is as visible as a large one's, where the whole column's span hid it under the large
        # groups' moves; a flat group's wobble stays small against its level
        by_group = pd.DataFrame({"g": codes})
        sizes, befores, afters = [], [], []
        for v in values.values():  # vectorised
            finite = np.where(np.isfinite(v), v, np.nan)
            g = by_group.assign(v=finite).groupby("g")["v"]
            scale = (g.max() - g.min()).to_numpy(dtype="float64")
            if n_groups > 1:  # one series: its own span, as before (every change of it is scaled alike)
                # each group's mean level (NaN for a group with no value): one vectorised pass, not a call per group
                level = by_group.assign(v=np.abs(finite)).groupby("g")["v"].mean()
                scale = np.fmax(scale, level.to_numpy(dtype="float64"))
            span = np.nan_to_num(scale[codes[rows_]], nan=0.0)
            dv = v[rows_] - v[prev_rows]
            ok = np.isfinite(dv) & (span > 0)
            sizes.append(np.abs(dv[ok]) / span[ok])
            befores.append(prev_rows[ok])
            afters.append(rows_[ok])
        n_changes = 0
        if sizes:
            size, before, after = np.concatenate(sizes), np.concatenate(befores), np.concatenate(afters)
            top = np.argpartition(-size, 2 * k)[: 2 * k] if size.size > 2 * k else np.arange(size.size)
            order = top[np.lexsort((before[top], -size[top]))]  # largest first; ties by position
            for j in order:
                if len(picked) >= k - 2 * min(len(values), 2):
                    break
                was = len(picked)
                add(int(before[j]), int(after[j]))
                n_changes += len(picked) > was
        how = f"ordered series by {key}: the rows around the {n_changes} largest changes, the first, last and extremes"
    else:
        how = "the first and last rows and each numeric column's extremes"
    for v in values.values():
        if np.isfinite(v).any():
            add(int(np.nanargmax(v)), int(np.nanargmin(v)))
    i, j = 1, n - 2
    while len(picked) < k and i <= j:  # fill from both ends
        add(i)
        add(j)
        i, j = i + 1, j - 1
    return sorted(picked), how


PARTIAL_SHARE = 0.5  # a last period below this share of the median period is flagged as possibly partial


def partial_last_period(table: pa.Table) -> str | None:
    """A note when an ordered series by date (one row per period, at least 4) ends with a period whose every
    positive count (integer column; every positive value when there is none) is under half the median of the others: the data may cover only part of it (round 7:
    a last day of which the warehouse held a few hours). A flag to check, not a verdict: a real collapse looks the
    same, and the note says so."""
    if table.num_rows < 4:
        return None
    shape, key = shape_of(table)
    if shape != "series" or key is None:
        return None
    t = table.column(key).type
    if not (pa.types.is_timestamp(t) or pa.types.is_date(t)):
        return None
    keys = _as_sortable(table.column(key))
    if keys is None or len(np.unique(keys)) != len(keys) or _monotone(keys) != 1:
        return None  # one row per period, in time order (a series per group is left alone)
    gaps = np.diff(keys).astype("float64")
    if not np.all((gaps >= 0.85 * np.median(gaps)) & (gaps <= 1.2 * np.median(gaps))):
        return None  # not periods (days, weeks, months): round 8 read each event type's first timestamp as one
    values = {c: v for c, v in _numeric(table).items() if c != key and np.all(np.isfinite(v)) and np.all(v > 0)}
    counts = {c: v for c, v in values.items() if pa.types.is_integer(table.column(c).type)}
    values = counts or values  # counts fall with a partial period; an average or a rate need not
    if not values:
        return None
    shares = {c: v[-1] / float(np.median(v[:-1])) for c, v in values.items()}
    if not all(x < PARTIAL_SHARE for x in shares.values()):
        return None
    last = table.column(key)[-1].as_py()
    worst = ", ".join(f"{c} {x:.0%}" for c, x in shares.items())
    return (f"the last period ({last}) holds under half of the median period ({worst} of it): it may cover only part "
            "of its period (the data's end); check its dates before comparing it with the others")


def describe_cut(kept: int, total: int, how: str, shortened: list[str] | None = None) -> str:
    text = f"{kept} of {total} rows kept ({how})"
    if shortened:
        text += f"; long values shortened in column(s): {', '.join(shortened)}"
    return text
