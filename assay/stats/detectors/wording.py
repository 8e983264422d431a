"""How candidates read: numbers, shares, column names as words, calendar values."""

from __future__ import annotations

import math

_GRAIN = {"month": "monthly", "year": "yearly"}
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]
_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]  # dayofweek: 0 = Sunday


def fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    ax = abs(x)
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def rates(*xs: float) -> list[str]:
    """Numbers of one sentence that are rates, written alike: all as percentages when every one is a fraction
    (55.9%, 12.3%), else all as numbers ("30.0%, against a typical 1.5" mixed two units in one line)."""
    if all(x is not None and math.isfinite(float(x)) and abs(x) <= 1 for x in xs):
        return [pct(x) for x in xs]
    return [fmt(x) for x in xs]


def is_rate(col: str) -> bool:
    """A probe's own rate column (``won_rate``, ``returned_rate``: a share of rows or entities), not an aggregate
    of a column that happens to be called a rate (``avg_exchange_rate`` is an average)."""
    return str(col).endswith("_rate") and not str(col).startswith(("avg_", "sum_", "sd_", "nn_"))


def rate(x: float) -> str:
    """A rate or share as its claim line writes it (55.9%, not 0.559), so that an insight's text and its checked
    numbers read alike; one above 1 (more removals than adds to cart) is no fraction and stays a number."""
    return rates(x)[0]


def words(col: str) -> str:
    return str(col).replace("_", " ")


def subject(dim: str, seg) -> str:
    """A segment as a headline's subject: a number says what it is a value of ("level 42", not "42 has a much lower
    won rate"); a word names itself ("android")."""
    try:
        float(str(seg))
    except ValueError:
        return str(seg)
    return f"{words(dim)} {seg}"


def grain_word(grain: str) -> str:
    return _GRAIN[grain]


def measure_words(measure: str, table: str, label: str | None = None, label_of: str | None = None,
                  unit: str = "days") -> str:
    """n -> number of orders, avg_dep_delay -> average dep delay; ``label`` names ``label_of`` (an
    interval measure: average time to resolution in days, average session length in minutes)."""
    if measure == "n":
        return f"number of {table}"
    if label and measure == label_of:
        return f"average {label} in {unit}"
    if measure.startswith("sum_"):  # sum_total_amount -> total amount, not "total total amount"
        rest = words(measure[4:])
        return rest if rest.split(" ")[0] in ("total", "sum") else "total " + rest
    if measure.startswith("avg_"):
        return "average " + words(measure[4:])
    return words(measure)


def p_eq(p: float) -> str:
    """"p = 6.9e-10"; a p-value that underflowed to 0 is "p < 1e-300" (a new user read "p = 0")."""
    return "p < 1e-300" if p == 0 else f"p = {p:.2g}"  # only an underflow: a NaN stays as it is


def group_label(value, calendar: str | None, dim_words: str) -> str:
    """A group of a dimension as a reader names it: a calendar value by its name (``calendar_label``), a number with
    its dimension ("level 2": a new user read "2 has the highest median moves left (3) and 42 the lowest (0)"), any
    other value as it is ("furniture")."""
    if calendar is None and not isinstance(value, bool):
        try:
            float(str(value))
        except ValueError:
            return str(value)
        return f"{dim_words} {value}"
    return calendar_label(value, calendar)


def calendar_label(value, calendar: str | None) -> str:
    """7 -> July (month of year), 0 -> Sunday (day of week), 17 -> 17:00 (hour of day)."""
    try:
        v = int(value)
    except (TypeError, ValueError):
        return str(value)
    if calendar == "month" and 1 <= v <= 12:
        return _MONTHS[v - 1]
    if calendar == "dow" and 0 <= v <= 6:
        return _DAYS[v]
    if calendar == "hour" and 0 <= v <= 24:
        return f"{v:02d}:00"
    return str(value)
