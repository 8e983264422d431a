"""Prompt text owned by code: packs and project overrides cannot remove it."""

from .. import limits

NO_GOAL = "No goal given: find and report what matters most in this data."


def goal_text(goal: str | None) -> str:
    """The run's goal as every prompt states it; never a pack's description standing in for one."""
    return (goal or "").strip() or NO_GOAL


def goal_section(goal: str | None) -> str:
    return f"## Goal of this discovery\n{goal_text(goal)}"


def explorer_summary_section(summary: str | None) -> str:
    """The explorer's closing ``done`` summary, labelled as its own reading: to check, not to trust."""
    summary = (summary or "").strip()
    if not summary:
        return ""
    return ("## The explorer's own summary (to check, not to trust)\n"
            "When it ended exploration, the explorer wrote this summary of what it learned, tying numbers "
            "across steps. It is the explorer's reading, not evidence: use it to see how the results connect, "
            "take every number from the results above, and leave out any claim of it the results do not show.\n"
            f"<explorer_summary>\n{summary}\n</explorer_summary>")

CLAIM_DISCIPLINE = """\
## Claim discipline (always applies)
- Every number you state comes from a result above; cite the step(s) it came from in source_steps.
- Scope superlatives to the queried window ("highest in the queried period"), never "ever" or "all-time".
- Make no claim about periods, segments or tables that were not queried.
- If a result contradicts a finding, say so and explain why the finding still holds, or drop the finding.
- affected_count is the number of entities (players, users, customers, orders, ...) that show the finding's outcome
  within its segment, as the results show it: for a rate (churn, failure, drop-off, cancellation) the segment's
  entities that have the outcome (of 4,000 accounts on a plan that cancel at 25%, the 1,000 that cancelled, not the
  4,000); for a concentration the entities of the top group; for a data problem the rows that have it; for a change
  or a gap in a measure that no single entity has or lacks (revenue fell, visits are shorter) the entities the
  measure covers in the segment and period. The segment's size is a separate count claim. Leave affected_count
  null when the results do not give one."""

