"""Pydantic models of every stored record and every LLM JSON contract.

Records are what the store keeps (projects, runs, steps, discoveries, feedback).
Contracts are what an LLM must answer with; invalid answers are turned into a
corrective message by the caller, never into a crash.
"""

from __future__ import annotations

import datetime as dt
import os
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def as_utc(ts: dt.datetime) -> dt.datetime:
    """Stored timestamps come back naive (UTC); make them comparable with utcnow()."""
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


# --------------------------------------------------------------------------- projects


class ProjectState(str, Enum):
    pack_generation_pending = "pack_generation_pending"
    pack_generation = "pack_generation"
    pack_generation_done = "pack_generation_done"
    ready = "ready"


class TenantFilter(_Model):
    column: str
    value: str | int
    # relations without the tenant column that hold no tenant's data (shared dimensions such as
    # products); with a tenant filter set, any other relation without the column is refused
    shared_tables: list[str] = Field(default_factory=list)


class WarehouseConfig(_Model):
    kind: str = "duckdb"
    # kind-specific connection settings (path, dsn, account, ...). Secrets are
    # never stored here: they are named by env var (``*_env``) or Prefect block.
    settings: dict[str, Any] = Field(default_factory=dict)
    schemas: list[str] = Field(default_factory=list)
    tenant_filter: TenantFilter | None = None
    inject_tenant_filter: bool = False
    statement_timeout_s: float = 60.0
    row_cap: int = 10_000
    # what one connection may use: DuckDB's memory_limit (spill to disk up to 4x), PostgreSQL's
    # work_mem (1/16) and temp_file_limit (4x, where the role may set it)
    memory_limit_mb: int = Field(2048, ge=64)
    # queries this warehouse runs at once, across every worker of a Prefect server (a global concurrency
    # limit named after the warehouse, see warehouse/slots.py); without Prefect it is not enforced
    max_concurrent_queries: int = 2
    digest_bytes_cap: int = 16_000  # a step digest larger than this sheds rows, never statistics
    pii_columns: list[str] = Field(default_factory=list)
    # what tables hold, in the project's words, for warehouses without comments (or without the
    # right to add them): {"sales.sls_quote": "quotations sent to customers", "sls_disc": "..."}.
    # Added to the warehouse's own comment; not part of the schema cache key.
    descriptions: dict[str, str] = Field(default_factory=dict)


class LLMConfig(_Model):
    provider: str = "auto"  # auto (chosen at run time, see llm/resolve.py) | anthropic | openai | bedrock | vertex | azure | ...
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    secret_block: str | None = None
    max_tokens: int = 8192  # an area's insights with their claims outgrow 4,096 output tokens
    # one request's wait for the model (the SDK retries past it); ASSAY_LLM_TIMEOUT_S for slow gateways
    timeout_s: float = Field(default_factory=lambda: float(os.environ.get("ASSAY_LLM_TIMEOUT_S") or 300.0))
    analysis_budget_tokens: int = 200_000
    # USD per million tokens ({input, output, cache_read}); overrides the built-in price list
    prices: dict[str, float] | None = None
    # the provider's own settings (bedrock: region, profile; vertex: project_id, region; azure: endpoint,
    # deployment, api_version), checked by the typed model in config.LLM_SETTINGS
    settings: dict[str, Any] = Field(default_factory=dict)


class AnalysisConfig(_Model):
    """How an LLM run is prepared. ``leads_probes``: the statistical scan run before the LLM explores (the
    statistical analyst's probes and detectors, no LLM); its strongest candidates open the explorer's prompt
    as unverified leads. 0 (or ``off``) runs no scan. The default is the statistical analyst's own default
    budget (``max_steps``): its first probes profile each table (up to 12) and check joins (up to 6), so a
    smaller budget leaves few probes that look at behaviour."""

    leads_probes: int = 40
    # the scan's findings that the statistical analyst would report and no LLM insight covers become insights of
    # the run (origin "statistical scan"), built and verified as the statistical analyst's (run/adopt.py); off:
    # they are only listed as uncovered leads
    adopt_scan_findings: bool = True

    @field_validator("leads_probes", mode="before")
    @classmethod
    def _off(cls, v):
        if v is False or (isinstance(v, str) and v.strip().lower() in ("off", "false", "no", "none")):
            return 0  # YAML reads a bare off as False
        if v is True:
            return 40
        return v


