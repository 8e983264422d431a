"""Schema conventions: what a column is (key, clock time, calendar part, free text, measure, dimension)
and how relevant it is to the question asked.

Pure functions over names, types and profile counts; the embedding similarity is passed in,
so the planner stays testable without a model.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"(^id$|_id$|^id_|key$|_uuid$|^uuid$|_guid$|^guid$)", re.I)
_CLOCK = re.compile(r"(^|_)(time|clock|hhmm)$|_time_|^(dep|arr|sched|departure|arrival)_?time", re.I)
_CAL_PART = re.compile(r"^(year|month|day|dow|weekday|day_of_week|hour|minute|second|quarter|week|yr|mon|hh|mm|"
                       r"day_of_month|dayofweek|doy|day_of_year)$|_(year|month|day|hour|minute|week|quarter)$", re.I)
_TEXT = re.compile(r"(comment|description|desc$|note|remark|text|message|body|summary|title|address|"
                   r"^name$|_name$|url|email|phone)", re.I)
_BUSINESS = re.compile(r"(amount|revenue|price|total|spend|value|cost|gmv|sales|profit|margin|income|"
                       r"delay|duration|latency|time_to|wait|days|hours|minutes|seconds|score|rating|"
                       r"count|qty|quantity|volume|balance|fee|salary|weight|mass|length|size|rate|"
                       r"expectancy|exp$|temp|precip)", re.I)
_TWIN_PREFIX = re.compile(r"^(sched|scheduled|planned|plan|expected|exp|est|estimated|target|budget|orig|"
                          r"original|actual|act|real)_", re.I)

TEXT_MIN_AVG_LEN = 30      # longer than a label: free text
TEXT_MIN_DISTINCT = 0.5    # most rows hold their own value
TEXT_MAX_LABELS = 30       # ... but a few values repeated over the rows are labels, however long (one 300-character
#                            label among 14 pushed a column's average length over 30 and hid its effect)


def is_key(name: str) -> bool:
    """id, *_id, *key (c_custkey, l_orderkey), *_uuid."""
    return bool(_KEY.search(name))


def names_the_table(name: str, table: str) -> bool:
    """flights.flight, orders.order_number: the row's own number, an identifier, never a measure."""
    n, t = name.lower(), table.lower()
    stem = t[:-1] if t.endswith("s") else t
    return n in (t, stem) or n in (f"{stem}_no", f"{stem}_num", f"{stem}_number", f"{stem}num", f"{stem}_nr")


def is_calendar_part(name: str) -> bool:
    return bool(_CAL_PART.search(name))


def is_clock_int(name: str, kind: str, lo: float | None = None, hi: float | None = None) -> bool:
    """A time of day stored as a number (HHMM: 517 = 05:17), named like a time."""
    if kind != "number" or not _CLOCK.search(name):
        return False
    if lo is None or hi is None:
        return True
    return lo >= 0 and hi <= 2400 and hi >= 100


def is_free_text(name: str, kind: str, distinct: int, rows: int, avg_len: float | None) -> bool:
    """Comments and descriptions: long or mostly distinct strings, never a segment."""
    if kind != "string":
        return False
    share = distinct / rows if rows else 0.0
    if avg_len is not None and avg_len >= TEXT_MIN_AVG_LEN:
        return not (0 < distinct <= TEXT_MAX_LABELS and share < TEXT_MIN_DISTINCT)
    # a name in a 16-row table is a label; in a big table, mostly distinct names or notes are free text
    return bool(_TEXT.search(name)) and share >= TEXT_MIN_DISTINCT and rows >= 100


def twin_stem(name: str) -> str:
    """sched_dep_time and dep_time, planned_cost and cost: one stem."""
    return _TWIN_PREFIX.sub("", name.lower())


def are_twins(a: str, b: str) -> bool:
    """A column and its scheduled, planned or derived twin: their relation is a definition."""
    sa, sb = twin_stem(a), twin_stem(b)
    if sa == sb:
        return True
    # dep_time and dep_delay are not twins; arr_time and sched_arr_time are
    return False


def business_score(name: str) -> float:
    """How much a column looks like something a business tracks (0 or 1)."""
    return 1.0 if _BUSINESS.search(name) else 0.0


_ABBREV = {"dep": "departure", "arr": "arrival", "sched": "scheduled", "amt": "amount", "qty": "quantity",
           "avg": "average", "num": "number", "cnt": "count", "pct": "percent", "temp": "temperature",
           "precip": "precipitation", "exp": "expectancy", "dur": "duration", "rev": "revenue", "cust": "customer",
           "dt": "date", "ts": "timestamp", "desc": "description", "lat": "latitude", "lon": "longitude",
           "alt": "altitude", "percap": "per capita", "gdp": "gdp", "pop": "population", "mm": "millimetres",
           "g": "grams"}


def expand(name: str) -> str:
    """dep_delay -> departure delay, lifeExp -> life expectancy: the words a question uses."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return " ".join(_ABBREV.get(w.lower(), w.lower()) for w in re.split(r"[_\W]+", spaced) if w)


def expand_text(text: str) -> str:
    """Every column-like token of a sentence expanded (lifeExp, dep_delay): what an embedder can match."""
    return re.sub(r"[A-Za-z][A-Za-z0-9_]*", lambda m: expand(m.group(0)) if ("_" in m.group(0) or re.search(
        r"[a-z][A-Z]", m.group(0)) or m.group(0).lower() in _ABBREV) else m.group(0), text)


def column_text(table: str, name: str, description: str = "", samples: str = "") -> str:
    """What is embedded for a column: its words, its table's, its comment and sample values."""
    words = expand(name)
    return " ".join(x for x in (words, "of", table.replace("_", " "), description, samples) if x).strip()


def keyword_hits(text: str, keywords: list[str]) -> int:
    t = text.lower().replace("_", " ")
    return sum(1 for k in keywords if k and k.lower() in t)


def expand_acronyms(goal: str, texts: list[str]) -> str:
    """TTR -> TTR (time to resolution): an acronym of the goal spelled out by the words of the findings
    whose initials it is (three letters or more; the most frequent spelling wins)."""
    def spell(token: str) -> str | None:
        k, counts = len(token), {}
        for t in texts:
            words = re.findall(r"[a-z]+", t.lower())
            for i in range(len(words) - k + 1):
                seq = words[i:i + k]
                if "".join(w[0] for w in seq) == token.lower():
                    counts[" ".join(seq)] = counts.get(" ".join(seq), 0) + 1
        return max(counts, key=lambda x: (counts[x], x)) if counts else None

    def repl(m: re.Match) -> str:
        token = m.group(1)
        phrase = spell(token)
        return f"{m.group(0)} ({phrase})" if phrase else m.group(0)

    return re.sub(r"\b([A-Z]{3,6})s?\b", repl, goal)
