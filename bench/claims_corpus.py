"""The planted-claims corpus of bench/verification.py: metric definitions on the two demo warehouses,
each with the SQL that computes it for any stated segment, baseline and period, and the claims an
analysis step would write about it, true and wrong in every way.

A definition's ``build(segment_sql, baseline_sql, period_sql)`` returns a query with the columns
segment_value[, baseline_value]: what a verifier that writes correct SQL for the claim's definition
runs. ``wrong(...)`` is a plausible wrong query for the same definition (the period filter dropped,
the baseline taken over everything, rows counted instead of distinct entities).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

Pair = tuple[str, str]  # (words, SQL)


@dataclass
class Definition:
    measure: str
    metric: str                      # count | rate | share | average | change
    entity: str
    segment: Pair
    baseline: Pair | None
    period: Pair | None
    build: Callable[[str, str | None, str | None], str]
    alt_segment: Pair | None = None
    alt_period: Pair | None = None
    wrong_baseline: Pair | None = None
    wrong: Callable[[str, str | None, str | None], str] | None = None


def rate(source: str, num: str, den: str) -> Callable[[str, str | None, str | None], str]:
    """num-events per den-events on the segment (and baseline), within the period."""
    def build(seg: str, base: str | None, per: str | None) -> str:
        def side(cond: str, name: str) -> str:
            return (f"count(*) FILTER (WHERE ({cond}) AND {num}) * 1.0 / "
                    f"nullif(count(*) FILTER (WHERE ({cond}) AND {den}), 0) AS {name}")
        cols = [side(seg, "segment_value")] + ([side(base, "baseline_value")] if base else [])
        return f"SELECT {', '.join(cols)} FROM {source} WHERE {per or 'TRUE'}"
    build.sloppy = rate(source, num, "TRUE") if den != "TRUE" else None  # per event of any kind
    return build


def avg_of(source: str, expr: str) -> Callable[[str, str | None, str | None], str]:
    def build(seg: str, base: str | None, per: str | None) -> str:
        cols = [f"avg({expr}) FILTER (WHERE {seg}) AS segment_value"]
        if base:
            cols.append(f"avg({expr}) FILTER (WHERE {base}) AS baseline_value")
        return f"SELECT {', '.join(cols)} FROM {source} WHERE {per or 'TRUE'}"

    def sloppy(seg: str, base: str | None, per: str | None) -> str:  # the median for the mean
        return build(seg, base, per).replace("avg(", "median(")
    build.sloppy = sloppy
    return build


def count_of(source: str, what: str) -> Callable[[str, str | None, str | None], str]:
    def build(seg: str, base: str | None, per: str | None) -> str:
        return f"SELECT {what} AS segment_value FROM {source} WHERE ({seg}) AND {per or 'TRUE'}"
    # rows for distinct entities; an inner query counted without its grouping
    build.sloppy = (count_of(source, what.replace("count(DISTINCT ", "count(")) if "DISTINCT" in what else None)
    return build


def share_of(source: str, expr: str) -> Callable[[str, str | None, str | None], str]:
    """The segment's part of the total of expr (within the period)."""
    def build(seg: str, base: str | None, per: str | None) -> str:
        return (f"SELECT sum({expr}) FILTER (WHERE {seg}) * 1.0 / nullif(sum({expr}), 0) AS segment_value "
                f"FROM {source} WHERE {per or 'TRUE'}")

    def sloppy(seg: str, base: str | None, per: str | None) -> str:  # the period on the part, not the whole
        return (f"SELECT sum({expr}) FILTER (WHERE ({seg}) AND {per or 'TRUE'}) * 1.0 / nullif(sum({expr}), 0) "
                f"AS segment_value FROM {source}")
    build.sloppy = sloppy
    return build