_INSIGHTS_CONTRACT = """\
## Numbers as claims
- affected_entity says what affected_count counts, in the schema's terms: customers, orders, order items, events,
  players, sessions, purchases, ... ("customers" for count(DISTINCT customer_id), "order items" for rows of
  order_items). A count of events is not a count of customers. State affected_count also as a claim of its own
  (metric count, its entity, and the segment and period it counts, the outcome's condition included in segment and
  segment_sql), so it is checked against what it counts.
- claims: every key number of the insight (its description's), one claim per comparison, each with metric (count |
  rate | share | average | sum | change | fit), measure (what is measured), entity (what is counted or averaged
  over), segment and baseline in words and as SQL conditions (segment_sql, baseline_sql), period in words and as
  period_sql, value (on the segment), baseline_value (on the baseline; for a change, the earlier period) and
  source_steps (the steps the values came from). Rates and shares are fractions between 0 and 1 (0.14 for 14%).
  Every value must be in a cited step's result, or arithmetic on them.
  Each claim is re-derived from the warehouse independently; a number no step shows is flagged. An insight's verdict
  is its worst claim's: a claim the warehouse rejects makes the whole insight rejected, so state as claims only numbers whose
  definition you can write exactly.
  A rate's segment_sql (and baseline_sql) says who is counted in its denominator; the outcome it measures goes in
  the measure, never in segment_sql: for the day-1 return rate of tiktok_ads players, segment_sql is
  "acquisition_channel = 'tiktok_ads'" (not "... AND <returned on day 1>", which re-derives as a rate of 1.0 and is
  rejected). Only an affected count's claim (below) carries the outcome in its segment_sql.
  Example (an illustration of the form, not a table of this warehouse): {"metric": "rate", "measure":
  "trial-to-paid conversion", "entity": "accounts", "segment": "team plan", "segment_sql": "plan = 'team'",
  "baseline": "other plans", "baseline_sql": "plan <> 'team'", "period": "since 2025-03-01",
  "period_sql": "created_at >= TIMESTAMP '2025-03-01'", "value": 0.09, "baseline_value": 0.21, "source_steps": [7]}
  Its affected count, a funnel step's rate (the entities that reached the step and did not take the next one): {"metric":
  "count", "measure": "accounts that started a trial and did not convert", "entity": "accounts", "segment": "team
  plan accounts with a trial and no conversion", "segment_sql": "plan = 'team' AND trial_start_date IS NOT NULL AND
  converted_at IS NULL", "period": "since 2025-03-01", "period_sql": "created_at >= TIMESTAMP '2025-03-01'",
  "value": 1840, "source_steps": [7]}, with "affected_count": 1840 and "affected_entity": "accounts" on the insight.
  A claim with no comparison (a plain count or total) leaves baseline, baseline_sql and baseline_value empty or null.
  A change compares two periods: segment_sql the segment, period_sql the later period, baseline_sql the segment's
  condition and the earlier period's condition on the same column, value the later period's, baseline_value the
  earlier one's.
  A condition col <> 'x' leaves out the rows where col is NULL: when "everything else" includes them, write
  col IS DISTINCT FROM 'x' (or say in the baseline's words that NULL rows are left out).
  A share within each period ("agent A's share of incidents each quarter") is a share whose whole is that period's
  rows: for one period, metric share, segment_sql the part (assigned_to = 'A'), period_sql the period; for a rise or
  fall between periods, metric change with the share in its measure, segment_sql the part, period_sql the later
  period, baseline_sql the part and the earlier period on the same column, value and baseline_value the part's
  share of each period's rows. Example: {"metric": "change", "measure": "share of incidents assigned to agent A",
  "entity": "incidents", "segment": "agent A, 2024 Q4", "segment_sql": "assigned_to = 'A'", "baseline": "agent A,
  2024 Q1", "baseline_sql": "assigned_to = 'A' AND opened_at >= DATE '2024-01-01' AND opened_at < DATE
  '2024-04-01'", "period": "2024 Q4", "period_sql": "opened_at >= DATE '2024-10-01' AND opened_at < DATE
  '2025-01-01'", "value": 0.31, "baseline_value": 0.12, "source_steps": [4]}
  A share states its whole: whole in words and whole_sql as its condition ("78 of 128 open incidents are agent
  A's": segment_sql "assigned_to = 'A'", whole "open incidents", whole_sql "state = 'open'", value 0.61); leave
  them empty when the whole is every row of the period. A share has one whole for the segment and the baseline
  alike: to compare how often something happens in two groups, state a rate of each group instead.
  A fitted relation (a linear trend, a correlation, how closely one column follows another) is metric fit, with
  statistic (slope | r | r2), y and y_sql (what is fitted, as a SQL expression), x and x_sql (on what; a trend over
  time on a day number such as date_diff('day', DATE '2024-01-01', opened_at)), value the statistic on the segment
  (baseline_value on the baseline when two fits are compared). Example: {"metric": "fit", "statistic": "r2",
  "measure": "close time following open time", "entity": "incidents", "y": "closed at, in days", "y_sql":
  "date_diff('day', DATE '2024-01-01', closed_at)", "x": "opened at, in days", "x_sql": "date_diff('day', DATE
  '2024-01-01', opened_at)", "segment": "all incidents", "segment_sql": "TRUE", "value": 0.99999,
  "source_steps": [5]}
  A total of a column or expression (revenue, units sold, minutes played) is metric sum, never a count: measure says
  what is summed in words and sum_sql as the SQL expression that is summed per row; value is the total over the
  segment's rows within the period (baseline_value over the baseline's). Example: {"metric": "sum", "measure":
  "revenue", "entity": "order items", "sum_sql": "oi.quantity * oi.unit_price", "segment": "paid_social customers",
  "segment_sql": "c.acquisition_channel = 'paid_social'", "period": "2025", "period_sql": "o.ordered_at >= DATE
  '2025-01-01' AND o.ordered_at < DATE '2026-01-01'", "value": 1204500, "source_steps": [6]}
  A total that rose or fell between two periods is metric change with the same sum_sql; value and baseline_value
  are the totals of the later and the earlier period.
  A baseline comes from this warehouse (another segment, an earlier period, the whole), with its baseline_sql: a
  number from outside it (an industry benchmark, a target, a typical figure) cannot be checked and is no baseline;
  mention it in the description if it matters, never as a claim's baseline_value.
- Report an insight only when a result above shows it. When no result above is evidence for this area, return an
  empty list: an area with nothing to say says nothing.
- An insight is a finding someone could act on: a segment that differs from its baseline, a change over time, a
  concentration, or a data problem. A result that shows no difference (that something does not help, does not
  change or does not differ), the size or mix of the data, or growth
  that only follows the base growing is context for a finding, not an insight of its own; so is a gap too small to
  act on (a few percent relative to its baseline) or a segment too small to matter. When the goal or this area's own
  question asks something that a non-difference answers (is it uniform across groups, did it change, does a feature
  help), report that answer with its comparison as a claim, as an entry of "insights" like any other: the report
  files an entry whose every comparison shows no effect among its context notes, not among the insights. Report at most {max_insights}
  insights for this area, the most material first (the largest effect on the most entities), and fewer when fewer
  are material; one insight per finding (the same effect seen in several results is one insight citing them all;
  two outcomes of one segment against one baseline are one finding about that segment).
- Before reporting a change or a cohort gap, make the checks a careful analyst makes, on the results above: can
  every entity of the cohort or period already show the outcome (day-7 retention of cohorts that are not yet 7 days
  old at the data's end is right-censored)? Is a first or last period incomplete (fewer days or a partial load)
  and driving a period-over-period change? Does a change that grows toward the data's first or last dates show
  too in the same behaviour measured from another table (sessions against level plays, events against orders)?
  A last period that the data covers only in part (its final days missing, a value far below the others) is
  flagged as partial and left out of the comparison, or the comparison is made on the days both periods cover.
  Is it a fact of how the data is modelled (every row of a table holds one value), stated with no comparison?
  Such an observation is not a finding: leave it out, or say in the description which check it passed. A caveat
  (a limit of the data that qualifies other findings) is not an insight either: say it in their descriptions.

## Answer format
Answer with exactly one JSON object and nothing else:
{"insights": [{"name": "the message, as one short plain sentence (at most 12 words, one message: a second fact goes
  in the description) that answers the question in its own words: the measure as the goal names it (else in plain words as the tables name it: \"revenue per
  customer\", not \"rev_per_cust\"), who or what (the entities and segment values as the tables name them), and the
  direction or the comparison in the plain words of a comparison (\"... is increasing over time\", \"... is higher
  for X than for other Y\", \"... is the same across Y\"); no figures (every number goes in the description and
  the claims, which the report shows beneath the headline)", "description": "what, who, how much, since when",
  "severity": "critical|high|medium|low", "affected_count": 1234, "affected_entity": "customers",
  "risk_score": 0.0-1.0, "confidence": 0.0-1.0, "indicators": ["metric = value", "..."], "source_steps": [3, 7],
  "segment": "the affected segment", "claims": [{"metric": "rate", "measure": "...", "entity": "...",
  "segment": "...", "segment_sql": "...", "baseline": "...", "baseline_sql": "...", "period": "...",
  "period_sql": "...", "value": 0.14, "baseline_value": 0.52, "source_steps": [7]}, {"metric": "count", "measure":
  "the affected count: the entities that show the finding", "entity": "customers", "segment": "...",
  "segment_sql": "... AND <the outcome's condition>", "period": "...", "period_sql": "...", "value": 1234,
  "source_steps": [7]}]}]}
Without its own count claim, the verifier checks affected_count against a population it guesses from the other
claims; leave affected_count null when the finding counts no one (a non-difference, a fact of the whole data).
Return {"insights": []} when the results show nothing worth reporting for this area."""
INSIGHTS_CONTRACT = _INSIGHTS_CONTRACT.replace("{max_insights}", str(limits.MAX_INSIGHTS_PER_AREA))