class NotifyConfig(_Model):
    """Where a run's summary goes when it ends: a Slack-compatible incoming webhook. The URL is a
    secret: named by environment variable or Prefect Secret block, never stored."""

    webhook_url_env: str | None = None
    webhook_block: str | None = None
    on: list[Literal["full", "partial", "failed"]] = Field(default_factory=lambda: ["full", "partial", "failed"])


class Project(_Model):
    id: str
    name: str = ""
    pack: str = "ecommerce"
    category: str | None = None
    warehouse: WarehouseConfig = Field(default_factory=WarehouseConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    analysis: AnalysisConfig = Field(default_factory=AnalysisConfig)
    analyst: Literal["auto", "llm", "statistical"] = "auto"
    schedule: str | None = None  # cron
    timezone: str | None = None  # IANA time zone the cron is read in, e.g. Europe/Berlin (default UTC)
    profile: dict[str, Any] = Field(default_factory=dict)
    prompt_overrides: dict[str, str] = Field(default_factory=dict)
    disabled_areas: list[str] = Field(default_factory=list)
    custom_areas: list["AnalysisArea"] = Field(default_factory=list)
    pack_dir: str | None = None
    goal: str | None = None
    notify: NotifyConfig | None = None
    state: ProjectState = ProjectState.ready
    max_steps: int = 40
    min_steps: int = 0
    created_at: dt.datetime = Field(default_factory=utcnow)

    @field_validator("id")
    @classmethod
    def _id_ok(cls, v: str) -> str:
        import re

        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,62}", v):
            raise ValueError("project id must be lowercase letters, digits, '-' or '_' (max 63)")
        return v


# --------------------------------------------------------------------------- packs


class AnalysisArea(_Model):
    id: str
    name: str
    description: str
    keywords: list[str] = Field(default_factory=list)
    priority: int = 1
    prompt: str = ""  # template text (Markdown)


class DomainPack(_Model):
    name: str
    description: str = ""
    category: str | None = None
    categories: list[str] = Field(default_factory=list)
    base_context: str = ""
    exploration: str = ""
    recommendations: str = ""
    areas: list[AnalysisArea] = Field(default_factory=list)
    profile_schema: dict[str, Any] = Field(default_factory=dict)


# --------------------------------------------------------------------------- digests


class ColumnKind(str, Enum):
    number = "number"
    string = "string"
    boolean = "boolean"
    timestamp = "timestamp"
    null = "null"
    mixed = "mixed"


class ValueCount(_Model):
    value: Any
    count: int


class ColumnSummary(_Model):
    name: str
    kind: ColumnKind
    null_count: int = 0
    distinct: int = 0
    min: int | float | None = None  # int for integer columns (counts render as 11, not 11.0)
    p25: int | float | None = None
    median: int | float | None = None
    p75: int | float | None = None
    max: int | float | None = None
    min_time: str | None = None
    max_time: str | None = None
    top: list[ValueCount] | None = None


class CompactResult(_Model):
    row_count: int
    truncated: bool = False  # true whenever rows were left out (row cap or digest)
    columns: list[ColumnSummary] = Field(default_factory=list)
    all_rows: list[dict[str, Any]] | None = None  # every row, when the result is small
    kept_rows: list[dict[str, Any]] | None = None  # otherwise the rows that carry the signal, each once
    kept_row_numbers: list[int] | None = None  # their 1-based positions in the result
    cut: str | None = None  # what was cut, in words: "12 of 38 rows kept (...)", shortened values
    head_rows: list[dict[str, Any]] | None = None  # digests written before kept_rows existed
    tail_rows: list[dict[str, Any]] | None = None

    def rows(self) -> list[dict[str, Any]]:
        """Every row the digest kept, whichever form it was stored in."""
        if self.all_rows is not None:
            return self.all_rows
        if self.kept_rows is not None:
            return self.kept_rows
        return (self.head_rows or []) + (self.tail_rows or [])


