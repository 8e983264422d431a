"""The planner-to-detector contract: what each probe measured, one typed model per probe kind.

The planner builds a model with each probe; the step stores it as a plain dict (``step.probe``:
``{"kind": ..., "table": ..., **fields}``) and the detectors read it back with :func:`parse`.
Unknown keys of a stored dict (an older run) are ignored; missing ones take their defaults.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar


@dataclass
class Join:
    """A fact table joined to a dimension table: ``f.on = o.key``; or through a middle table when ``via`` is
    set (refunds -> orders -> customers.region): ``f.<via.on> = m.<via.key>``, then ``m.on = o.key``.
    The ``ref``s are set at detection."""
    table: str
    on: str
    key: str
    ref: str = ""
    via: "Join | None" = None

    @classmethod
    def of(cls, j: "Join | dict") -> "Join":
        if isinstance(j, Join):
            return j
        via = j.get("via")
        return cls(table=j.get("table", ""), on=j["on"], key=j["key"], ref=j.get("ref", ""),
                   via=cls.of(via) if via else None)

    def from_sql(self, fact_ref: str, quote) -> str:
        """``fact_ref f JOIN ... o``: the fact table as ``f``, the dimension table as ``o`` (the middle one ``m``)."""
        if self.via is None:
            return f"{fact_ref} f JOIN {self.ref} o ON f.{quote(self.on)} = o.{quote(self.key)}"
        return (f"{fact_ref} f JOIN {self.via.ref} m ON f.{quote(self.via.on)} = m.{quote(self.via.key)} "
                f"JOIN {self.ref} o ON m.{quote(self.on)} = o.{quote(self.key)}")


@dataclass(kw_only=True)
class ProbeMeta:
    KIND: ClassVar[str] = ""
    catalogue: bool = False  # about a small reference table (airports, products)
    core: float = 0.0        # priority of a probe about the question's top measures (0: not core)

    def to_dict(self) -> dict[str, Any]:
        """The stored form: every field but the empty ones (a join without a middle table has no ``via``)."""
        out = {k: v for k, v in asdict(self).items() if v is not None}
        if isinstance(out.get("join"), dict) and out["join"].get("via") is None:
            out["join"].pop("via", None)
        return out

    @classmethod
    def of(cls, meta: "ProbeMeta | dict | None") -> "ProbeMeta":
        """A model of this kind from a stored dict (or another model's fields)."""
        if isinstance(meta, cls):
            return meta
        raw = meta.to_dict() if isinstance(meta, ProbeMeta) else dict(meta or {})
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in raw.items() if k in names}
        if isinstance(kw.get("join"), dict):
            kw["join"] = Join.of(kw["join"])
        for f in fields(cls):  # a stored probe without a required field: its empty value
            if f.name not in kw and f.default is MISSING and f.default_factory is MISSING:
                kw[f.name] = None
        return cls(**kw)


@dataclass(kw_only=True)
class ProfileMeta(ProbeMeta):
    KIND = "profile"


@dataclass(kw_only=True)
class GroupMeta(ProbeMeta):
    """A measure's averages per value of one dimension (a column, a join, or a calendar expression)."""
    dim: str = ""
    entity: str | None = None
    join: Join | None = None
    expr: str | None = None      # the dimension as an expression (month of year from a timestamp)
    calendar: str | None = None  # month, dow or hour: how its values read
    small: bool = False          # an operational table too small for robust z-scores
    # yes-or-no facts the probe computed from two columns, as {name: [due, actual]}: ``late`` is actual > due
    flags: dict[str, list[str]] = field(default_factory=dict)


@dataclass(kw_only=True)
class BreakdownMeta(GroupMeta):
    KIND = "breakdown"
    state: bool = False  # by the table's state column: its measures by state; how rows split is the outcome rates'


@dataclass(kw_only=True)
class JoinedBreakdownMeta(GroupMeta):
    KIND = "joined_breakdown"


@dataclass(kw_only=True)
class SeasonMeta(GroupMeta):
    KIND = "season"


@dataclass(kw_only=True)
class RankBreakdownMeta(GroupMeta):
    """Mean ranks of one measure per value of a dimension (Kruskal-Wallis), for skewed measures."""
    KIND = "rank_breakdown"
    measure: str = ""


@dataclass(kw_only=True)
class FunnelMeta(ProbeMeta):
    KIND = "funnel"
    dim: str = ""
    event: str = ""
    entity: str | None = None
    time: str | None = None
    join: Join | None = None