_OPEN_CAP = ("Report at most " + str(limits.MAX_INSIGHTS_PER_AREA) + " insights for this area, the most material first "
             "(the largest effect on the most entities), and fewer when fewer are material;")
_GOAL_CAP = ("The goal asks a question: report every distinct finding the results above support that bears on it and "
             "is material, not only the top few, ranked most material first (the largest effect on the most "
             "entities), at most " + str(limits.MAX_INSIGHTS_PER_GOAL_AREA) + " insights; each a finding of its own "
             "(never a restatement of another one's number, segment or baseline), and fewer when fewer are "
             "material;")


def insights_contract(goal: str | None = None) -> str:
    """The analysis contract. With a goal (a question to answer) it asks for every distinct, supported, material
    finding, ranked (InsightBench's truths are 4-5 per task; the open discovery's top 3 per area left answers out);
    without one, for the most material few."""
    if not (goal or "").strip():
        return INSIGHTS_CONTRACT
    return _replace_words(INSIGHTS_CONTRACT, _OPEN_CAP, _GOAL_CAP)


def _replace_words(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new``, matching ``old`` across the contract's line breaks."""
    import re

    pattern = r"\s+".join(re.escape(w) for w in old.split())
    out, n = re.subn(pattern, lambda _: new, text, count=1)
    if n != 1:
        raise ValueError(f"not in the contract: {old[:60]}")
    return out

RECOMMENDATIONS_CONTRACT = """\
## Answer format
Answer with exactly one JSON object and nothing else:
{"recommendations": [{"title": "...", "description": "...", "priority": 1, "effort": "low|medium|high",
  "target_segment": "...", "segment_size": 1234,
  "expected_impact": {"metric": "...", "estimated_improvement": "+5-8%", "reasoning": "..."},
  "actions": ["...", "..."], "success_metrics": ["..."], "related_insight_ids": ["churn-1"], "confidence": 0.0-1.0}]}
priority is 1 to 5 (1 = do first), not a rank: several recommendations may share one."""

RECOMMENDATION_DISCIPLINE = """\
## Claim discipline (always applies)
- Every number you state comes from the validated insights above; name the insights a recommendation addresses
  in related_insight_ids.
- Scope superlatives to the queried window ("highest in the queried period"), never "ever" or "all-time".
- Make no claim about periods, segments or tables that the insights do not cover."""