# --------------------------------------------------------------------------- steps


class StepAction(str, Enum):
    query = "query"
    lookup_schema = "lookup_schema"
    search_tables = "search_tables"
    search_insights = "search_insights"  # `assay ask`: earlier discoveries' findings
    scan = "scan"  # a statistical-scan probe backing an adopted finding (run/adopt.py): no exploration step
    complete_rejected = "complete_rejected"
    done = "done"
    error = "error"


class SQLAttempt(_Model):
    sql: str
    error: str | None = None


class TokenUsage(_Model):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    input_chars: int = 0

    def add(self, other: "TokenUsage") -> "TokenUsage":
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            input_chars=self.input_chars + other.input_chars,
        )


class ExplorationStep(_Model):
    run_id: str
    step: int
    turn: int = 0  # steps of one LLM turn share it (several tool calls in one turn)
    action: StepAction
    thinking: str = ""
    purpose: str = ""
    query: str = ""
    row_count: int = 0
    error: str | None = None
    refused: str | None = None  # guard refusal reason
    fix_history: list[SQLAttempt] = Field(default_factory=list)
    digest: CompactResult | None = None
    # every row of a mid-sized result (digest.chart_rows), masked as the digest: the report's chart of the step only,
    # never sent to a model (the digest is what prompts read)
    chart_rows: list[dict[str, Any]] | None = None
    tables: list[str] = Field(default_factory=list)  # lookup/search payload
    summary: str = ""  # one-line summary used for bounded history
    result_preview: str = ""  # what the model was shown (projected)
    duration_ms: float = 0.0
    usage: TokenUsage = Field(default_factory=TokenUsage)
    nudges: int = 0
    probe: dict[str, Any] | None = None  # statistical analyst: what the step measured
    charged: bool = True  # lookups answered from already-fetched tables are free
    # the number the model saw this step under ([step N], N its place in the step budget's count: explore/numbering.py);
    # 0 for a free action, shown without a number; None for a step stored before that numbering (shown as ``step``)
    shown: int | None = None
    note: str = ""  # the model's own words in the turn (native tools: text beside the calls), on its first step
    call_id: str | None = None  # native tool-call id, to rebuild the conversation
    created_at: dt.datetime = Field(default_factory=utcnow)

    @property
    def ok(self) -> bool:
        return self.action in (StepAction.query, StepAction.scan) and self.error is None and self.refused is None


# --------------------------------------------------------------------------- insights


class ValidationStatus(str, Enum):
    confirmed = "confirmed"
    adjusted = "adjusted"
    rejected = "rejected"
    error = "error"
    not_verifiable = "not_verifiable"


class Validation(_Model):
    status: ValidationStatus
    claimed_count: int | None = None
    verified_count: int | None = None
    query: str = ""
    reasoning: str = ""
    attempts: list[SQLAttempt] = Field(default_factory=list)
    # the refuter's finding on the insight's confirmed comparisons: "survives refutation", or "but ..."
    refutation: str | None = None


class MetricKind(str, Enum):
    count = "count"
    rate = "rate"
    share = "share"
    average = "average"
    change = "change"
    fit = "fit"  # a fitted relation: the slope, r or R² of y on x (validate/fit.py)
    sum = "sum"  # a total of a column or expression over the rows (revenue, units): validate/sums.py


