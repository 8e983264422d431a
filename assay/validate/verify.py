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

from .. import limits
from ..errors import LLMError
from ..explore.actions import ActionParseError, parse_action
from ..explore.executor import Executor, ExecOutcome
from ..llm.base import LLM, LLMRequest, Message, SystemBlock
from ..models import ExplorationStep, Insight, SQLAttempt, TokenUsage, Validation, ValidationStatus
from ..schema.provider import SchemaProvider

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


def render_evidence(insight: Insight, steps: dict[int, ExplorationStep]) -> str:
    parts = []
    for n in insight.source_steps:
        s = steps.get(n)
        if s is None or not s.ok:
            continue
        cols = ", ".join(c.name for c in s.digest.columns) if s.digest else ""
        parts.append(f"-- step {n}: {s.purpose}\n-- returned columns: {cols}\n{s.query}")
    return "\n\n".join(parts)


VERIFY_PROMPT = """\
You verify one claim made by an analyst against the data warehouse.
Write ONE SQL query that returns a single row with a single number: the count of the entities the claim is about
(SELECT COUNT(...) AS count ...). Adapt one of the source queries below: their columns exist.

## Source queries (authoritative column evidence)
{evidence}

## Warehouse catalog
{catalog}

Answer with exactly one JSON object:
- {{"query": "SELECT COUNT(...) AS count FROM ...", "purpose": "what the count is"}}
- {{"lookup_schema": ["schema.table"]}} to see columns of a table the sources do not cover (up to {max_lookups} times)."""


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
        system = VERIFY_PROMPT.format(evidence=evidence or "(the insight cites no successful step)",
                                      catalog=self.catalog or "(not available)",
                                      max_lookups=limits.MAX_LOOKUPS_PER_VERIFICATION)
        claim = {k: v for k, v in insight.model_dump(mode="json").items()
                 if k in ("id", "name", "description", "affected_count", "segment", "indicators")}
        messages = [Message("user", content="Claim to verify:\n" + json.dumps(claim, ensure_ascii=False))]
        lookups = 0
        forced = False
        while True:
            allowed = ("query",) if forced else VERIFY_ACTIONS
            req = LLMRequest(purpose="verify", system=[SystemBlock(system, cache=True)], messages=messages,
                             max_tokens=1500, meta={"insight": insight.id, "forced": forced, "lookups": lookups})
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
