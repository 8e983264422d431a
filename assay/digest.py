"""CompactResult: a per-step digest of a query result (pandas / pyarrow).

Pure and vectorised: per-column statistics come from Arrow compute kernels and
numpy, never from per-row Python loops; only the few rows shown (head, tail,
small results) are converted to Python values. Same input, byte-identical JSON.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .limits import (
    CHART_BYTES,
    CHART_CELLS,
    CHART_COLUMNS,
    CHART_ROWS,
    COMPACT_INLINE_THRESHOLD,
    DIGEST_CELL_CHARS,
    DIGEST_KEPT_ROWS,
    TOP_VALUE_CARDINALITY,
    TOP_VALUES,
)
from .models import ColumnKind, ColumnSummary, CompactResult, ValueCount
from .pii import MASK, pii_columns
from .rows import describe_cut, select_rows
from .warehouse.values import digestible


PARALLEL_ROWS = 100_000  # below this, threads cost more than they save
_POOL = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="digest")


def to_frame(table: pa.Table) -> pd.DataFrame:
    """A result as pandas, with numeric(p, s) columns (PostgreSQL, Snowflake) as floats."""
    for i, f in enumerate(table.schema):
        if pa.types.is_decimal(f.type):
            col = _integral(table.column(i)) if f.type.scale == 0 else None
            table = table.set_column(i, f.name, col if col is not None else table.column(i).cast(pa.float64()))
    return table.to_pandas()


def _sig(x: float, digits: int = 6) -> float:
    """Round to ``digits`` significant digits (stable, compact JSON)."""
    if x == 0 or not math.isfinite(x):
        return float(x)
    return float(f"{x:.{digits}g}")


CELL_DIGITS = 10  # a cell keeps a revenue total to the cent (6 digits turned 3,346,869 into 3,346,870)


def _kind(t: pa.DataType) -> ColumnKind:
    if pa.types.is_null(t):
        return ColumnKind.null
    if pa.types.is_boolean(t):
        return ColumnKind.boolean
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return ColumnKind.number
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return ColumnKind.timestamp
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return ColumnKind.string
    if pa.types.is_dictionary(t):
        return _kind(t.value_type)
    return ColumnKind.mixed


VIEW_DIGITS = 4  # significant digits of a number as the explorer reads it (never fewer than its cents)


def _midnight(v: Any) -> bool:
    return isinstance(v, (dt.datetime, pd.Timestamp)) and v.tzinfo is None and v == v.replace(
        hour=0, minute=0, second=0, microsecond=0) and not getattr(v, "nanosecond", 0)


def dates_only(values: list) -> bool:
    """Whether a column's timestamps may be read as dates: every one of them (nulls aside) at midnight. An hourly
    series whose midnight rows alone showed as dates read as two grains in one column."""
    return any(v is not None for v in values) and all(v is None or _midnight(v) for v in values)


def view_cell(v: Any, dates: bool = True) -> Any:
    """One value as the exploring model reads it in a tool result: a float to 4 significant digits but never
    fewer than 2 decimals (a share 0.7465, a total 10889.27 to the cent), a timestamp at midnight as its date
    (with ``dates``: the caller's column is all midnights, ``dates_only``). Ten digits of a ratio
    ("0.2383298497") doubled a row's size, and a 60-level breakdown was cut to 40 rows where a real model needed
    every level; the digests, the verifier and the store keep ``cell``'s precision."""
    if isinstance(v, float) and math.isfinite(v) and v != 0:
        whole = int(math.floor(math.log10(abs(v)))) + 1  # digits before the point (<= 0 for a fraction)
        return _sig(v, min(CELL_DIGITS, max(VIEW_DIGITS, whole + 2)))
    if isinstance(v, decimal.Decimal) and v.is_finite() and v.as_tuple().exponent < 0:
        return view_cell(float(v))
    if isinstance(v, np.generic):
        return view_cell(v.item(), dates)
    if dates and _midnight(v):
        return v.date().isoformat()
    return cell(v)


def cell(v: Any) -> Any:
    """A JSON-safe, deterministic rendering of one value."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return _sig(v, CELL_DIGITS) if math.isfinite(v) else None
    if isinstance(v, decimal.Decimal):
        if v.is_finite() and v.as_tuple().exponent >= 0:
            return int(v)  # numeric(p, 0): SUM of integers in DuckDB and PostgreSQL is a count, not 45.0
        f = float(v)
        return _sig(f, CELL_DIGITS) if math.isfinite(f) else None
    if isinstance(v, np.generic):
        return cell(v.item())
    if isinstance(v, (dt.datetime, pd.Timestamp)):
        return v.isoformat()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return v.total_seconds()
    if isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)[:48]
        return "base64:" + base64.b64encode(b).decode()
    if isinstance(v, str):
        return v if len(v) <= DIGEST_CELL_CHARS else v[: DIGEST_CELL_CHARS - 1] + "…"
    if isinstance(v, dict):
        return {str(k): cell(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [cell(x) for x in v[:20]]
    return cell(str(v))


def _to_arrow(data: pa.Table | pd.DataFrame) -> tuple[pa.Table, set[str]]:
    """Arrow view of the data with scalar columns only (nested values as JSON text, see
    ``warehouse.values``), and the names of genuinely mixed-type columns."""
    if isinstance(data, pa.Table):
        return digestible(data), set()
    cols, names, mixed = [], [], set()
    for name in data.columns:
        s = data[name]
        try:
            arr = pa.array(s, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            # values of several types: keep each value's type visible in the rows
            arr = pa.array(
                [None if v is None or (isinstance(v, float) and math.isnan(v)) else f"{type(v).__name__}:{v}"
                 for v in s],
                type=pa.string(),
            )
            mixed.add(str(name))
        names.append(str(name))
        cols.append(arr)
    return digestible(pa.Table.from_arrays(cols, names=names)), mixed


def _sorted_quantiles(sv: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    """Linear interpolation on a sorted array (numpy's default 'linear' method)."""
    n = sv.size
    out = []
    for q in qs:
        pos = q * (n - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, n - 1)
        out.append(float(sv[lo] + (sv[hi] - sv[lo]) * (pos - lo)))
    return out


def _integral(col: pa.ChunkedArray) -> pa.ChunkedArray | None:
    """The column as int64 when it holds integers (integer types, numeric(p, 0) that fits), else None."""
    t = col.type
    if pa.types.is_integer(t):
        return col
    if pa.types.is_decimal(t) and t.scale == 0:
        try:
            return pc.cast(col, pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return None


def _number_summary(col: pa.ChunkedArray, s: ColumnSummary, n: int) -> None:
    ints = _integral(col)
    _quantile_summary(ints if ints is not None else col, s, n)
    if ints is not None and s.min is not None:  # a count's min and max are exact counts: 1234567, not 1.23457e6
        mm = pc.min_max(ints)
        s.min, s.max = mm["min"].as_py(), mm["max"].as_py()
        for f in ("p25", "median", "p75"):
            v = getattr(s, f)
            if v is not None and float(v).is_integer():
                setattr(s, f, int(v))


def _quantile_summary(col: pa.ChunkedArray, s: ColumnSummary, n: int) -> None:
    if pa.types.is_decimal(col.type):
        col = pc.cast(col, pa.float64())
    values = col.to_numpy(zero_copy_only=False)
    if values.dtype == object:
        values = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype="float64")
    if values.dtype.kind in "iub" and col.null_count == 0:
        finite = values  # integers: nothing to exclude
    else:
        values = values.astype("float64", copy=False)
        finite = values[np.isfinite(values)]  # NaN (incl. nulls) and ±Inf excluded
    s.null_count = int(n - finite.size)
    if finite.size == 0:
        s.distinct = 0
        return
    if finite.dtype.kind in "iu":
        lo, hi = int(finite.min()), int(finite.max())
        if hi - lo <= 4 * finite.size:
            # small integer range: counting is linear, and exact
            counts = np.bincount(finite - lo)
            s.distinct = int(np.count_nonzero(counts))
            cum = np.cumsum(counts)

            def at(rank: int) -> float:
                return float(lo + int(np.searchsorted(cum, rank, side="right")))

            qv = []
            for q in (0.0, 0.25, 0.5, 0.75, 1.0):
                pos = q * (finite.size - 1)
                r0 = int(np.floor(pos))
                a, b = at(r0), at(min(r0 + 1, finite.size - 1))
                qv.append(a + (b - a) * (pos - r0))
            s.min, s.p25, s.median, s.p75, s.max = (_sig(v) for v in qv)
            return
    # one sort gives the exact quantiles and the distinct count
    sv = np.sort(finite)
    s.distinct = int(1 + np.count_nonzero(sv[1:] != sv[:-1]))
    qv = _sorted_quantiles(sv, (0.0, 0.25, 0.5, 0.75, 1.0))
    s.min, s.p25, s.median, s.p75, s.max = (_sig(q) for q in qv)


def _top(vc: pa.StructArray, masked: bool) -> list[ValueCount]:
    if len(vc) == 0:
        return []
    values = vc.field("values").to_pylist()
    counts = vc.field("counts").to_pylist()
    pairs = sorted(zip(values, counts), key=lambda p: (-p[1], str(p[0])))
    return [ValueCount(value=MASK if masked else cell(v), count=int(c)) for v, c in pairs[:TOP_VALUES]]


def _value_counts(col: pa.ChunkedArray) -> pa.StructArray:
    return pc.value_counts(col.drop_null() if hasattr(col, "drop_null") else pc.drop_null(col))


def summarise_column(
    name: str, col: pa.ChunkedArray, n: int, masked: bool = False, mixed: bool = False
) -> ColumnSummary:
    kind = ColumnKind.mixed if mixed else _kind(col.type)
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    s = ColumnSummary(name=name, kind=kind)
    if masked and kind in (ColumnKind.number, ColumnKind.timestamp):
        # a phone number stored as digits or a date of birth: its extremes and quantiles are its values; how many
        # there are, and how many distinct, are not
        s.null_count = int(col.null_count)
        s.distinct = int(pc.count_distinct(col, mode="only_valid").as_py())
        return s
    if kind == ColumnKind.number:
        _number_summary(col, s, n)
    vc = None
    if kind != ColumnKind.number:
        s.null_count = int(col.null_count)
        if kind in (ColumnKind.string, ColumnKind.boolean):
            vc = _value_counts(col)  # one pass: the distinct count and the top values
            s.distinct = len(vc)
        elif kind in (ColumnKind.timestamp, ColumnKind.mixed):
            s.distinct = int(pc.count_distinct(col).as_py()) if n else 0
    if n and s.null_count == n and kind != ColumnKind.mixed:
        s.kind = ColumnKind.null
        s.distinct = 0
        return s
    if kind == ColumnKind.timestamp and n > s.null_count:
        mm = pc.min_max(col)
        s.min_time = cell(mm["min"].as_py())
        s.max_time = cell(mm["max"].as_py())
    elif kind == ColumnKind.boolean:
        s.top = _top(vc, False)
    elif kind == ColumnKind.string and 0 < s.distinct <= TOP_VALUE_CARDINALITY:
        s.top = _top(vc, masked)
    return s


def _rows(table: pa.Table, masked: set[str]) -> list[dict[str, Any]]:
    out = []
    for row in table.to_pylist():
        out.append({k: (MASK if (k in masked and v is not None) else cell(v)) for k, v in row.items()})
    return out


def masked_columns(table: pa.Table, pii: Iterable[str], auto_pii: bool = True) -> set[str]:
    """The columns (already uniquely named) whose values are masked: declared PII, and by name and type."""
    names = table.column_names
    if auto_pii:
        return pii_columns(names, pii, types={f.name: f.type for f in table.schema})
    return {c for c in names if c.lower() in {p.lower() for p in pii}}


def chart_rows(data: pa.Table | pd.DataFrame, *, pii: Iterable[str] = (), auto_pii: bool = True,
               limit: int = CHART_ROWS, total_rows: int | None = None,
               truncated: bool = False) -> list[dict[str, Any]] | None:
    """Every row of a result too long for its digest to hold whole (over COMPACT_INLINE_THRESHOLD rows) and small
    enough to keep (at most ``limit`` rows, CHART_COLUMNS columns, CHART_CELLS values, CHART_BYTES of JSON), masked
    as its digest masks them; None otherwise, and for a result the row cap cut (``truncated``, or ``total_rows``
    above its rows: a part drawn as the whole would mislead). For the report's chart of the step: never sent to a model."""
    n, width = (data.num_rows, data.num_columns) if isinstance(data, pa.Table) else data.shape
    if not COMPACT_INLINE_THRESHOLD < n <= limit or width > CHART_COLUMNS \
            or n * width > CHART_CELLS or truncated or (total_rows is not None and total_rows > n):
        return None  # decided before any conversion: most results are not kept
    table, _ = _to_arrow(data)
    table = table.rename_columns(unique_names(table.column_names))
    rows = _rows(table, masked_columns(table, pii, auto_pii))
    return rows if len(json.dumps(rows, default=str)) <= CHART_BYTES else None


def unique_names(names: list[str]) -> list[str]:
    """Duplicate column names (SELECT a.id, b.id) with a stable suffix: id, id_2 (the explorer's view and the
    digest name them alike)."""
    out, seen = [], {}
    for c in names:
        k = seen.get(c, 0)
        out.append(c if k == 0 else f"{c}_{k + 1}")
        seen[c] = k + 1
    return out


def build_compact_result(
    data: pa.Table | pd.DataFrame,
    *,
    total_rows: int | None = None,
    truncated: bool = False,
    pii: Iterable[str] = (),
    auto_pii: bool = True,
    keep: Iterable[int] = (),
) -> CompactResult:
    """Digest a result. ``total_rows`` is the true count when the row cap cut it. ``keep``: positions of rows the
    digest keeps besides its signal rows (the rows the explorer was shown, which its notes and the analysis cite)."""
    table, mixed = _to_arrow(data)
    n = table.num_rows
    names = unique_names(table.column_names)
    mixed |= {new for old, new in zip(table.column_names, names) if old != new and old in mixed}
    table = table.rename_columns(names)
    masked = masked_columns(table, pii, auto_pii)
    if n >= PARALLEL_ROWS and len(names) > 1:
        # sorts and Arrow kernels release the GIL; results keep the column order
        futures = [_POOL.submit(summarise_column, c, table.column(c), n, c in masked, c in mixed) for c in names]
        columns = [f.result() for f in futures]
    else:
        columns = [summarise_column(c, table.column(c), n, c in masked, c in mixed) for c in names]
    total = total_rows if total_rows is not None else n
    shortened = shortened_columns(table)
    notes = []
    if n <= COMPACT_INLINE_THRESHOLD:
        all_rows, kept, numbers = _rows(table, masked), None, None
        if total > n:
            notes.append(f"{n} of {total} rows kept (the row cap)")
        if shortened:
            notes.append(f"long values shortened in column(s): {', '.join(shortened)}")
    else:
        positions, how = select_rows(table, DIGEST_KEPT_ROWS)
        shown = sorted({int(p) for p in keep if 0 <= int(p) < n} - set(positions))
        if shown:  # a row the explorer saw stays readable for the analysis that cites it
            positions = sorted(set(positions) | set(shown))
            how += f"; and the {len(shown)} other rows the explorer was shown"
        all_rows, kept = None, _rows(table.take(pa.array(positions, type=pa.int64())), masked)
        numbers = [p + 1 for p in positions]
        if total > n:
            how += f"; only the first {n:,} rows were fetched (the row cap)"
        notes.append(describe_cut(len(positions), total, how, shortened))
    return CompactResult(
        row_count=total,
        truncated=truncated or total > n or kept is not None,
        columns=columns,
        all_rows=all_rows,
        kept_rows=kept,
        kept_row_numbers=numbers,
        cut="; ".join(notes) or None,
    )


def shortened_columns(table: pa.Table) -> list[str]:
    """Columns with a value longer than a digest cell: it is shortened, and the digest says so."""
    out = []
    for name in table.column_names:
        col = table.column(name)
        t = col.type
        if pa.types.is_dictionary(t):
            col, t = col.cast(t.value_type), t.value_type
        if (pa.types.is_string(t) or pa.types.is_large_string(t)) and table.num_rows:
            longest = pc.max(pc.utf8_length(col)).as_py()
            if longest and longest > DIGEST_CELL_CHARS:
                out.append(name)
    return out


def cap_bytes(cr: CompactResult, max_bytes: int) -> CompactResult:
    """Shed rows until the digest fits (the last kept rows first); statistics stay, and ``cut`` says
    how many rows are left of how many."""
    if max_bytes <= 0 or len(digest_json(cr).encode()) <= max_bytes:
        return cr
    cr = cr.model_copy(deep=True)
    if cr.all_rows is not None:
        cr.kept_rows, cr.kept_row_numbers = cr.all_rows, list(range(1, len(cr.all_rows) + 1))
        cr.all_rows = None
    base = cr.cut
    rows, numbers = list(cr.kept_rows or []), list(cr.kept_row_numbers or [])
    order = _shed_order(rows)  # the rows that carry the least signal go first (rows.py), not the last ones
    keep = list(range(len(rows)))
    while keep and len(digest_json(cr).encode()) > max_bytes:
        drop = order.pop(0) if order else keep[-1]
        keep.remove(drop)
        cr.kept_rows, cr.kept_row_numbers = [rows[i] for i in keep], [numbers[i] for i in keep]
        cr.truncated = True
        cr.cut = (f"{len(keep)} of {cr.row_count} rows kept (the digest's byte cap)"
                  + (f"; before the cap: {base}" if base else ""))
    return cr


def _shed_order(rows: list[dict]) -> list[int]:
    """Indexes of ``rows`` in the order a byte cap sheds them: a series' rows away from its changes and extremes, a
    ranking's middle, first; the rows ``select_rows`` keeps longest go last. Rows that cannot form a table (mixed
    types) are shed from the end, as before."""
    n = len(rows)
    try:
        table = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return list(range(n - 1, -1, -1))
    rank = {}
    for k in range(n - 1, 0, -1):  # the rows kept at k but not at k - 1 go at step n - k
        kept = set(select_rows(table, k)[0])
        for i in range(n):
            if i not in kept and i not in rank:
                rank[i] = k
    order = sorted(range(n), key=lambda i: (-rank.get(i, 0), -i))
    return [i for i in order if i in rank] + [i for i in range(n - 1, -1, -1) if i not in rank]


def digest_json(cr: CompactResult) -> str:
    """The canonical JSON of a digest: compact, key order fixed, no NaN."""
    return json.dumps(cr.model_dump(mode="json", exclude_none=True), ensure_ascii=False,
                      separators=(",", ":"), allow_nan=False)