def _number(v: Any) -> Any:
    """A number as a model writes it: 1,234 / "14%" / "0.14" -> float; "" -> None."""
    if v is None or v == "" or isinstance(v, bool):
        return None
    if isinstance(v, str):
        t = v.strip().replace(",", "").replace("%", "")
        try:
            return float(t)
        except ValueError:
            return None
    return v


_FIT_STATISTICS = {"slope": "slope", "regr_slope": "slope", "trend": "slope", "gradient": "slope",
                   "r": "r", "corr": "r", "correlation": "r", "pearson": "r", "pearson_r": "r",
                   "r2": "r2", "r_squared": "r2", "rsquared": "r2", "r^2": "r2", "r²": "r2", "regr_r2": "r2",
                   "coefficient_of_determination": "r2"}
# metric names that mean a fit, with the statistic they imply ("": stated in `statistic`): the name of every statistic
# (but "trend", a change over time as a metric) and the words for a fit itself
_FIT_METRICS = {**{k: v for k, v in _FIT_STATISTICS.items() if k != "trend"},
                "fit": "", "regression": "", "linear_fit": "", "linear_trend": "slope"}


# the ways a model names a metric kind; a total is a sum, never a count of rows (round 10: every model asked for
# "revenue of paid_social customers is $1.2M", which parsed as a count and was checked as one)
_METRIC_ALIASES = {"percentage": "share", "ratio": "rate", "mean": "average",
                   "avg": "average", "number": "count", "trend": "change",
                   "total": "sum", "totals": "sum", "sum_total": "sum", "summed": "sum", "total_sum": "sum",
                   "total_amount": "sum", "amount": "sum"}
_TOTAL_WORDS = {"total", "totals"}  # a sum when the claim says what it sums (sum_sql), else a count


def normalize_statistic(v: Any) -> str:
    """A fit statistic's canonical name (slope | r | r2) from the ways a model writes it ("R-squared", "Pearson r");
    any other text as folded."""
    key = "_".join(str(v or "").strip().lower().replace("-", " ").split())
    return _FIT_STATISTICS.get(key, key)