@dataclass(kw_only=True)
class RateSeriesMeta(FunnelMeta):
    KIND = "rate_series"


@dataclass(kw_only=True)
class SeriesMeta(ProbeMeta):
    KIND = "series"
    time: str | None = None
    time_sql: str | None = None  # the period as an expression (a date made of integer parts)
    grain: str = "month"
    entity: str | None = None
    period: bool = False         # a question about change over the period


@dataclass(kw_only=True)
class IntervalMeta(ProbeMeta):
    """The table's main interval (opened -> closed) in its unit (days, hours, minutes or seconds)."""
    start: str | None = None
    end: str | None = None
    label: str | None = None
    measure: str | None = None
    unit: str = "days"


@dataclass(kw_only=True)
class DurationBreakdownMeta(IntervalMeta):
    KIND = "duration_breakdown"
    dim: str = ""


@dataclass(kw_only=True)
class DurationSeriesMeta(IntervalMeta):
    KIND = "duration_series"
    time: str | None = None


@dataclass(kw_only=True)
class SegmentSeriesMeta(IntervalMeta):
    KIND = "segment_series"
    dim: str = ""
    time: str | None = None
    trend: bool = False
    join: Join | None = None


@dataclass(kw_only=True)
class EndBeforeStartMeta(ProbeMeta):
    KIND = "end_before_start"
    start: str = ""
    end: str = ""


@dataclass(kw_only=True)
class ConcentrationMeta(ProbeMeta):
    KIND = "concentration"
    entity: str = ""
    measure: str = ""


@dataclass(kw_only=True)
class CrosstabMeta(ProbeMeta):
    KIND = "crosstab"
    dims: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class CorrelationMeta(ProbeMeta):
    KIND = "correlation"
    pairs: list[list[str]] = field(default_factory=list)
    exprs: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class RetentionMeta(ProbeMeta):
    KIND = "retention"
    dim: str = ""
    entity_table: str = ""
    key: str = ""
    created: str = ""
    activity_table: str = ""
    activity_time: str = ""
    activity_ref: str = ""
    # whether a return after day 0 is judged by this table: not when a table of the entity's presence (sessions,
    # visits) answers that, and this one (attempts, purchases) says only whether the act was repeated
    returns: bool = True


@dataclass(kw_only=True)
class StatusSwitchMeta(ProbeMeta):
    KIND = "status_switch"
    dim: str = ""
    time: str = ""


@dataclass(kw_only=True)
class NullReasonMeta(ProbeMeta):
    KIND = "null_reason"
    measure: str = ""
    others: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class NullStatusMeta(ProbeMeta):
    """Rows without the measure per value of a status column (cancelled, not applicable)."""
    KIND = "null_status"
    measure: str = ""
    status: str = ""


@dataclass(kw_only=True)
class KeyOverlapMeta(ProbeMeta):
    """How many values of ``column`` are values of ``target.key`` (a join found by value overlap)."""
    KIND = "key_overlap"
    column: str = ""
    target: str = ""
    key: str = ""


@dataclass(kw_only=True)
class BracketMeta(ProbeMeta):
    """A measure's average per quarter of the rows ranked by an amount (``by``): does it move with the amount?"""
    KIND = "bracket"
    by: str = ""       # the column the rows are ranked by (amount, cost)
    measure: str = ""  # the measure averaged per bracket (a column, or the table's interval in days)
    label: str = ""    # the measure in words (processing time)


MODELS: dict[str, type[ProbeMeta]] = {m.KIND: m for m in (
    ProfileMeta, BreakdownMeta, JoinedBreakdownMeta, SeasonMeta, FunnelMeta, RateSeriesMeta, SeriesMeta,
    DurationBreakdownMeta, DurationSeriesMeta, SegmentSeriesMeta, EndBeforeStartMeta, ConcentrationMeta,
    CrosstabMeta, CorrelationMeta, RetentionMeta, StatusSwitchMeta, NullReasonMeta, RankBreakdownMeta,
    NullStatusMeta, KeyOverlapMeta, BracketMeta)}


def parse(probe: dict) -> ProbeMeta | None:
    """The typed model of a stored ``step.probe`` (None for a kind no detector knows)."""
    model = MODELS.get((probe or {}).get("kind", ""))
    return model.of({k: v for k, v in probe.items() if k not in ("kind", "table")}) if model else None