def monthly(source: str, expr: str, time_col: str) -> Callable[[str, str | None, str | None], str]:
    """Average monthly total of expr on the segment and on the baseline (a change over periods)."""
    def build(seg: str, base: str | None, per: str | None) -> str:
        def side(cond: str, name: str) -> str:
            return (f"sum({expr}) FILTER (WHERE {cond}) / nullif(count(DISTINCT date_trunc('month', {time_col})) "
                    f"FILTER (WHERE {cond}), 0) AS {name}")
        cols = [side(seg, "segment_value")] + ([side(base, "baseline_value")] if base else [])
        return f"SELECT {', '.join(cols)} FROM {source} WHERE {per or 'TRUE'}"

    def sloppy(seg: str, base: str | None, per: str | None) -> str:  # totals, not monthly averages
        return build(seg, base, per).replace(f"/ nullif(count(DISTINCT date_trunc('month', {time_col}))", "/ nullif(1")
    build.sloppy = sloppy
    return build


def _drop_period(build):
    """Wrong SQL: the period filter forgotten, the baseline taken over every row."""
    return lambda seg, base, per: build(seg, "TRUE" if base else None, None)


ECOMMERCE = [
    Definition("cart-to-purchase conversion", "rate", "events", ("android", "platform = 'android'"),
               ("web and ios", "platform <> 'android'"),
               ("since 2026-07-01", "event_at >= TIMESTAMP '2026-07-01'"),
               rate("events", "event_type = 'purchase'", "event_type = 'add_to_cart'"),
               alt_segment=("ios", "platform = 'ios'"),
               alt_period=("before 2026-07-01", "event_at < TIMESTAMP '2026-07-01'"),
               wrong_baseline=("all platforms", "TRUE")),
    Definition("remove-from-cart rate", "rate", "events", ("furniture", "p.category = 'furniture'"),
               ("other categories", "p.category <> 'furniture'"), None,
               rate("events e JOIN products p USING (product_id)", "e.event_type = 'remove_from_cart'",
                    "e.event_type = 'add_to_cart'"),
               alt_segment=("toys", "p.category = 'toys'"), wrong_baseline=("all categories", "TRUE")),
    Definition("monthly electronics revenue", "change", "order items",
               ("electronics since 2026-07-01", "p.category = 'electronics' AND o.ordered_at >= TIMESTAMP '2026-07-01'"),
               ("electronics before 2026-07-01", "p.category = 'electronics' AND o.ordered_at < TIMESTAMP '2026-07-01'"),
               None,
               monthly("order_items oi JOIN products p USING (product_id) JOIN orders o USING (order_id)",
                       "oi.quantity * oi.unit_price", "o.ordered_at"),
               alt_segment=("fashion since 2026-07-01", "p.category = 'fashion' AND o.ordered_at >= TIMESTAMP '2026-07-01'"),
               wrong_baseline=("all categories before 2026-07-01", "o.ordered_at < TIMESTAMP '2026-07-01'")),
    Definition("repeat-order rate", "rate", "customers", ("paid_social", "acquisition_channel = 'paid_social'"),
               ("other channels", "acquisition_channel <> 'paid_social'"), None,
               avg_of("(SELECT c.customer_id, c.acquisition_channel, count(*) AS n FROM customers c "
                      "JOIN orders o USING (customer_id) GROUP BY 1, 2) per_customer",
                      "CASE WHEN n >= 2 THEN 1.0 ELSE 0.0 END"),
               alt_segment=("email", "acquisition_channel = 'email'"), wrong_baseline=("all channels", "TRUE")),
    Definition("average order-item value", "average", "order items",
               ("electronics", "p.category = 'electronics'"), ("other categories", "p.category <> 'electronics'"),
               None, avg_of("order_items oi JOIN products p USING (product_id)", "oi.quantity * oi.unit_price"),
               alt_segment=("books", "p.category = 'books'"), wrong_baseline=("all categories", "TRUE")),
    Definition("share of orders", "share", "orders", ("paid_social customers", "c.acquisition_channel = 'paid_social'"),
               None, ("since 2026-07-01", "o.ordered_at >= TIMESTAMP '2026-07-01'"),
               share_of("orders o JOIN customers c USING (customer_id)", "1"),
               alt_segment=("email customers", "c.acquisition_channel = 'email'"),
               alt_period=("before 2026-03-01", "o.ordered_at < TIMESTAMP '2026-03-01'")),
    Definition("customers who added to cart", "count", "customers", ("android", "platform = 'android'"), None,
               ("since 2026-07-01", "event_at >= TIMESTAMP '2026-07-01'"),
               count_of("events", "count(DISTINCT customer_id) FILTER (WHERE event_type = 'add_to_cart')"),
               alt_segment=("web", "platform = 'web'"),
               alt_period=("before 2026-03-01", "event_at < TIMESTAMP '2026-03-01'"),
               wrong=lambda seg, base, per: count_of("events", "count(*)")(seg, None, per)),
    Definition("electronics order items", "count", "order items", ("electronics", "p.category = 'electronics'"),
               None, ("since 2026-07-01", "o.ordered_at >= TIMESTAMP '2026-07-01'"),
               count_of("order_items oi JOIN products p USING (product_id) JOIN orders o USING (order_id)", "count(*)"),
               alt_segment=("furniture", "p.category = 'furniture'"),
               alt_period=("before 2026-07-01", "o.ordered_at < TIMESTAMP '2026-07-01'"),
               wrong=lambda seg, base, per: count_of("order_items oi JOIN products p USING (product_id) JOIN orders o "
                                                     "USING (order_id)", "count(DISTINCT o.customer_id)")(seg, None, per)),
    Definition("products without a category", "count", "products", ("no category", "category IS NULL"), None, None,
               count_of("products", "count(*)"), alt_segment=("books", "category = 'books'"),
               wrong=lambda seg, base, per: count_of("products", "count(*)")("TRUE", None, None)),
    Definition("single-order customers", "count", "customers", ("paid_social", "acquisition_channel = 'paid_social'"),
               None, None,
               count_of("(SELECT c.customer_id, c.acquisition_channel FROM customers c JOIN orders o USING (customer_id) "
                        "GROUP BY 1, 2 HAVING count(*) = 1) single", "count(*)"),
               alt_segment=("organic", "acquisition_channel = 'organic'"),
               wrong=lambda seg, base, per: count_of("customers", "count(*)")(seg, None, None)),
]

