"""Result values every later stage can digest, whatever the engine's column types.

Adapters hand on Arrow tables whose columns are scalars only: booleans, integers, floats,
decimals, strings, binary, dates, times and timestamps. Everything nested (lists, arrays,
structs, maps, unions, JSON documents, records) becomes JSON text; everything else an engine
invents (intervals, UUIDs, network addresses, ranges, money, geometry, bit strings, enums, ...)
becomes its text. A date or timestamp Python cannot hold (``infinity``, year 10000+) turns its
column into text rather than crashing whoever reads it. Pure functions, no engine imports.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def json_default(v: Any) -> Any:
    """JSON for the values nested documents carry (used by json.dumps)."""
    if isinstance(v, decimal.Decimal):
        return float(v) if v.is_finite() and abs(v) < decimal.Decimal("1e300") else str(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, dt.timedelta):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    if isinstance(v, uuid.UUID):
        return str(v)
    return str(v)


def _json_safe(v: Any) -> Any:
    """Non-finite floats as text: JSON has no NaN, and the digest writes strict JSON."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    return v


def as_json_text(v: Any) -> str | None:
    if v is None:
        return None
    try:
        return json.dumps(_json_safe(v), default=json_default, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(str(v), ensure_ascii=False)


def as_text(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, (list, tuple, dict, set, frozenset)):
        return as_json_text(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "\\x" + bytes(v).hex()
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    return str(v)


def _exact(values: Iterable[Any], *types: type) -> bool:
    return all(type(v) in types for v in values)


def column_from_values(values: Sequence[Any]) -> pa.Array:
    """One result column of Python values (PostgreSQL, Snowflake rows) as a scalar Arrow array."""
    present = [v for v in values if v is not None]
    if not present:
        return pa.nulls(len(values))
    try:
        if _exact(present, bool):
            return pa.array(values, pa.bool_())
        if _exact(present, int):
            if all(_INT64[0] <= v <= _INT64[1] for v in present):
                return pa.array(values, pa.int64())
            return pa.array([None if v is None else str(v) for v in values], pa.string())
        if _exact(present, int, float):
            return pa.array([None if v is None else float(v) for v in values], pa.float64())
        if _exact(present, decimal.Decimal, int):
            if all(isinstance(v, int) or v.is_finite() for v in present):
                try:
                    arr = pa.array([None if v is None else decimal.Decimal(v) for v in values])
                    if arr.type.precision <= 38:
                        return arr
                except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                    pass  # more digits than Arrow's decimals hold
            return pa.array([None if v is None else float(v) for v in values], pa.float64())
        if _exact(present, str):
            return pa.array(values, pa.string())
        if _exact(present, bytes, bytearray, memoryview):
            return pa.array([None if v is None else bytes(v) for v in values], pa.binary())
        if _exact(present, dt.datetime):
            aware = {v.tzinfo is not None and v.utcoffset() is not None for v in present}
            if len(aware) == 1:
                if aware == {True}:
                    return pa.array([None if v is None else v.astimezone(dt.timezone.utc) for v in values],
                                    pa.timestamp("us", tz="UTC"))
                return pa.array(values, pa.timestamp("us"))
        if _exact(present, dt.date):
            return pa.array(values, pa.date32())
        if _exact(present, dt.time) and all(v.tzinfo is None for v in present):
            return pa.array(values, pa.time64("us"))
        if _exact(present, float):
            return pa.array(values, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, ValueError):
        pass
    return pa.array([as_text(v) for v in values], pa.string())


def table_from_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> pa.Table:
    """Rows of Python values as an Arrow table of scalar columns (duplicate names kept)."""
    if not columns:
        return pa.table({})
    arrays = [column_from_values([r[i] for r in rows]) for i in range(len(columns))]
    return pa.Table.from_arrays(arrays, names=[str(c) for c in columns])


# --------------------------------------------------------------------------- Arrow columns


def _scalar(t: pa.DataType) -> bool:
    return (pa.types.is_null(t) or pa.types.is_boolean(t) or pa.types.is_integer(t)
            or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_string(t)
            or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_date(t) or pa.types.is_timestamp(t) or pa.types.is_time(t))


# what Python's datetime holds: 0001-01-01 .. 9999-12-31, per unit
_TS_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_PY_MIN_S, _PY_MAX_S = -62135596800, 253402300799


def _temporal_in_range(col: pa.ChunkedArray) -> bool:
    t = col.type
    if pa.types.is_timestamp(t):
        per = _TS_UNITS[t.unit]
        raw = col.cast(pa.int64())
        lo, hi = _PY_MIN_S * per, _PY_MAX_S * per
    elif pa.types.is_date32(t):
        raw, lo, hi = col.cast(pa.int32()), -719162, 2932896
    elif pa.types.is_date64(t):
        raw, lo, hi = col.cast(pa.int64()), _PY_MIN_S * 1000, _PY_MAX_S * 1000
    else:
        return True
    if col.null_count == len(col):
        return True
    mm = pc.min_max(raw)
    return mm["min"].as_py() >= lo and mm["max"].as_py() <= hi


def _temporal_as_text(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """Dates/timestamps out of Python's range as text; the engines' +-infinity by name."""
    t = col.type
    raw = col.cast(pa.int64() if not pa.types.is_date32(t) else pa.int32())
    top = 2 ** 31 - 1 if pa.types.is_date32(t) else 2 ** 63 - 1
    try:
        text = col.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        text = raw.cast(pa.string())
    text = pc.if_else(pc.equal(raw, top), pa.scalar("infinity"), text)
    text = pc.if_else(pc.less_equal(raw, -top), pa.scalar("-infinity"), text)
    return text if isinstance(text, pa.ChunkedArray) else pa.chunked_array([text])


def digestible_column(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """One Arrow column with only digestible values (see the module docstring)."""
    t = col.type
    if pa.types.is_dictionary(t):
        try:
            return digestible_column(col.cast(t.value_type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    elif _scalar(t):
        if pa.types.is_date(t) or pa.types.is_timestamp(t):
            return col if _temporal_in_range(col) else _temporal_as_text(col)
        if pa.types.is_large_string(t):
            return col.cast(pa.string())
        if pa.types.is_decimal(t) and t.precision > 38:
            return col.cast(pa.float64())
        return col
    elif pa.types.is_string_view(t) if hasattr(pa.types, "is_string_view") else False:
        return col.cast(pa.string())
    nested = (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
              or pa.types.is_struct(t) or pa.types.is_map(t) or pa.types.is_union(t)
              or (hasattr(pa.types, "is_list_view") and pa.types.is_list_view(t)))
    try:
        values = col.to_pylist()
    except (ValueError, OverflowError, pa.ArrowException):
        try:
            return col.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            valid = pc.is_valid(col).to_pylist()
            return pa.chunked_array([pa.array([f"<{t}>" if ok else None for ok in valid], pa.string())])
    if nested:
        if pa.types.is_map(t):
            values = [None if v is None else _map_to_dict(v) for v in values]
        return pa.chunked_array([pa.array([as_json_text(v) for v in values], pa.string())])
    return pa.chunked_array([pa.array([as_text(v) for v in values], pa.string())])


def _map_to_dict(pairs: list) -> Any:
    try:
        return {str(k): v for k, v in pairs}
    except (TypeError, ValueError):
        return pairs


def digestible(table: pa.Table) -> pa.Table:
    """The table with every column made digestible (names and order kept)."""
    if all(_scalar(f.type) and not (pa.types.is_date(f.type) or pa.types.is_timestamp(f.type)
                                    or pa.types.is_large_string(f.type)
                                    or (pa.types.is_decimal(f.type) and f.type.precision > 38))
           for f in table.schema):
        return table
    cols = [digestible_column(table.column(i)) for i in range(table.num_columns)]
    return pa.Table.from_arrays(cols, names=table.column_names)
