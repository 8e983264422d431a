"""The candidate fact a detector proposes, and the kinds of fact there are."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Kind(StrEnum):
    """What a candidate states. A ``str`` enum: it compares equal to, and stores as, its value."""
    OUTLIER_SEGMENT = "outlier_segment"    # one segment far from the others (robust z)
    GROUP_EFFECT = "group_effect"          # a measure's spread between the values of a dimension
    MEAN_OUTLIER = "mean_outlier"          # one segment's average against the rest (Welch)
    DOMINANT_SEGMENT = "dominant_segment"  # values holding far more rows than the others
    CROSSTAB = "crosstab"                  # one value concentrated within a segment of another dimension
    CHANGE_POINT = "change_point"          # a level shift in a series
    TREND = "trend"                        # a steady change over time
    SPIKE = "spike"                        # a burst of a few periods far above the level, then back
    FUNNEL_DROP = "funnel_drop"            # a worse step conversion (or more failures) in a segment
    FUNNEL_GAIN = "funnel_gain"
    CONCENTRATION = "concentration"        # the top entities hold most of a measure
    RETENTION_DROP = "retention_drop"
    CORRELATION = "correlation"
    DATA_QUALITY = "data_quality"
    NULL_REASON = "null_reason"            # a measure empty because the event did not happen
    ARTIFACT = "artifact"                  # how the data was generated or loaded
    NO_EFFECT = "no_effect"                # a hypothesis the data does not support: part of a goal's answer


NO_EFFECT = Kind.NO_EFFECT
ARTIFACT = Kind.ARTIFACT
DESCRIPTIVE_KINDS = (Kind.DOMINANT_SEGMENT, Kind.CROSSTAB)  # reported for goals only


@dataclass
class Candidate:
    kind: str
    name: str
    description: str
    table: str
    step: int
    effect: float          # 0..1, relative size of the effect
    p_value: float
    count_sql: str | None
    segment: str | None = None
    indicators: list[str] = field(default_factory=list)
    score: float = 0.0
    q_value: float = 1.0
    area_text: str = ""
    affected: int | None = None
    measure: str = ""      # what a segment finding measures (one fact per segment value and measure)
    support: int | None = None          # rows the finding stands on (with a value of its measure)
    support_share: float | None = None  # their share of the rows it looked at
    relevance: float = 0.0              # similarity to the run's goal (set by the analyst)
    catalogue: bool = False             # about a small reference table (products, airports)
    groups: list[str] = field(default_factory=list)  # a spread effect's highest and lowest groups
    series: str = ""  # the probe's column a whole-table series finding reads (its claim re-derives it)

    def __post_init__(self) -> None:
        self.kind = Kind(self.kind)  # a stored candidate comes back with a plain string

    def key(self) -> tuple:
        return (self.kind, self.table, self.segment, self.name)


def no_effect(name: str, description: str, table: str, step: int, p: float, segment: str, area_text: str) -> Candidate:
    return Candidate(kind=NO_EFFECT, name=name, description=description, table=table, step=step, effect=0.0,
                     p_value=p, count_sql=None, segment=segment, area_text=area_text)
