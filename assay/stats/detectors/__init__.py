"""Detectors: candidate facts from probe results, scored by significance and effect size.

Pure functions over pandas frames; each candidate carries the SQL that counts the entities it is
about, so its affected count is computed by the warehouse and verified by the same verifier as an
LLM's claim.

- ``candidate``: the candidate model and its kinds (``Kind``)
- ``significance``: the tests and effect sizes (ANOVA, Welch, change points, trends, BH correction)
- ``countsql``: the count-SQL builder (the table, or the fact table joined to a dimension)
- ``wording``: numbers, shares and calendar values as they read
- families: ``segments``, ``series``, ``funnels``, ``relations``, ``quality``
- ``registry``: probe kind -> detector, and ``detect_probe`` (a stored probe and its frame -> candidates)
- ``scoring``: the multiple-testing correction, scores and severity
"""

from .candidate import ARTIFACT, DESCRIPTIVE_KINDS, NO_EFFECT, Candidate, Kind, no_effect
from .funnels import NEGATIVE_OUTCOMES, funnel_outliers, funnel_pairs, rate_series_changes
from .quality import (NULL_EXPLAINED, SWITCH_TOLERANCE_DAYS, end_before_start, null_reason, null_status_reason,
                      quality_from_profile, status_switch)
from .registry import DETECTORS, detect_probe
from .relations import MIN_CORRELATION, concentration, correlations, retention_outliers
from .scoring import GOAL_RELEVANT, LOW_SUPPORT_ROWS, NO_EFFECT_RELEVANT, _base_severity, score, severity
from .segments import (DEFINITION_ETA2, bracket_effects, MIN_DURATION_SEGMENT_N, MIN_EFFECT_GROUP_N, MIN_UNASKED_EFFECT, ROBUST_Z,
                       SMALL_SPREAD_P,
                       crosstab_concentration, dominant_segment, duration_outliers, group_effects, kruskal_effects,
                       kruskal_from_ranks, mean_outliers, same_label, segment_outliers)
from .series import PERIOD_MIN_REL, duration_series, segment_series_changes, segment_trends, series_changes
from .significance import (CHANGE_MIN_SIDE, anova_effect, anova_p, benjamini_hochberg, change_point, correlation_p,
                           cramers_v, departs_in_its_direction, gini_from_ranks, robust_z, step_beats_line, trend,
                           two_prop_p)
from .thresholds import CHANGE_MIN_REL, MIN_BEHAVIOUR_ROWS, MIN_REL_GAP, MIN_SEGMENT_N, NO_EFFECT_P
from .wording import calendar_label, subject

__all__ = [
    "ARTIFACT", "CHANGE_MIN_REL", "CHANGE_MIN_SIDE", "DEFINITION_ETA2", "DESCRIPTIVE_KINDS", "DETECTORS",
    "GOAL_RELEVANT", "LOW_SUPPORT_ROWS", "MIN_BEHAVIOUR_ROWS", "MIN_CORRELATION", "MIN_DURATION_SEGMENT_N",
    "MIN_EFFECT_GROUP_N", "MIN_REL_GAP", "MIN_SEGMENT_N", "MIN_UNASKED_EFFECT", "SMALL_SPREAD_P", "NEGATIVE_OUTCOMES", "NO_EFFECT",
    "NO_EFFECT_P", "NO_EFFECT_RELEVANT", "NULL_EXPLAINED", "PERIOD_MIN_REL", "ROBUST_Z", "SWITCH_TOLERANCE_DAYS",
    "Candidate", "Kind", "_base_severity", "anova_effect", "bracket_effects", "anova_p", "benjamini_hochberg", "calendar_label", "subject",
    "change_point", "concentration", "correlation_p", "correlations", "cramers_v", "crosstab_concentration",
    "detect_probe", "dominant_segment", "duration_outliers", "duration_series", "end_before_start",
    "funnel_outliers", "funnel_pairs", "gini_from_ranks", "group_effects", "mean_outliers", "no_effect",
    "null_reason", "null_status_reason", "kruskal_effects", "kruskal_from_ranks", "quality_from_profile", "rate_series_changes", "departs_in_its_direction", "retention_outliers",
    "robust_z", "same_label", "score", "segment_outliers", "segment_series_changes", "segment_trends", "series_changes",
    "severity", "status_switch", "step_beats_line", "trend", "two_prop_p",
]