GAMING = [
    Definition("level win rate", "rate", "level attempts", ("level 42", "level = 42"),
               ("levels 40-44 except 42", "level BETWEEN 40 AND 44 AND level <> 42"), None,
               avg_of("level_attempts", "CASE WHEN won THEN 1.0 ELSE 0.0 END"),
               alt_segment=("level 41", "level = 41"), wrong_baseline=("every level", "TRUE")),
    Definition("purchase failure rate", "rate", "purchases", ("ios", "platform = 'ios'"),
               ("android", "platform = 'android'"), ("since 2026-05-15", "purchased_at >= TIMESTAMP '2026-05-15'"),
               avg_of("purchases", "CASE WHEN status = 'failed' THEN 1.0 ELSE 0.0 END"),
               alt_period=("before 2026-05-15", "purchased_at < TIMESTAMP '2026-05-15'"),
               wrong_baseline=("all platforms", "TRUE")),
    Definition("ios purchase failure rate", "change", "purchases",
               ("ios since 2026-05-15", "platform = 'ios' AND purchased_at >= TIMESTAMP '2026-05-15'"),
               ("ios before 2026-05-15", "platform = 'ios' AND purchased_at < TIMESTAMP '2026-05-15'"), None,
               avg_of("purchases", "CASE WHEN status = 'failed' THEN 1.0 ELSE 0.0 END"),
               alt_segment=("android since 2026-05-15", "platform = 'android' AND purchased_at >= TIMESTAMP '2026-05-15'"),
               wrong_baseline=("all purchases before 2026-05-15", "purchased_at < TIMESTAMP '2026-05-15'")),
    Definition("day-1 return rate", "rate", "players", ("tiktok_ads", "acquisition_channel = 'tiktok_ads'"),
               ("other channels", "acquisition_channel <> 'tiktok_ads'"), None,
               avg_of("(SELECT p.player_id, p.acquisition_channel, max(CASE WHEN s.started_at >= p.installed_at + "
                      "INTERVAL 1 DAY THEN 1.0 ELSE 0.0 END) AS returned FROM players p LEFT JOIN sessions s "
                      "USING (player_id) GROUP BY 1, 2) r", "returned"),
               alt_segment=("organic", "acquisition_channel = 'organic'"), wrong_baseline=("all channels", "TRUE")),
    Definition("average session length in seconds", "average", "sessions", ("BR", "p.country = 'BR'"),
               ("other countries", "p.country <> 'BR'"), None,
               avg_of("sessions s JOIN players p USING (player_id)", "s.duration_s"),
               alt_segment=("US", "p.country = 'US'"), wrong_baseline=("players in BR and US", "p.country IN ('BR', 'US')")),
    Definition("share of purchase revenue", "share", "purchases", ("coins_large", "product = 'coins_large'"), None,
               ("succeeded purchases", "status = 'succeeded'"), share_of("purchases", "price_usd"),
               alt_segment=("coins_small", "product = 'coins_small'"),
               alt_period=("all purchases, failed ones too", "TRUE")),
    Definition("failed ios purchases", "count", "purchases", ("ios, failed", "platform = 'ios' AND status = 'failed'"),
               None, ("since 2026-05-15", "purchased_at >= TIMESTAMP '2026-05-15'"), count_of("purchases", "count(*)"),
               alt_segment=("android, failed", "platform = 'android' AND status = 'failed'"),
               alt_period=("before 2026-05-15", "purchased_at < TIMESTAMP '2026-05-15'")),
    Definition("players in a country", "count", "players", ("BR", "country = 'BR'"), None, None,
               count_of("players", "count(*)"), alt_segment=("US", "country = 'US'"),
               wrong=lambda seg, base, per: count_of("players", "count(*)")("TRUE", None, None)),
    Definition("sessions with negative duration", "count", "sessions", ("negative duration", "duration_s < 0"), None,
               None, count_of("sessions", "count(*)"), alt_segment=("longer than an hour", "duration_s > 3600"),
               wrong=lambda seg, base, per: count_of("sessions", "count(DISTINCT player_id)")(seg, None, None)),
    Definition("players stuck at a level", "count", "players", ("level 42", "level = 42"), None, None,
               count_of("(SELECT player_id, level FROM level_attempts GROUP BY 1, 2 HAVING NOT bool_or(won)) stuck",
                        "count(*)"),
               alt_segment=("level 30", "level = 30"),
               wrong=lambda seg, base, per: count_of("level_attempts", "count(*)")(seg, None, None)),
    Definition("tiktok_ads players", "count", "players", ("tiktok_ads", "acquisition_channel = 'tiktok_ads'"), None,
               None, count_of("players", "count(*)"), alt_segment=("google_ads", "acquisition_channel = 'google_ads'"),
               wrong=lambda seg, base, per: count_of("sessions s JOIN players p USING (player_id)", "count(*)")(
                   seg, None, None)),
]

DEFINITIONS = {"ecommerce": ECOMMERCE, "gaming": GAMING}


def wrong_sql(d: Definition, seg: str, base: str | None, per: str | None) -> str:
    """A query that leaves a stated condition out (or counts the wrong thing)."""
    return (d.wrong or _drop_period(d.build))(seg, base, per)


def sloppy_sql(d: Definition, seg: str, base: str | None, per: str | None) -> str | None:
    """A query that applies every stated condition and still computes the wrong metric (the median
    for the mean, rows for distinct entities, every event as the denominator, totals for monthly
    averages); None when the definition has no such variant."""
    alt = getattr(d.build, "sloppy", None)
    return alt(seg, base, per) if alt else None
