"""The run report as one self-contained HTML file: summary, insights by area with severity and
validation badges, a Vega-Lite chart per insight drawn from its source step's stored result
(Altair), the SQL behind each number (collapsed), recommendations linked to their insights and back.

Charts come only from what the run stored: the step's digest, already masked (PII columns by
name and by lineage). The report never queries the warehouse: a step whose digest kept only its
head and tail rows gets no chart, and a masked column is never plotted.

The Vega/Vega-Lite/vega-embed bundle is inlined once (from vl-convert), so the file opens
offline and can be mailed as is.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from functools import lru_cache

import jinja2
import pandas as pd

from ..models import DiscoveryResult, ExplorationStep, Insight, ValidationStatus
from ..pii import MASK
from ..validate.compare import AFFECTED
from .claims import checked_summary, claim_line, claim_subject, insight_notes
from .markdown import links

MAX_BARS = 25
_TIME_NAME = re.compile(r"(^|_)(month|week|day|date|time|period|hour|year|quarter)($|_)", re.I)
_ID_NAME = re.compile(r"(^id$|_id$|_key$)", re.I)

BADGES = {
    ValidationStatus.confirmed: ("confirmed", "ok"),
    ValidationStatus.adjusted: ("adjusted", "warn"),
    ValidationStatus.rejected: ("rejected", "bad"),
    ValidationStatus.error: ("not verified", "bad"),
    ValidationStatus.not_verifiable: ("no number checked", "muted"),
}


# ---------------------------------------------------------------------------- charts


def step_frame(step: ExplorationStep) -> pd.DataFrame | None:
    """The step's whole result as the run stored it (masked): its digest's rows when it holds every row, else the
    rows kept for the chart (``chart_rows``); None when neither holds every row (the digest's signal rows alone
    would draw a misleading chart). Columns whose values are all masked are left out: there is nothing to draw."""
    d = step.digest
    rows = (d.all_rows or step.chart_rows) if d is not None else None
    if not step.ok or not rows:
        return None
    df = pd.DataFrame(rows, columns=[c.name for c in d.columns])
    masked = [c for c in df.columns if df[c].notna().any() and (df[c].dropna() == MASK).all()]
    return df.drop(columns=masked)


def _numeric(df: pd.DataFrame, col: str) -> bool:
    values = pd.to_numeric(df[col], errors="coerce")
    return values.notna().mean() > 0.8 and not isinstance(df[col].iloc[0], bool)


def _headline(insight: Insight):
    return next((c for c in insight.claims if c.measure != AFFECTED), None)


def _segment(insight: Insight) -> tuple[str | None, str | None]:
    """The segment the insight is about: its headline claim's condition (col = 'value'), else its
    segment written as dim=value."""
    c = _headline(insight)
    if c is not None and c.segment_sql:
        m = re.match(r"^\s*(?:\w+\.)?\"?(\w+)\"?\s*=\s*'?([^']*?)'?\s*$", c.segment_sql)
        if m:
            return m.group(1), m.group(2)
    if insight.segment and "=" in insight.segment:
        dim, value = insight.segment.split("=", 1)
        return dim.strip(), value.strip()
    return None, None


def _change_date(insight: Insight) -> str | None:
    """Where the change the insight reports begins (a date in its claim's period, else in its text)."""
    c = _headline(insight)
    texts = ([c.period_sql, c.period] if c is not None else []) + [insight.name, insight.description]
    for t in texts:
        m = re.search(r"\b(\d{4}-\d{2}-\d{2})\b", t or "")
        if m:
            return m.group(1)
    return None


def _holding(df: pd.DataFrame, dim: str | None, value: str) -> str | None:
    """The column of the result that holds the segment's value (the named one first), or None."""
    cols = ([dim] if dim in df.columns else []) + [c for c in df.columns if c != dim]
    for c in cols:
        numeric = pd.api.types.is_numeric_dtype(df[c])
        if not numeric or str(value).lstrip("-").isdigit():
            if str(value).lower() in {str(v).lower() for v in df[c].dropna().unique()}:
                return c
    return None


_COUNT_COLUMNS = ("n", "count", "rows", "row_count", "cnt")
_COUNT_WORDS = re.compile(r"\b(number of|volume|count of|how many)\b")


def _pick_measure(candidates: list[str], insight: Insight, named_only: bool = False) -> str | None:
    """The measure the insight names first (in its name, then its description), else a count when it
    speaks of a number of rows, else the first rate or average, else the first number."""
    text = f"{insight.name} . {insight.description}".lower()

    def base(c: str) -> str:
        return c.lower().removeprefix("avg_").removeprefix("sum_").removesuffix("_rate")

    def first_mention(c: str) -> int | None:
        b = base(c)
        if len(b) <= 2:
            return None
        hits = [m.start() for x in {b, b.replace("_", " ")} for m in [re.search(rf"\b{re.escape(x)}\b", text)] if m]
        return min(hits) if hits else None

    def kind_disagrees(c: str) -> bool:
        """sum_amount and avg_amount both name "amount": the words say which (a new user's chart drew the flat
        average under "the monthly total amount rose 97.6%")."""
        low = c.lower()
        if low.startswith("sum_"):
            return not _TOTAL_WORDS.search(text) and bool(_AVERAGE_WORDS.search(text))
        if low.startswith("avg_"):
            return not _AVERAGE_WORDS.search(text) and bool(_TOTAL_WORDS.search(text))
        return False

    named = sorted((pos, kind_disagrees(c), i, c) for i, c in enumerate(candidates)
                   if (pos := first_mention(c)) is not None)
    if named:
        return named[0][3]
    if named_only:
        return None
    counts = [c for c in candidates if c.lower() in _COUNT_COLUMNS]
    if counts and _COUNT_WORDS.search(text):
        return counts[0]
    for pool in ([c for c in candidates if c.endswith("_rate") or c.startswith(("avg_", "sum_"))], candidates):
        if pool:
            return pool[0]
    return None


_PER = re.compile(r"^\s*(\S+) per (\S+)")
_TOTAL_WORDS = re.compile(r"\b(total|totals|sum|summed)\b")
_AVERAGE_WORDS = re.compile(r"\b(average|averages|avg|mean)\b")


def _ratio_frame(df: pd.DataFrame, claimed: str | None, count: str, cats: list[str], dim: str | None,
                 times: list[str]) -> tuple[pd.DataFrame, str] | None:
    """A claim of "purchase per add_to_cart" over a result of counts by outcome (platform, event_type, n): the
    rate itself per the result's other keys (numerator's count over the denominator's), and its column; None
    when the claim is no such rate or the result does not hold both outcomes in one column."""
    m = _PER.match(claimed or "")
    if m is None:
        return None
    num, den = m.group(1).lower(), m.group(2).lower()
    for c in cats:
        if c == dim:
            continue
        values = {str(v).lower(): v for v in df[c].dropna().unique()}
        if num not in values or den not in values:
            continue
        keys = [k for k in df.columns if k != c and k != count and (k == dim or k in times or k in cats)]
        if not keys:
            return None
        top = df[df[c] == values[num]].groupby(keys)[count].sum()
        bottom = df[df[c] == values[den]].groupby(keys)[count].sum()
        name = f"{num}_per_{den}"
        rate = (top / bottom.where(bottom > 0)).rename(name).dropna().reset_index()
        return (rate, name) if len(rate) >= 2 else None
    return None


_TOP = re.compile(r"^top(\d+)$")


def _concentration_spec(df: pd.DataFrame) -> dict | None:
    """A concentration's one row (total, top1, top5, top10: the top k% of the entities' sums) drawn as each top
    group's share of the total beside the share it would hold if every entity held the same (k%); None for any
    other single row."""
    import altair as alt

    row = df.iloc[0]
    total = pd.to_numeric(row.get("total"), errors="coerce")
    tops = [(int(m.group(1)), pd.to_numeric(row[c], errors="coerce")) for c in df.columns if (m := _TOP.match(str(c)))]
    if not tops or not total or pd.isna(total) or any(pd.isna(v) for _, v in tops):
        return None
    data = pd.DataFrame([{"group": f"top {k}%", "share": v / total, "of": "their share"} for k, v in tops]
                        + [{"group": f"top {k}%", "share": k / 100, "of": "an even spread"} for k, _ in tops])
    order = [f"top {k}%" for k, _ in tops]
    chart = alt.Chart(data).mark_bar().encode(
        y=alt.Y("group:N", sort=order, title=None),
        x=alt.X("share:Q", axis=alt.Axis(format="%"), title="share of the total"),
        yOffset=alt.YOffset("of:N", sort=["their share", "an even spread"]),
        color=alt.Color("of:N", sort=["their share", "an even spread"], title=None,
                        scale=alt.Scale(range=["#d6604d", "#c5ccd6"])),
        tooltip=["group:N", "of:N", alt.Tooltip("share:Q", format=".1%")])
    spec = chart.properties(width="container", height=max(80, len(tops) * 40)).to_dict()
    spec.pop("$schema", None)
    return _clean(spec)


def _plain_names(columns: list) -> dict:
    """Each column's name with nothing Vega-Lite reads as syntax (a path's "." or "[", quotes, ":"), unique."""
    out: dict = {}
    used: set[str] = set()
    for c in columns:
        base = re.sub(r"[^\w ]", "_", str(c)) or "column"
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        out[c] = name
    return out


def chart_spec(insight: Insight, df: pd.DataFrame | None) -> dict | None:
    """A Vega-Lite spec (via Altair) of the insight's source result, or None when the result has
    nothing to draw (a single profile row, no numbers)."""
    import altair as alt

    if df is not None and len(df) == 1:
        return _concentration_spec(df)
    if df is None or len(df) < 2:
        return None
    df = df.loc[:, ~df.columns.duplicated()]
    times = [c for c in df.columns if _TIME_NAME.search(str(c)) and not pd.api.types.is_numeric_dtype(df[c])
             and pd.to_datetime(df[c], errors="coerce", utc=True).notna().mean() > 0.8]  # numbers are not times
    dim, value = _segment(insight)
    if value is not None:
        holder = _holding(df, dim, value)
        if holder is None:
            return None  # the result does not show the segment: no chart rather than an unrelated one
        dim = holder
    nums = [c for c in df.columns if c not in times and c != dim and not _ID_NAME.search(str(c)) and _numeric(df, c)]
    cats = [c for c in df.columns if c not in times and c not in nums and df[c].nunique(dropna=True) <= 60]
    head = _headline(insight)
    measure = None
    if head is not None and head.measure:  # the measure the claim states, when the result has it
        named = insight.model_copy(update={"name": head.measure, "description": ""})
        measure = _pick_measure(nums, named, named_only=True)
    measure = measure or _pick_measure(nums, insight)
    if measure is None:
        return None
    df = df.copy()
    df[measure] = pd.to_numeric(df[measure], errors="coerce")
    ratio = _ratio_frame(df, head.measure if head is not None else None, measure, cats, dim, times)
    if ratio is not None:  # a rate of one outcome per another, drawn as that rate, never as the outcomes' totals
        df, measure = ratio
        cats = [c for c in cats if c in df.columns]
    elif head is not None and _PER.match(head.measure or "") and measure.lower() in _COUNT_COLUMNS:
        return None  # the rate cannot be formed from this result: its counts would draw something else
    text = f"{insight.name} {insight.description}".lower()
    for c in [c for c in cats if c != dim and df[c].nunique() <= 12]:
        # an outcome column (status, event) whose value the insight names: plot that outcome only
        named = [v for v in df[c].dropna().unique() if str(v).lower() in text]
        if len(named) == 1:
            df = df[df[c] == named[0]]
            cats = [x for x in cats if x != c]
            break
    title = measure.replace("_", " ")
    # Vega-Lite reads "." and "[" in a field as a path and a quote as the end of a string: a column "seg.kind" drew
    # no bar, "Ca't" no chart (session 23's red team); the frame's columns are drawn under plain names
    safe = _plain_names(list(df.columns))
    df = df.rename(columns=safe)
    measure, dim = safe[measure], safe.get(dim, dim)
    cats, times = [safe[c] for c in cats], [safe[x] for x in times]
    as_rate = ratio is not None or (head is not None and head.metric.value in ("rate", "share"))

    def axis(frame) -> tuple[alt.Axis, str]:
        """A rate's axis in percent, as the text writes it (a new user read 0-0.6 beside "55.6%")."""
        v = frame[measure].dropna()
        pct = as_rate and len(v) > 0 and bool(v.between(0, 1).all())
        return (alt.Axis(format="%") if pct else alt.Axis()), (".1%" if pct else ",.4~g")

    if times:
        t = times[0]
        df[t] = pd.to_datetime(df[t], errors="coerce", utc=True).dt.tz_localize(None)
        series = [c for c in cats if df[c].nunique() <= 10]
        df = (df.groupby([t, series[0]], as_index=False) if series else df.groupby(t, as_index=False))[measure].sum()
        ax, fmt = axis(df)
        enc = dict(x=alt.X(f"{t}:T", title=t.replace("_", " ")), y=alt.Y(f"{measure}:Q", title=title, axis=ax),
                   tooltip=[f"{t}:T", alt.Tooltip(f"{measure}:Q", format=fmt)] + [f"{c}:N" for c in series[:1]])
        if series:
            s = series[0]
            if value is not None and s == dim:
                enc["strokeWidth"] = alt.condition(f"datum['{s}'] == {json.dumps(value)}", alt.value(3.5),
                                                   alt.value(1.2))
            enc["color"] = alt.Color(f"{s}:N", title=s.replace("_", " "))
        chart = alt.Chart(df).mark_line(point=True).encode(**enc)
        when = _change_date(insight)
        if when is not None:  # the change marked where it begins
            rule = pd.DataFrame({t: [pd.Timestamp(when)]})
            chart = alt.layer(chart, alt.Chart(rule).mark_rule(strokeDash=[4, 4], color="#d6604d").encode(
                x=alt.X(f"{t}:T")))
        height = 220
    elif cats or dim in df.columns:
        c = dim if dim in df.columns else cats[0]
        df = df.dropna(subset=[measure, c]).groupby(c, as_index=False)[measure].sum()
        ordinal = pd.api.types.is_numeric_dtype(df[c])  # level, tier: keep their order, every value
        df[c] = df[c].astype(str)
        colour = (alt.condition(f"datum['{c}'] == {json.dumps(value)}", alt.value("#d6604d"), alt.value("#7a8fa6"))
                  if value is not None and c == dim else alt.value("#7a8fa6"))
        ax, fmt = axis(df)
        tooltip = [f"{c}:N", alt.Tooltip(f"{measure}:Q", format=fmt)]
        if ordinal:
            order = sorted(df[c], key=float)
            chart = alt.Chart(df).mark_bar().encode(
                x=alt.X(f"{c}:O", sort=order, title=c.replace("_", " ")), y=alt.Y(f"{measure}:Q", title=title, axis=ax),
                color=colour, tooltip=tooltip)
            height = 220
        else:
            top = df.sort_values(measure, ascending=False)
            keep = top.head(MAX_BARS)
            if value is not None and c == dim and value not in set(keep[c]):
                keep = pd.concat([keep.head(MAX_BARS - 1), top[top[c] == value]])  # the segment is always shown
            df = keep
            chart = alt.Chart(df).mark_bar().encode(
                y=alt.Y(f"{c}:N", sort="-x", title=c.replace("_", " ")), x=alt.X(f"{measure}:Q", title=title, axis=ax),
                color=colour, tooltip=tooltip)
            height = max(80, len(df) * 18)
    else:
        return None
    spec = chart.properties(width="container", height=height).to_dict()
    spec.pop("$schema", None)
    return _clean(spec)


def _clean(x):
    """Strict JSON for the page: NaN and infinities become null."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


# ---------------------------------------------------------------------------- page


@lru_cache(maxsize=1)
def _vega_bundle() -> str:
    import vl_convert as vlc
    from altair.utils._importers import vl_version_for_vl_convert

    return vlc.javascript_bundle(vl_version=vl_version_for_vl_convert())


_TEMPLATE = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined).from_string("""\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Discovery {{ r.run_id[:8] }} · {{ r.project_id }}</title>
<style>
 :root { --fg:#1d2733; --muted:#6b7785; --line:#e3e7ec; --bg:#f7f8fa; --ok:#1a7f37; --warn:#b35900; --bad:#c62828; }
 body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); margin: 0; background: var(--bg); }
 main { max-width: 980px; margin: 0 auto; padding: 24px 20px 60px; }
 h1 { font-size: 1.5em; margin: 0 0 4px; } h2 { margin-top: 36px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
 .meta { color: var(--muted); } .meta b { color: var(--fg); }
 .tiles { display: flex; gap: 10px; flex-wrap: wrap; margin: 16px 0; }
 .tile { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 90px; }
 .tile .n { font-size: 1.4em; font-weight: 600; } .tile .l { color: var(--muted); font-size: .85em; }
 .card { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; margin: 14px 0; }
 .card:target, .rec:target { outline: 3px solid #8ab4f8; }
 .card h3 { margin: 6px 0; font-size: 1.05em; } .desc { margin: 4px 0 8px; }
 .badge { display: inline-block; border-radius: 10px; padding: 1px 9px; font-size: .8em; font-weight: 600; margin-right: 4px; }
 .sev-critical { background: #c62828; color: #fff; } .sev-high { background: #ef6c00; color: #fff; }
 .sev-medium { background: #f9c74f; color: #3b2f00; } .sev-low { background: #e3e7ec; color: #3d4752; }
 .v-ok { background: #e6f4ea; color: var(--ok); } .v-warn { background: #fff3e0; color: var(--warn); }
 .v-bad { background: #fdecea; color: var(--bad); } .v-muted { background: #eef1f4; color: var(--muted); }
 .facts { color: var(--muted); font-size: .9em; } .facts a { color: inherit; }
 .chart { width: 100%; margin: 8px 0; } .nochart { color: var(--muted); font-size: .85em; font-style: italic; }
 details { margin-top: 6px; } summary { cursor: pointer; color: var(--muted); font-size: .9em; }
 pre { background: #0f1720; color: #e6edf3; padding: 10px 12px; border-radius: 6px; overflow-x: auto; font-size: .82em; }
 .rec { background: #fff; border-left: 4px solid #3b6fd8; border-radius: 6px; padding: 10px 14px; margin: 12px 0; }
 .errors { background: #fdecea; border: 1px solid #f5c2c0; border-radius: 8px; padding: 8px 14px; }
 nav a { margin-right: 12px; }
</style>
<script type="text/javascript">
{{ bundle|safe }}
</script>
</head>
<body><main>
<h1>Discovery {{ r.run_id[:8] }} · {{ r.project_id }}</h1>
<div class="meta"><b>{{ r.run_type.value }}</b> run · analyst <b>{{ r.analyst }}</b> · pack {{ r.domain }}
 · {{ r.total_steps }} exploration steps · {{ "%.0f"|format(r.duration_s) }} s · {{ r.created_at.strftime("%Y-%m-%d %H:%M UTC") }}</div>
<div class="tiles">
 <div class="tile"><div class="n">{{ r.insights|length }}</div><div class="l">insights</div></div>
 {% for sev in ["critical", "high", "medium", "low"] %}{% if severities[sev] %}
 <div class="tile"><div class="n">{{ severities[sev] }}</div><div class="l">{{ sev }}</div></div>{% endif %}{% endfor %}
 <div class="tile"><div class="n">{{ confirmed }}/{{ verifiable }}</div><div class="l">counts confirmed</div></div>
 <div class="tile"><div class="n">{{ r.recommendations|length }}</div><div class="l">recommendations</div></div>
</div>
{% if checked %}<p class="meta">{{ checked }}</p>{% endif %}
{% if r.errors %}<div class="errors"><b>Errors</b><ul>{% for e in r.errors %}<li>{{ e }}</li>{% endfor %}</ul></div>{% endif %}
<nav>{% for area, items in areas %}<a href="#area-{{ area }}">{{ area }} ({{ items|length }})</a>{% endfor %}
 <a href="#recommendations">recommendations</a></nav>

<h2>Insights</h2>
{% if not areas %}<p class="meta">No insights.</p>{% endif %}
{% for area, items in areas %}
<h3 id="area-{{ area }}" style="margin-top:26px">{{ area }}</h3>
{% for c in items %}{% set i = c.insight %}
<div class="card" id="ins-{{ i.id }}">
 <span class="badge sev-{{ i.severity.value }}">{{ i.severity.value }}</span>
 <span class="badge v-{{ c.badge[1] }}">{{ c.badge[0] }}</span>
 {% if i.duplicate_of %}<span class="badge v-muted">repeats {{ i.duplicate_of }}</span>{% endif %}
 <h3>{{ i.name }}</h3>
 <div class="desc">{{ i.description }}</div>
 <div class="facts">{{ i.id }}{% if i.affected_count is not none %} · {{ "{:,}".format(i.affected_count) }} affected{% endif %}
  {% if c.check %} · {{ c.check }}{% endif %}
  {% if i.source_steps %} · steps {{ i.source_steps|join(", ") }}{% endif %}
  {% if c.recs %} · addressed by {% for rid in c.recs %}<a href="#rec-{{ rid }}">{{ rid }}</a>{% if not loop.last %}, {% endif %}{% endfor %}{% endif %}</div>
 {% for note in c.notes %}<div class="facts">{{ note }}</div>{% endfor %}
 {% if c.claims %}<ul class="claims">{% for line in c.claims %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
 {% if c.spec %}<div class="chart" id="chart-{{ c.n }}"></div>{% else %}<div class="nochart">No chart: no cited result shows this finding.</div>{% endif %}
 {% for sql in c.sql %}<details><summary>{{ sql[0] }}</summary><pre>{{ sql[1] }}</pre></details>{% endfor %}
</div>
{% endfor %}{% endfor %}
{% if r.context_notes %}
<h2 id="context">Context notes</h2>
<p class="meta">Results the analysis reported that are context, not findings: a comparison that shows no difference, or a fact of the data's shape.</p>
<ul>{% for i in r.context_notes %}<li><b>{{ i.name }}</b> ({{ i.area }}): {{ i.description }} <span class="meta">· {{ i.context_reason }}</span></li>{% endfor %}</ul>
{% endif %}
{% if r.uncovered_leads %}
<h2 id="leads">Leads no insight covers</h2>
<p class="meta">Candidates the statistical scan flagged before exploration that no insight or context note takes up: unverified, listed so that none is lost.</p>
<ul>{% for lead in r.uncovered_leads %}<li>{{ lead }}</li>{% endfor %}</ul>
{% endif %}

<h2 id="recommendations">Recommendations</h2>
{% if r.recommendation_note %}<p class="meta">{{ r.recommendation_note }}</p>
{% elif not r.recommendations %}<p class="meta">No recommendations.</p>{% endif %}
{% for rec in recs %}
<div class="rec" id="rec-{{ rec.id }}">
 <b>{{ rec.id }}</b> · priority {{ rec.priority }}{% if rec.effort %} · effort {{ rec.effort }}{% endif %}
 <h3 style="margin:4px 0">{{ rec.title }}</h3>
 {% if rec.description %}<div>{{ rec.description }}</div>{% endif %}
 {% if rec.actions %}<ul>{% for a in rec.actions %}<li>{{ a }}</li>{% endfor %}</ul>{% endif %}
 <div class="facts">{% if rec.target_segment %}target: {{ rec.target_segment }}{% if rec.segment_size %} ({{ "{:,}".format(rec.segment_size) }}){% endif %} · {% endif %}
 {% if rec.expected_impact.metric %}impact: {{ rec.expected_impact.metric }} {{ rec.expected_impact.estimated_improvement }} · {% endif %}
 addresses {% for iid in rec.related_insight_ids %}<a href="#ins-{{ iid }}">{{ iid }}</a>{% if not loop.last %}, {% endif %}{% endfor %}</div>
</div>
{% endfor %}
</main>
<script type="text/javascript">
const specs = {{ specs_json|safe }};
for (const [id, spec] of Object.entries(specs)) {
  vegaEmbed("#" + id, spec, {actions: false, renderer: "svg"}).catch(console.error);
}
</script>
</body></html>
""")


def _script_json(obj) -> str:
    """JSON safe inside a <script> element: no ``<``, ``>`` or ``&`` as such (``<!--<script>`` in a value put the
    script element in its double-escaped state, so its own ``</script>`` no longer closed it: red team 13)."""
    return (json.dumps(obj, allow_nan=False).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def render_html(r: DiscoveryResult, steps: dict[int, ExplorationStep]) -> str:
    """The report of ``r``; charts from the stored digests of ``steps`` only."""
    recs_for, by_area = links(r)
    cards_by_area = []
    specs: dict[str, dict] = {}
    n = 0
    for area in by_area:  # most severe first (markdown.links)
        cards = []
        for i in by_area[area]:
            n += 1
            spec = None
            for no in i.source_steps:
                if no in steps:
                    try:
                        spec = chart_spec(i, step_frame(steps[no]))
                    except Exception:  # a result the chart builder cannot read: the card says so
                        spec = None
                    if spec:
                        break
            if spec:
                specs[f"chart-{n}"] = spec
            v = i.validation
            sql = [(f"SQL of step {no}: {steps[no].purpose or ''}".strip(), steps[no].query)
                   for no in i.source_steps if no in steps and steps[no].query]
            if v is not None and v.query:
                sql.append(("Verification SQL", v.query))
            sql += [(f"Re-derivation SQL: {claim_subject(cl)}", cl.query) for cl in i.claims
                    if cl.query and (v is None or cl.query != v.query)]
            check = ""
            if v is not None and v.refutation and v.status in (ValidationStatus.confirmed,
                                                                ValidationStatus.adjusted):
                check = v.refutation + (" · " if v.verified_count is not None else "")
            if v is not None and v.verified_count is not None:
                check += f"warehouse count {v.verified_count:,}"
                if v.claimed_count is not None and v.claimed_count != v.verified_count:
                    check += f" (claimed {v.claimed_count:,})"
            cards.append({"insight": i, "n": n, "spec": spec, "sql": sql, "recs": recs_for.get(i.id, []),
                          "badge": BADGES[v.status] if v else ("unverified", "muted"), "check": check,
                          "notes": insight_notes(i), "claims": [claim_line(cl) for cl in i.claims]})
        cards_by_area.append((area, cards))
    severities = Counter(i.severity.value for i in r.insights)
    verifiable = [i for i in r.insights if i.validation and i.validation.status != ValidationStatus.not_verifiable]
    return _TEMPLATE.render(
        r=r, areas=cards_by_area, severities=severities, verifiable=len(verifiable),
        checked=checked_summary(r.insights),
        confirmed=sum(1 for i in verifiable if i.validation.status == ValidationStatus.confirmed),
        recs=sorted(r.recommendations, key=lambda x: (x.priority, x.id)),
        specs_json=_script_json(specs), bundle=_vega_bundle().replace("</script", "<\\/script"),
    )
