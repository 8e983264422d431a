"""Which detectors read which probe: the registry from probe kind to detector family, and the one
entry point from a stored probe and its result frame to candidates."""

from __future__ import annotations

from typing import Callable, Iterable

import pandas as pd

from ..probes import GroupMeta, ProbeMeta, parse
from .candidate import Candidate, Kind
from .funnels import funnel_outliers, rate_series_changes
from .quality import end_before_start, null_reason, null_status_reason, quality_from_profile, status_switch
from .relations import concentration, correlations, retention_outliers
from .segments import (bracket_effects, crosstab_concentration, dominant_segment, duration_outliers, group_effects, kruskal_effects,
                       mean_outliers, segment_outliers)
from .series import duration_series, segment_series_changes, series_changes

# detector(frame, typed meta, step, table name, table reference) -> candidates
Detector = Callable[[pd.DataFrame, ProbeMeta, int, str, str], list[Candidate]]


def _breakdown(df: pd.DataFrame, meta: GroupMeta, step: int, table: str, ref: str) -> list[Candidate]:
    out = (group_effects(df, meta.dim, meta, step, table, ref)
           + segment_outliers(df, meta.dim, meta, step, table, ref)
           + dominant_segment(df, meta.dim, meta, step, table, ref))
    if meta.small and not meta.catalogue:
        # an operational table too small for robust z-scores: Welch's test on each measure's average
        for m in [c for c in df.columns if c.startswith("avg_")]:
            out += mean_outliers(df, meta.dim, m, m[4:].replace("_", " "), "", None, step, table, ref)
    if getattr(meta, "state", False):
        # "most appointments are completed" is the outcome rates' business (the funnel probes), and as a finding
        # of its own it took the state's slot from what the state says about the rows ("no_show has a much higher
        # average lead time"; an InsightBench task's "Completed goals have a higher share of Critical priority")
        out = [c for c in out if c.kind != Kind.DOMINANT_SEGMENT and c.measure not in ("", "n", "entities")]
    return out


def _joined_breakdown(df: pd.DataFrame, meta: GroupMeta, step: int, table: str, ref: str) -> list[Candidate]:
    return group_effects(df, meta.dim, meta, step, table, ref) + segment_outliers(df, meta.dim, meta, step, table, ref)


def _season(df: pd.DataFrame, meta: GroupMeta, step: int, table: str, ref: str) -> list[Candidate]:
    return group_effects(df, meta.dim, meta, step, table, ref)


DETECTORS: dict[str, Detector] = {
    "breakdown": _breakdown,
    "season": _season,
    "joined_breakdown": _joined_breakdown,
    "duration_breakdown": duration_outliers,
    "duration_series": duration_series,
    "correlation": correlations,
    "crosstab": crosstab_concentration,
    "funnel": funnel_outliers,
    "rate_series": rate_series_changes,
    "series": series_changes,
    "segment_series": segment_series_changes,
    "concentration": concentration,
    "retention": retention_outliers,
    "end_before_start": end_before_start,
    "status_switch": status_switch,
    "null_reason": null_reason,
    "null_status": null_status_reason,
    "rank_breakdown": kruskal_effects,
    "bracket": bracket_effects,
}


def detect_probe(probe: dict, df: pd.DataFrame, step: int, ref_of: Callable[[str], str],
                 columns: Iterable[str] = ()) -> list[Candidate]:
    """Candidates from one probe's result. ``probe`` is the stored ``step.probe``; ``ref_of`` quotes a
    table's fully qualified name for SQL; ``columns`` are the probed table's (for a profile)."""
    kind, table = probe.get("kind"), probe.get("table", "")
    meta = parse(probe)
    if meta is None or not table or df is None or df.empty:
        return []
    ref = ref_of(table)
    join = getattr(meta, "join", None)
    if join is not None:
        join.ref = ref_of(join.table)
        if join.via is not None:
            join.via.ref = ref_of(join.via.table)
    if kind == "retention":
        meta.activity_ref = ref_of(meta.activity_table)
    name = table.split(".", 1)[1]
    if "month" in df:
        df["month"] = pd.to_datetime(df["month"])
    if kind == "profile":
        out = quality_from_profile(df.iloc[0].to_dict(), meta, step, name, ref, list(columns))
    else:
        detector = DETECTORS.get(kind)
        out = detector(df, meta, step, name, ref) if detector else []
    if meta.catalogue:
        for c in out:
            c.catalogue = True
    return out