class Claim(_Model):
    """One headline number of an insight, with what it measures (LLM contract), and what the warehouse
    said about it (set by the verifier). ``value`` is the metric on the segment, ``baseline_value`` on the
    baseline (for a change: the earlier period); rates and shares are fractions (0.14 for 14%)."""

    metric: MetricKind = MetricKind.count
    measure: str = ""            # what is measured, in words: "cart-to-purchase conversion", "revenue"
    entity: str | None = None    # what is counted or averaged over: customers, orders, order items, ...
    segment: str = ""            # in words
    segment_sql: str = ""        # as a SQL condition: platform = 'android'
    baseline: str = ""           # in words ("other platforms"); empty when there is no comparison
    baseline_sql: str = ""
    period: str = ""             # "since 2026-07-01", "2026-01..2026-06"
    period_sql: str = ""         # event_at >= TIMESTAMP '2026-07-01'
    value: float | None = None
    baseline_value: float | None = None
    source_steps: list[int] = Field(default_factory=list)
    # a share's whole ("78 of 128 open incidents": open incidents), in words and as a SQL condition; empty: all of
    # the period's rows (an answer written before the field)
    whole: str = ""
    whole_sql: str = ""
    # a fit (metric fit): the statistic (slope | r | r2) of y on x, each in words and as a SQL expression
    statistic: str = ""
    y: str = ""
    y_sql: str = ""
    x: str = ""
    x_sql: str = ""
    # a sum (metric sum): the summed column or expression as SQL ("oi.quantity * oi.unit_price" for revenue)
    sum_sql: str = ""
    # set only by the statistical analyst (generated SQL returning segment_value[, baseline_value])
    verification_sql: str | None = None
    # --- the verifier's findings
    grounded: bool | None = None
    ungrounded_numbers: list[float] = Field(default_factory=list)
    verdict: ValidationStatus | None = None
    verified_value: float | None = None
    verified_baseline_value: float | None = None
    query: str = ""
    reasoning: str = ""
    refutation: str | None = None      # "survives refutation" | "but <counter-evidence in one sentence>"
    refutation_sql: str = ""

    @model_validator(mode="before")
    @classmethod
    def _fit_metric(cls, data: Any) -> Any:
        """A fit written as its statistic ("metric": "r2", "slope", "correlation") is metric fit of that statistic."""
        if isinstance(data, dict) and isinstance(data.get("metric"), str):
            key = "_".join(data["metric"].strip().lower().replace("-", " ").split())
            if key in _FIT_METRICS:
                data = dict(data, metric="fit")
                if _FIT_METRICS[key] and not data.get("statistic"):
                    data["statistic"] = _FIT_METRICS[key]
        if isinstance(data, dict) and isinstance(data.get("metric"), str) and not (data.get("sum_sql") or "").strip():
            # "total" with nothing to sum is a total count ("total customers"), as it was before the sum metric
            if data["metric"].strip().lower() in _TOTAL_WORDS:
                data = dict(data, metric="count")
        if isinstance(data, dict) and isinstance(data.get("statistic"), str):
            data = dict(data, statistic=normalize_statistic(data["statistic"]))
        return data

    @field_validator("metric", mode="before")
    @classmethod
    def _metric(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().lower()
            return _METRIC_ALIASES.get("_".join(v.replace("-", " ").split()), v)
        return v

    @field_validator("value", "baseline_value", mode="before")
    @classmethod
    def _num(cls, v: Any) -> Any:
        return _number(v)

    @field_validator("measure", "segment", "segment_sql", "baseline", "baseline_sql", "period", "period_sql",
                     "whole", "whole_sql", "statistic", "y", "y_sql", "x", "x_sql", "sum_sql", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return "" if v is None else v  # a real model writes null for "no baseline"; that is not an invalid answer

    @field_validator("source_steps", mode="before")
    @classmethod
    def _steps(cls, v: Any) -> Any:
        if isinstance(v, (int, str)):
            v = [v]
        return [int(x) for x in v if str(x).strip().lstrip("-").isdigit()] if isinstance(v, list) else v


class Severity(str, Enum):
    critical = "critical"
    high = "high"
    medium = "medium"
    low = "low"


class InsightDraft(_Model):
    """What the analyst LLM must return per insight (LLM contract)."""

    name: str = Field(min_length=3)
    description: str = Field(min_length=3)
    severity: Severity = Severity.medium
    affected_count: int | None = None
    risk_score: float | None = Field(default=None, ge=0, le=1)
    confidence: float | None = Field(default=None, ge=0, le=1)
    indicators: list[str] = Field(default_factory=list)
    source_steps: list[int] = Field(default_factory=list)
    segment: str | None = None
    # what affected_count counts (customers, orders, order items, events, players, sessions); None: unknown
    affected_entity: str | None = None
    claims: list[Claim] = Field(default_factory=list)
    # the statistical scan's leads this insight reports, as the analysis prompt numbers them ("L2"); stored as
    # the leads' headlines (analysis/analyze.py), so that the scan never adopts a finding the model reported in
    # its own words and figures (run/adopt.py, findings.uncovered_leads)
    leads: list[str] = Field(default_factory=list)
    # set only by the statistical analyst (generated SQL); dropped from any LLM answer
    verification_sql: str | None = None

    @field_validator("leads", mode="before")
    @classmethod
    def _leads(cls, v: Any) -> Any:
        if v is None or v == "":
            return []
        if isinstance(v, (str, int)):
            v = [v]
        # a label the analysis cannot read is dropped there (analysis/analyze.py), never a failed answer
        return [str(x) for x in v if isinstance(x, (str, int)) and not isinstance(x, bool)] if isinstance(v, list) \
            else []

    @field_validator("affected_count", mode="before")
    @classmethod
    def _count(cls, v: Any) -> Any:
        if v is None or v == "":
            return None
        if isinstance(v, float):
            return int(round(v))
        if isinstance(v, str):
            return int(float(v.replace(",", "")))
        return v

    @field_validator("severity", mode="before")
    @classmethod
    def _sev(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v


class AnalysisAnswer(_Model):
    insights: list[InsightDraft]


class VerdictRecord(_Model):
    """One verification of an insight: at discovery, or re-run on demand (`assay verify`)."""

    at: dt.datetime = Field(default_factory=utcnow)
    source: Literal["discovery", "reverify"] = "discovery"
    status: ValidationStatus
    claims: list[dict[str, Any]] = Field(default_factory=list)  # measure, value, verified values, verdict
    note: str = ""


class Insight(InsightDraft):
    id: str
    area: str
    validation: Validation | None = None
    duplicate_of: str | None = None
    ungrounded: bool = False  # a number of a claim traces to no cited step's stored result
    also_relevant_to: list[str] = Field(default_factory=list)  # areas whose same finding was merged here
    merged_from: list[str] = Field(default_factory=list)       # ids of the merged insights
    origin: str | None = None  # "statistical scan": a scan finding no LLM insight covered (run/adopt.py)
    context_reason: str | None = None  # set on a context note: why it is not a finding (findings.split_context)
    verdict_history: list[VerdictRecord] = Field(default_factory=list)  # re-verifications, oldest first
    discovered_at: dt.datetime = Field(default_factory=utcnow)


class ExpectedImpact(_Model):
    metric: str = ""
    estimated_improvement: str = ""
    reasoning: str = ""


class RecommendationDraft(_Model):
    title: str = Field(min_length=3)
    description: str = ""
    priority: int = Field(default=3, ge=1, le=5)
    effort: str = ""
    target_segment: str = ""
    segment_size: int | None = None
    expected_impact: ExpectedImpact = Field(default_factory=ExpectedImpact)
    actions: list[str] = Field(default_factory=list)
    success_metrics: list[str] = Field(default_factory=list)
    related_insight_ids: list[str] = Field(default_factory=list)
    confidence: float | None = Field(default=None, ge=0, le=1)


class RecommendationAnswer(_Model):
    recommendations: list[RecommendationDraft]


class Recommendation(RecommendationDraft):
    id: str


# --------------------------------------------------------------------------- runs


class RunStatus(str, Enum):
    pending = "pending"
    running = "running"
    completed = "completed"
    failed = "failed"
    cancelled = "cancelled"
    crashed = "crashed"  # its process stopped without ending it (killed, lost host): see liveness.py


class Phase(str, Enum):
    init = "init"
    context = "context"
    schema = "schema"
    exploration = "exploration"
    analysis = "analysis"
    validation = "validation"
    recommendations = "recommendations"
    save = "save"
    done = "done"


class RunType(str, Enum):
    full = "full"
    partial = "partial"
    failed = "failed"


class Telemetry(_Model):
    steps_by_action: dict[str, int] = Field(default_factory=dict)
    schema_lookup_calls: int = 0
    schema_search_calls: int = 0
    reformat_nudges: int = 0
    rejected_completions: int = 0
    sql_fixes: int = 0
    guard_refusals: int = 0
    catalog_tokens: int = 0
    catalog_tables_left_out: int = 0
    analysis_step_index_upserts: int = 0
    analysis_step_index_search_calls: int = 0
    analysis_steps_dropped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    llm_calls: int = 0
    leads_probes: int = 0  # queries the statistical leads scan ran before the exploration
    leads: int = 0         # leads it gave the explorer
    scan_adopted: int = 0           # the scan's findings adopted as insights (run/adopt.py)
    scan_adoption_queries: int = 0  # queries the adoption ran (count SQL, claims, verification)
    scan_adoption_ms: int = 0       # the adoption's wall time


class DiscoveryRun(_Model):
    id: str
    project_id: str
    status: RunStatus = RunStatus.pending
    phase: Phase = Phase.init
    analyst: str = ""
    analyst_note: str = ""  # which analyst and model ran, and why (the run's first line)
    max_steps: int = 40
    min_steps: int = 0
    areas_requested: list[str] | None = None
    steps_done: int = 0
    error: str | None = None
    flow_run_id: str | None = None
    areas: list[str] = Field(default_factory=list)
    schema_key: str | None = None
    catalog: str = ""
    previous_context: str = ""
    exploration_finished: str | None = None  # done | max_steps | errors
    exploration_summary: str = ""
    leads: str | None = None  # the leads section of the exploration prompt (None: not scanned yet; "": none)
    goal: str | None = None
    phases_done: list[str] = Field(default_factory=list)
    telemetry: Telemetry = Field(default_factory=Telemetry)
    started_at: dt.datetime = Field(default_factory=utcnow)
    finished_at: dt.datetime | None = None
    # a rerun or a retry of an ended run: when it resumed, and the working time of its earlier attempts (the
    # saved duration is theirs plus this one's, not the time since the first start)
    resumed_at: dt.datetime | None = None
    earlier_s: float = 0.0
    run_type: RunType | None = None  # full / partial / failed once saved (what Prefect's final state mirrors)
    host: str | None = None  # where the process running it lives, and its pid and last sign of life
    pid: int | None = None
    heartbeat_at: dt.datetime | None = None
    heartbeat_s: float | None = None  # the beat its process keeps (the reader judges silence by it)
    # areas run as their own flow runs (a work pool): {area: {"flow_run": id, "state": Prefect state name}}
    area_runs: dict[str, dict[str, Any]] = Field(default_factory=dict)


class AreaLog(_Model):
    area: str
    ok: bool
    error: str | None = None
    selected_steps: list[dict[str, Any]] = Field(default_factory=list)
    dropped_steps: list[dict[str, Any]] = Field(default_factory=list)
    query_results_chars: int = 0
    insights: int = 0
    note: str = ""  # e.g. why the area has no insights
    usage: TokenUsage = Field(default_factory=TokenUsage)


class DiscoveryResult(_Model):
    run_id: str
    project_id: str
    domain: str
    category: str | None = None
    analyst: str = ""
    run_type: RunType = RunType.full
    areas_requested: list[str] | None = None
    total_steps: int = 0
    duration_s: float = 0.0
    insights: list[Insight] = Field(default_factory=list)
    context_notes: list[Insight] = Field(default_factory=list)  # non-differences and facts of the data's shape
    uncovered_leads: list[str] = Field(default_factory=list)  # the scan's leads no insight covers (findings.py)
    recommendations: list[Recommendation] = Field(default_factory=list)
    recommendation_note: str | None = None
    summary: dict[str, Any] = Field(default_factory=dict)
    analysis_log: list[AreaLog] = Field(default_factory=list)
    validation_log: list[dict[str, Any]] = Field(default_factory=list)
    recommendation_log: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    created_at: dt.datetime = Field(default_factory=utcnow)


class Feedback(_Model):
    project_id: str
    run_id: str
    insight_id: str
    rating: Literal["like", "dislike"]
    comment: str = ""
    insight_name: str = ""
    area: str = ""
    created_at: dt.datetime = Field(default_factory=utcnow)


Project.model_rebuild()


# --------------------------------------------------------------------------- schema


class ColumnInfo(_Model):
    name: str
    type: str
    nullable: bool = True
    description: str = ""  # the warehouse's comment on the column, if it has one


class TableInfo(_Model):
    schema_name: str = Field(alias="schema")
    name: str
    columns: list[ColumnInfo] = Field(default_factory=list)
    row_count: int = 0
    foreign_keys: dict[str, str] = Field(default_factory=dict)  # column -> schema.table
    description: str = ""  # the warehouse's comment on the table, if it has one

    @property
    def fqn(self) -> str:
        return f"{self.schema_name}.{self.name}"

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]
