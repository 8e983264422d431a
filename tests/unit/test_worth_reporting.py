"""Which scored candidates are findings (``stats.analyst.worth_reporting``), with and without a goal."""

from __future__ import annotations

from assay.stats import detectors as D
from assay.stats.analyst import worth_reporting


def spread(name: str, effect: float, p: float) -> D.Candidate:
    return D.Candidate(kind="group_effect", name=name, description="", table="refunds", step=1, effect=effect,
                       p_value=p, count_sql=None, measure="avg_amount")


def test_asked_a_small_spread_must_be_clear_of_chance():
    """A new user's goal run (session 27) reported "The average amount peaks at 11:00 (238.6)" over hours that were
    uniformly random (eta² 0.014, p = 0.019) as the top answer to the goal. Asked, a spread below the unasked
    effect size is reported when its p-value is at most SMALL_SPREAD_P; unasked, only a large one, as before."""
    noise = spread("The average amount peaks at 11:00 (238.6)", 0.12, 0.019)
    small = spread("The average amount peaks on Mondays", 0.12, 1e-6)
    large = spread("furniture has the highest average price", D.MIN_UNASKED_EFFECT + 0.1, 0.019)
    kept = worth_reporting([noise, small, large], "Why do refunds rise in some regions?")
    assert [c.name for c in kept] == [small.name, large.name]
    assert [c.name for c in worth_reporting([noise, small, large], "")] == [large.name]


def test_a_volume_trend_is_a_finding_only_when_asked():
    trend = D.Candidate(kind="trend", name="The monthly number of events is increasing over time", description="",
                        table="events", step=1, effect=0.5, p_value=1e-9, count_sql=None, measure="n")
    assert worth_reporting([trend], "") == []
    assert worth_reporting([trend], "How does activity change over time?") == [trend]
