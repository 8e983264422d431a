"""Grounded insight verification: every claimed number re-checked in the warehouse.

The verifier prompt carries, first, the SQL of the steps the insight cites
(they ran, so their columns are authoritative), then the catalog. The model
may call ``lookup_schema`` for up to ``MAX_LOOKUPS_PER_VERIFICATION`` rounds;
then one forced round must produce a query. The query runs through the
guarded, self-healing executor, whose fixer gets the same evidence.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property

from .. import limits
from ..errors import LLMError
from ..explore.actions import ActionParseError, parse_action
from ..explore.executor import Executor, ExecOutcome
from ..explore.numbering import label
from ..llm.base import LLM, LLMRequest, Message, SystemBlock
from ..models import (
    Claim,
    ExplorationStep,
    Insight,
    MetricKind,
    SQLAttempt,
    TokenUsage,
    Validation,
    ValidationStatus,
)
from ..schema.provider import SchemaProvider
from .compare import AFFECTED, judge, worst
from .conditions import metric_kind, missing_conditions, partial_conditions, where_of
from .fit import off_fit
from .entity import entity_of_sql, normalize_entity, same_entity, warehouse_entities
from .grounding import ground_claim, ground_insight
from .sums import off_share, off_sum, sum_expression

VERIFY_ACTIONS = ("lookup_schema", "query")


def verdict(claimed: int, verified: int) -> ValidationStatus:
    """Within 20% -> confirmed; zero -> rejected; any other count -> adjusted."""
    if verified == 0:
        return ValidationStatus.rejected
    # integer arithmetic: exactly 20% off is confirmed, with no float rounding at the boundary
    if abs(verified - claimed) * 100 <= claimed * int(limits.CONFIRM_TOLERANCE * 100):
        return ValidationStatus.confirmed
    return ValidationStatus.adjusted


def single_count(out: ExecOutcome) -> int | None:
    """The one number a verification query must return, or None."""
    t = out.result.table
    if t.num_rows != 1:
        return None
    row = t.to_pylist()[0]
    nums = [v for v in row.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) < 1:
        return None
    v = nums[0]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return int(round(v))


def claim_values(out: ExecOutcome) -> tuple[float | None, float | None] | None:
    """(segment_value, baseline_value) of a claim's verification query: the columns of those names,
    else the first and second number of its single row; None when it returned no single row."""
    t = out.result.table
    if t.num_rows != 1:
        return None
    row = {k.lower(): v for k, v in t.to_pylist()[0].items()}

    def num(v):
        if isinstance(v, bool) or v is None:
            return None
        try:
            f = float(v)
        except (TypeError, ValueError):
            return None
        return f if math.isfinite(f) else None

    if "segment_value" in row:
        return num(row["segment_value"]), num(row.get("baseline_value"))
    nums = [num(v) for v in row.values()]
    nums = [v for v in nums if v is not None]
    if not nums:
        return None
    return nums[0], (nums[1] if len(nums) > 1 else None)


def claim_definition(claim: Claim, dialect: str | None = None) -> dict:
    """What the verifier is shown of a claim: its definition, never its values. A fit carries its statistic as this
    warehouse's SQL expression (``fit.fit_expression``: BigQuery has no regr_*), y first; a sum its aggregate
    (``sums.sum_expression``)."""
    d = {"metric": claim.metric.value, "measure": claim.measure, "entity": claim.entity,
         "segment": claim.segment, "segment_sql": claim.segment_sql, "baseline": claim.baseline,
         "baseline_sql": claim.baseline_sql, "period": claim.period, "period_sql": claim.period_sql,
         "whole": claim.whole, "whole_sql": claim.whole_sql}
    if claim.metric == MetricKind.fit:
        d.update(statistic=claim.statistic or "r", y=claim.y, y_sql=claim.y_sql, x=claim.x, x_sql=claim.x_sql)
        if claim.y_sql and claim.x_sql:
            from .fit import fit_expression, statistic_of

            d["statistic_sql"] = fit_expression(statistic_of(claim), claim.y_sql, claim.x_sql, dialect)
    if sums_a_column(claim):
        d.update(sum_sql=claim.sum_sql, value_sql=sum_expression(claim.sum_sql, dialect))
    elif shares_a_total(claim):  # the expression the part and the whole sum; no value_sql: the share is no SUM
        d.update(sum_sql=claim.sum_sql)
    return {k: v for k, v in d.items() if v}


def sums_a_column(claim: Claim) -> bool:
    """A sum that says what it sums, or a change of such a total between two periods (round 14: "revenue fell from
    one quarter to the next" as metric change with sum_sql, whose sum_sql never reached the verifier). Not a change
    of a share of a total (``shares_a_total``): that is a fraction in each period."""
    if not (claim.sum_sql or "").strip() or shares_a_total(claim):
        return False
    return claim.metric in (MetricKind.sum, MetricKind.change)


def shares_a_total(claim: Claim) -> bool:
    """A share of a total (revenue, not rows) that says what it sums: a share, or a change of one (round 19,
    ecommerce: "android's share of completed revenue fell from 0.318 to 0.120" with sum_sql was checked as a change
    of android's revenue, 76,155 against 130,707, and marked adjusted)."""
    return bool((claim.sum_sql or "").strip()) and metric_kind(claim.metric.value, claim.measure) == "share"


def outside_baseline(claim: Claim) -> bool:
    """The claim compares with a number it states no warehouse condition for (an outside benchmark)."""
    return claim.baseline_value is not None and not (claim.baseline_sql or "").strip() \
        and claim.metric != MetricKind.change


def _is_segment(words: str | None, insight_segment: str | None) -> bool:
    """A claim's segment in words is the insight's (case and spacing aside)."""
    a, b = " ".join((words or "").lower().split()), " ".join((insight_segment or "").lower().split())
    return bool(a) and a == b


def render_evidence(insight: Insight, steps: dict[int, ExplorationStep], numbers: list[int] | None = None) -> str:
    parts = []
    for n in (numbers if numbers is not None else insight.source_steps):
        s = steps.get(n)
        if s is None or not s.ok:
            continue
        cols = ", ".join(c.name for c in s.digest.columns) if s.digest else ""
        shown = label(s)  # as the model saw it (explore/numbering.py)
        parts.append(f"-- step {shown if shown is not None else n}: {s.purpose}\n-- returned columns: {cols}\n"
                     f"{s.query}")
    return "\n\n".join(parts)


VERIFY_PROMPT = """\
You verify one claim made by an analyst against the data warehouse.
Write ONE SQL query that returns a single row with a single number: the count of the entities the claim is about
(SELECT COUNT(...) AS count ...). Adapt one of the source queries below: their columns exist.

## Warehouse catalog
{catalog}

## Source queries (authoritative column evidence)
{evidence}

Answer with exactly one JSON object:
- {{"query": "SELECT COUNT(...) AS count FROM ...", "purpose": "what the count is"}}
- {{"lookup_schema": ["schema.table"]}} to see columns of a table the sources do not cover (up to {max_lookups} times)."""


CLAIM_PROMPT = """\
You re-derive one metric from the data warehouse, independently of the analyst who stated it.
Write ONE SQL query that returns a single row with the columns:
- segment_value: the metric computed on the segment (its condition is given in words and as SQL),
- baseline_value: the same metric computed on the baseline (leave this column out when there is no baseline).
Apply the stated segment_sql, baseline_sql and period_sql conditions as they are written (table qualifiers may be
added; a column you rename in a CTE or subquery counts as what it names). The check is literal: an equivalent form (a
join instead of IN (SELECT ...), row_number() instead of LIMIT) is refused: copy each condition's text.
The period bounds the whole computation (numerator and denominator, segment and baseline).
For a rate, an average, a sum or a count, the segment's condition bounds all of segment_value (a rate's numerator and
denominator) and the baseline's all of baseline_value. For a share, the condition selects the part only: its
whole is the stated whole (whole_sql) within the period, else all of the period's rows (segment_value = the
segment's part of that whole, baseline_value = the baseline's part of it); whole_sql bounds numerator and
denominator alike. Rates and shares are fractions between 0 and 1. An average is over the stated entity.
An affected count whose segment says "only those that show the finding" counts the segment's entities that have
the finding's outcome (for a low or falling rate of a good outcome, those without it): add that condition.
For a change, segment_value is the metric in the later period and baseline_value in the earlier one; when the
baseline is another period (its condition is on the period's own column), the stated period bounds segment_value
only and the baseline's condition bounds baseline_value.
Count the stated entity (count(DISTINCT customer_id) for customers, count(*) for order items or events).
For a fit (metric fit), segment_value is the statistic of y_sql on x_sql over the segment's rows (baseline_value over
the baseline's), y first: slope = regr_slope(y, x), r = corr(y, x), r2 = regr_r2(y, x) (where the dialect lacks
regr_*: covar_pop(y, x) / var_pop(x), power(corr(y, x), 2)); use the stated y_sql and x_sql expressions as written.
For a sum (metric sum: a total such as revenue; or a change of such a total that states sum_sql and value_sql),
segment_value is the SUM of the stated sum_sql expression over the segment's rows (value_sql gives it in this
warehouse's SQL; baseline_value over the baseline's rows): a total, never
a count of rows; sum each row once (a join that repeats rows inflates it). For a share that states sum_sql (a share
of revenue, or its change; no value_sql), the part and the whole are both SUMs of that expression, never counts of
rows: segment_value is the segment's SUM over the whole's SUM (baseline_value likewise).
Adapt a source query below (its tables, columns and joins exist), its filters replaced by the stated conditions.

## Warehouse catalog
{catalog}

## Source queries (authoritative column evidence)
{evidence}

Answer with exactly one JSON object:
- {{"query": "SELECT ... AS segment_value, ... AS baseline_value FROM ...", "purpose": "what the values are"}}
- {{"lookup_schema": ["schema.table"]}} to see columns of a table the sources do not cover (up to {max_lookups} times)."""


SOURCES = "## Source queries (authoritative column evidence)"


def verification_system(template: str, evidence: str, catalog: str) -> list[SystemBlock]:
    """A verification request's system prompt in two blocks: the instructions and the catalog, the same for every
    claim of a run and marked for the provider's prompt cache (a catalog of a few hundred tables is most of the
    prompt), then the claim's own source queries and the answer's form. With the sources inside the cached block,
    no two claims shared a cacheable prefix."""
    text = template.format(evidence=evidence or "(the insight cites no successful step)",
                           catalog=catalog or "(not available)", max_lookups=limits.MAX_LOOKUPS_PER_VERIFICATION)
    stable, _, rest = text.partition("\n\n" + SOURCES + "\n")
    return [SystemBlock(stable, cache=True), SystemBlock(SOURCES + "\n" + rest)]


def grounded_by_warehouse(insight: Insight) -> None:
    """A number no cited step shows, that the warehouse re-derived blind and confirmed, traces to the warehouse: it
    is not ungrounded (round 7: "about 6,600 orders lost", carts times a difference of two rates, arithmetic the
    grounding check does not recompute, confirmed by the verifier). A number the warehouse did not re-derive (a
    baseline from outside it) or did not confirm stays flagged."""
    for c in insight.claims:
        if not c.ungrounded_numbers or c.verdict != ValidationStatus.confirmed:
            continue
        checked = [v for v, w in ((c.value, c.verified_value), (c.baseline_value, c.verified_baseline_value))
                   if v is not None and w is not None]
        left = [x for x in c.ungrounded_numbers if x not in checked]
        if len(left) < len(c.ungrounded_numbers):
            c.ungrounded_numbers = left
            c.grounded = not left
            c.reasoning += "; no cited step shows the number, the warehouse's re-derivation confirmed it"
    insight.ungrounded = any(c.ungrounded_numbers for c in insight.claims)


def corrective(ask: str, sql: str, missing: list[str]) -> str:
    """The corrective round's request: why the query was refused comes first (a model reads the head of a request;
    round 7 and InsightBench's models missed a reason given as its last sentence), then the metric as before, then
    the refused query for reference."""
    return (f"REFUSED: your query does not apply the stated definition exactly: {'; '.join(missing)}. Write it "
            "again so that it applies every stated condition, each bounding the part of the metric it defines "
            "(a condition on a column you rename in a CTE or subquery counts as applied).\n\n"
            f"{ask}\n\nThe refused query:\n```sql\n{sql}\n```")


@dataclass
class Verifier:
    llm: LLM | None
    executor: Executor
    steps: dict[int, ExplorationStep]
    catalog: str = ""
    provider: SchemaProvider | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    calls: int = 0  # LLM calls (query writing and schema lookups)

    def verify(self, insight: Insight) -> Validation:
        """Ground every claim (free), then re-derive each one blind; the insight's verdict is the
        worst of its claims. An answer without claims gets the count check of its affected count."""
        ground_insight(insight, self.steps)
        if insight.affected_entity is None and insight.verification_sql:
            insight.affected_entity = entity_of_sql(insight.verification_sql)  # what the generated count counts
        if not insight.claims and not insight.verification_sql:
            return self._verify_count(insight)  # an answer of the old contract: its count, checked as before
        count = self._count_claim(insight)
        if count is not None:
            insight.claims.append(count)
        if not insight.claims:
            return Validation(status=ValidationStatus.not_verifiable,
                              reasoning="the insight states no number to re-check")
        for c in insight.claims:
            self._verify_claim(insight, c)
        grounded_by_warehouse(insight)
        status = worst([c.verdict for c in insight.claims if c.verdict is not None])
        lead = count or self._stated_count(insight)
        parts = [f"{c.metric.value} {c.measure or ''} ({c.segment or 'all'}): {c.verdict.value} - {c.reasoning}"
                 for c in insight.claims if c.verdict is not None]
        return Validation(
            status=status,
            claimed_count=insight.affected_count,
            verified_count=(int(round(lead.verified_value)) if lead is not None and lead.verified_value is not None
                            else None),
            query=lead.query if lead is not None else insight.claims[0].query,
            reasoning="; ".join(parts),
        )

    @cached_property
    def _entities(self) -> set[str]:
        """The entities the warehouse names (tables and keys), read once per verifier, not per claim."""
        return warehouse_entities(self.executor.guard.tables)

    @staticmethod
    def _stated_count(insight: Insight) -> Claim | None:
        """The count claim whose value is the affected count (so "claimed N, warehouse says M" compares one
        claim's number with its own re-derivation), else the first count claim."""
        counts = [c for c in insight.claims if c.metric == MetricKind.count]
        n = insight.affected_count
        return next((c for c in counts if n is not None and c.value is not None and round(c.value) == n),
                    counts[0] if counts else None)

    def _count_claim(self, insight: Insight) -> Claim | None:
        """The affected count as a claim of its own, unless a count claim already states it."""
        n = insight.affected_count
        if n is None or n <= 0:
            return None
        if any(c.metric == MetricKind.count and c.value is not None and round(c.value) == n for c in insight.claims):
            return None
        if insight.verification_sql:
            # the count's own query defines its population: its conditions, not another claim's
            entity = insight.affected_entity or entity_of_sql(insight.verification_sql)
            claim = Claim(metric=MetricKind.count, measure=AFFECTED, entity=entity, segment=insight.segment or "",
                          segment_sql=where_of(insight.verification_sql, self.executor.warehouse.dialect),
                          value=float(n), source_steps=list(insight.source_steps),
                          verification_sql=insight.verification_sql)
        else:
            # the entities that show the finding's outcome within its segment: the segment (and period) of the
            # claim that measures that outcome on the same entity (a rate of it), else of the claim that
            # counts the same entity, else of the headline claim; the outcome is said in words, the verifier adds
            # its condition (the segment's size is not the affected count)
            entity = insight.affected_entity or (insight.claims[0].entity if insight.claims else None)
            same = [c for c in insight.claims if entity and normalize_entity(c.entity) == normalize_entity(entity)]
            # (a share's segment is its part: there the segment is what the finding counts)
            rates = [c for c in same if c.metric == MetricKind.rate and c.segment_sql]
            outcome = next((c for c in rates if _is_segment(c.segment, insight.segment)), rates[0] if rates else None)
            first = outcome or (same or insight.claims or [Claim()])[0]
            segment = first.segment or insight.segment or ""
            if outcome is not None:
                segment = (f"{segment}: only those that show the finding ({insight.name or 'as the insight says'}), "
                           f"judged by its {outcome.measure or 'rate'}")
            claim = Claim(metric=MetricKind.count, measure=AFFECTED, entity=entity,
                          segment=segment, segment_sql=first.segment_sql,
                          period=first.period, period_sql=first.period_sql, value=float(n),
                          source_steps=list(first.source_steps))
        if not insight.verification_sql:  # the statistical analyst computed its count by SQL, not from a step
            ground_claim(claim, self.steps, insight.source_steps)
        return claim

    def _verify_claim(self, insight: Insight, claim: Claim) -> None:
        cited = claim.source_steps or insight.source_steps
        evidence = render_evidence(insight, self.steps, cited)
        if claim.value is None:
            claim.verdict, claim.reasoning = ValidationStatus.not_verifiable, "the claim states no value"
            return
        if claim.verification_sql:
            sql, why = claim.verification_sql, "query generated with the claim"
        elif self.llm is None:
            claim.verdict, claim.reasoning = ValidationStatus.error, "no verification query and no LLM to write one"
            return
        else:
            stated = {"segment": claim.segment_sql, "baseline": claim.baseline_sql, "period": claim.period_sql,
                      "whole": claim.whole_sql if claim.metric in (MetricKind.share, MetricKind.change) else ""}
            ask = "Metric to compute:\n" + json.dumps(claim_definition(claim, self.executor.warehouse.dialect),
                                                      ensure_ascii=False)
            try:
                sql, why = self._ask(CLAIM_PROMPT, evidence, ask, insight.id)
                missing = self._off_definition(sql, claim, stated)
                if missing:  # one corrective round: a query that leaves a condition out measures something else
                    sql, why = self._ask(CLAIM_PROMPT, evidence, corrective(ask, sql, missing), insight.id)
                    missing = self._off_definition(sql, claim, stated)
            except (LLMError, ActionParseError) as exc:
                claim.verdict, claim.reasoning = ValidationStatus.error, str(exc)
                return
            if missing:
                claim.query = sql
                claim.verdict = ValidationStatus.error
                claim.reasoning = f"the verification query does not apply the claim's {'; '.join(missing)}"
                return
        out = self.executor.run(sql, evidence=evidence or None, fix=self.llm is not None, purpose="verify")
        self.usage = self.usage.add(out.usage)
        claim.query = out.sql
        if out.refused or out.error:
            claim.verdict, claim.reasoning = ValidationStatus.error, f"the query failed: {out.refused or out.error}"
            return
        vals = claim_values(out)
        if vals is None:
            claim.verdict, claim.reasoning = ValidationStatus.error, "the query did not return a single row"
            return
        claim.verified_value, claim.verified_baseline_value = vals
        if outside_baseline(claim) and vals[1] is None:
            # a baseline from outside the warehouse ("an industry benchmark of 12%") cannot be re-derived: it is
            # ungrounded context, flagged and shown; the claim is judged on its segment's value alone
            alone = claim.model_copy(update={"baseline_value": None, "baseline": "", "baseline_sql": ""})
            claim.verdict, why = judge(alone, vals[0], None)
            claim.reasoning = (f"{why}; the baseline ({claim.baseline}: {claim.baseline_value:g}) is not in the "
                               "warehouse: ungrounded context, not re-derived")
            claim.grounded = False
            if claim.baseline_value not in claim.ungrounded_numbers:
                claim.ungrounded_numbers.append(claim.baseline_value)
            insight.ungrounded = True
            return
        claim.verdict, claim.reasoning = judge(claim, *vals)

    def _off_definition(self, sql: str, claim: Claim, stated: dict[str, str]) -> list[str]:
        """What of the claim's definition the query leaves out: a stated condition, or (for a count)
        the stated entity when the query plainly counts another one."""
        dialect = self.executor.warehouse.dialect
        missing = missing_conditions(sql, stated, dialect)
        if not missing:  # every condition is there: each must also restrict what it defines
            # a share's whole bounds numerator and denominator alike, as the period does
            bounds = {k: v for k, v in stated.items() if k != "whole"}
            if (stated.get("whole") or "").strip():
                bounds["period"] = " AND ".join(f"({t})" for t in (stated.get("period"), stated["whole"])
                                                if (t or "").strip())
            missing = partial_conditions(sql, bounds, dialect, metric_kind(claim.metric.value, claim.measure))
        if claim.metric == MetricKind.fit:
            missing += off_fit(sql, claim, dialect)
        if claim.metric == MetricKind.sum or sums_a_column(claim):
            missing += off_sum(sql, claim, dialect)
        elif shares_a_total(claim):
            missing += off_share(sql, claim, dialect)
        if claim.metric == MetricKind.count and claim.entity:
            counted = entity_of_sql(sql, dialect, strict=True)
            if counted is not None and not same_entity(claim.entity, counted, self._entities):
                missing.append(f"entity ({claim.entity}; the query counts {counted})")
        return missing

    def _verify_count(self, insight: Insight) -> Validation:
        claimed = insight.affected_count
        if claimed is None or claimed <= 0:
            return Validation(status=ValidationStatus.not_verifiable, claimed_count=claimed,
                              reasoning="the insight claims no affected count, so there is nothing to re-check")
        evidence = render_evidence(insight, self.steps)
        if insight.verification_sql:
            sql, reasoning = insight.verification_sql, "count query generated with the insight"
        elif self.llm is None:
            return Validation(status=ValidationStatus.error, claimed_count=claimed,
                              reasoning="no verification query and no LLM to write one")
        else:
            try:
                sql, reasoning = self._ask_query(insight, evidence)
            except (LLMError, ActionParseError) as exc:
                return Validation(status=ValidationStatus.error, claimed_count=claimed, reasoning=str(exc))
        out = self.executor.run(sql, evidence=evidence or None, fix=self.llm is not None, purpose="verify")
        self.usage = self.usage.add(out.usage)
        attempts = out.attempts or [SQLAttempt(sql=out.sql)]
        if out.refused or out.error:
            return Validation(status=ValidationStatus.error, claimed_count=claimed, query=out.sql,
                              reasoning=f"{reasoning}; the query failed: {out.refused or out.error}",
                              attempts=attempts)
        count = single_count(out)
        if count is None:
            return Validation(status=ValidationStatus.error, claimed_count=claimed, query=out.sql,
                              reasoning=f"{reasoning}; the query did not return a single count", attempts=attempts)
        return Validation(status=verdict(claimed, count), claimed_count=claimed, verified_count=count,
                          query=out.sql, reasoning=reasoning, attempts=attempts)

    def _ask_query(self, insight: Insight, evidence: str) -> tuple[str, str]:
        claim = {k: v for k, v in insight.model_dump(mode="json").items()
                 if k in ("id", "name", "description", "affected_count", "segment", "indicators")}
        return self._ask(VERIFY_PROMPT, evidence, "Claim to verify:\n" + json.dumps(claim, ensure_ascii=False),
                         insight.id)

    def _ask(self, template: str, evidence: str, content: str, insight_id: str) -> tuple[str, str]:
        system = verification_system(template, evidence, self.catalog)
        messages = [Message("user", content=content)]
        lookups = 0
        forced = False
        while True:
            allowed = ("query",) if forced else VERIFY_ACTIONS
            req = LLMRequest(purpose="verify", system=system, messages=messages,
                             max_tokens=1500, meta={"insight": insight_id, "forced": forced, "lookups": lookups})
            resp = self.llm.complete(req)
            self.calls += 1
            self.usage = self.usage.add(resp.usage)
            try:
                action = parse_action(resp.text, allowed)
            except ActionParseError as exc:
                if forced:
                    raise ActionParseError(f"the forced final round produced no query ({exc})") from None
                messages += [Message("assistant", content=resp.text or "(empty)"),
                             Message("user", content=f"That reply could not be used ({exc}). Answer with one "
                                                     "JSON object: a query, or a lookup_schema.")]
                lookups += 1  # a wasted round still spends the budget
                if lookups >= limits.MAX_LOOKUPS_PER_VERIFICATION:
                    forced = True
                    messages[-1].content += "\nThis is the final round: answer with a query now."
                continue
            if action.kind == "query":
                return action.sql, action.purpose or "verification query written by the verifier"
            lookups += 1
            found = self.provider.lookup(action.tables).as_dict() if self.provider else {
                "error": "lookup_schema is not available"}
            note = f"Lookup result:\n{json.dumps(found, ensure_ascii=False, default=str)[:6000]}"
            if lookups >= limits.MAX_LOOKUPS_PER_VERIFICATION:
                forced = True
                note += "\n\nThe lookup budget is used up. This is the final round: answer with a query now."
            messages += [Message("assistant", content=resp.text), Message("user", content=note)]
