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
    metric: str                      # count | rate | share | average | change | fit | sum
    entity: str
    segment: Pair
    baseline: Pair | None
    period: Pair | None
    build: Callable[[str, str | None, str | None], str]
    alt_segment: Pair | None = None
    alt_period: Pair | None = None
    wrong_baseline: Pair | None = None
    wrong: Callable[[str, str | None, str | None], str] | None = None
    # a fit: (statistic, y as (words, SQL), x as (words, SQL)); build() computes that statistic
    fit: tuple[str, Pair, Pair] | None = None
    # a share's whole (words, SQL condition); build() takes it as a 4th argument, alt_whole is another whole
    whole: Pair | None = None
    alt_whole: Pair | None = None
    # a sum: the summed expression as SQL (the claim's sum_sql); build() computes its total
    summed: str | None = None


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


def fit_of(source: str, stat: str, y: str, x: str, *, inner_period: bool = False
           ) -> Callable[[str, str | None, str | None], str]:
    """The statistic (slope | r | r2) of y on x over the segment's (and baseline's) rows, within the period; with
    ``inner_period`` the source is a subquery whose text holds ``{period}`` (a daily series built within it)."""
    fn = {"slope": "regr_slope", "r": "corr", "r2": "regr_r2"}[stat]

    def build(seg: str, base: str | None, per: str | None, *, swap: bool = False, func: str | None = None) -> str:
        a, b = (x, y) if swap else (y, x)
        f = func or fn
        cols = [f"{f}({a}, {b}) FILTER (WHERE {seg}) AS segment_value"]
        if base:
            cols.append(f"{f}({a}, {b}) FILTER (WHERE {base}) AS baseline_value")
        if inner_period:
            return f"SELECT {', '.join(cols)} FROM {source.format(period=per or 'TRUE')}"
        return f"SELECT {', '.join(cols)} FROM {source} WHERE {per or 'TRUE'}"

    def sloppy(seg: str, base: str | None, per: str | None) -> str:
        # y and x swapped for a slope (x on y), r where R² is asked and R² where r is
        if stat == "slope":
            return build(seg, base, per, swap=True)
        return build(seg, base, per, func="corr" if stat == "r2" else "regr_r2")
    build.sloppy = sloppy
    return build


def sum_of(source: str, expr: str) -> Callable[[str, str | None, str | None], str]:
    """The total of expr over the segment's (and baseline's) rows, within the period (session 12: a sum metric)."""
    def build(seg: str, base: str | None, per: str | None, *, what: str | None = None) -> str:
        agg = what or f"sum({expr})"
        cols = [f"{agg} FILTER (WHERE {seg}) AS segment_value"]
        if base:
            cols.append(f"{agg} FILTER (WHERE {base}) AS baseline_value")
        return f"SELECT {', '.join(cols)} FROM {source} WHERE {per or 'TRUE'}"

    def sloppy(seg: str, base: str | None, per: str | None) -> str:
        # another expression summed: the last factor only (the unit price without the quantity), or the rows counted
        last = expr.split("*")[-1].strip()
        return build(seg, base, per, what=f"sum({last})" if last != expr.strip() else "count(*)")
    build.sloppy = sloppy
    return build


def share_of_whole(source: str) -> Callable[..., str]:
    """The segment's part of the rows of the stated whole (within the period)."""
    def build(seg: str, base: str | None, per: str | None, whole: str | None = None) -> str:
        return (f"SELECT count(*) FILTER (WHERE {seg}) * 1.0 / nullif(count(*), 0) AS segment_value "
                f"FROM {source} WHERE ({per or 'TRUE'}) AND ({whole or 'TRUE'})")

    def sloppy(seg: str, base: str | None, per: str | None, whole: str | None = None) -> str:
        # the whole applied to the part only: a share of every row
        return (f"SELECT count(*) FILTER (WHERE ({seg}) AND ({whole or 'TRUE'})) * 1.0 / nullif(count(*), 0) "
                f"AS segment_value FROM {source} WHERE {per or 'TRUE'}")
    build.sloppy = sloppy
    build.takes_whole = True
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
    # fits (session 11): a slope between categories, an R² of one column on another, a daily trend
    Definition("order-item revenue per unit of quantity", "fit", "order items",
               ("electronics", "p.category = 'electronics'"), ("other categories", "p.category <> 'electronics'"),
               None, fit_of("order_items oi JOIN products p USING (product_id)", "slope",
                            "oi.quantity * oi.unit_price", "oi.quantity"),
               alt_segment=("books", "p.category = 'books'"), wrong_baseline=("all categories", "TRUE"),
               fit=("slope", ("item revenue", "oi.quantity * oi.unit_price"), ("quantity", "oi.quantity"))),
    Definition("order total following its item revenue", "fit", "orders", ("android", "o.platform = 'android'"),
               None, ("since 2026-07-01", "o.ordered_at >= TIMESTAMP '2026-07-01'"),
               fit_of("orders o JOIN order_items oi USING (order_id)", "r2", "o.total_amount",
                      "oi.quantity * oi.unit_price"),
               alt_segment=("web", "o.platform = 'web'"),
               alt_period=("before 2026-03-01", "o.ordered_at < TIMESTAMP '2026-03-01'"),
               fit=("r2", ("order total", "o.total_amount"), ("item revenue", "oi.quantity * oi.unit_price"))),
    Definition("daily orders trend", "fit", "orders", ("android", "platform = 'android'"),
               ("other platforms", "platform <> 'android'"),
               ("since 2026-07-01", "ordered_at >= TIMESTAMP '2026-07-01'"),
               fit_of("(SELECT platform, date_diff('day', DATE '2026-01-01', ordered_at::DATE) AS day, count(*) AS n "
                      "FROM orders WHERE {period} GROUP BY 1, 2) daily", "slope", "n", "day", inner_period=True),
               alt_segment=("web", "platform = 'web'"), wrong_baseline=("all platforms", "TRUE"),
               fit=("slope", ("orders per day", "n"), ("day number", "day"))),
    # sums (session 12): revenue as a total of item revenue, order totals
    Definition("item revenue", "sum", "order items", ("paid_social customers", "c.acquisition_channel = 'paid_social'"),
               ("other channels", "c.acquisition_channel <> 'paid_social'"),
               ("since 2026-07-01", "o.ordered_at >= TIMESTAMP '2026-07-01'"),
               sum_of("order_items oi JOIN orders o USING (order_id) JOIN customers c USING (customer_id)",
                      "oi.quantity * oi.unit_price"),
               alt_segment=("email customers", "c.acquisition_channel = 'email'"),
               alt_period=("before 2026-03-01", "o.ordered_at < TIMESTAMP '2026-03-01'"),
               wrong_baseline=("all channels", "TRUE"), summed="oi.quantity * oi.unit_price"),
    Definition("android order revenue", "sum", "orders", ("android", "platform = 'android'"), None,
               ("since 2026-07-01", "ordered_at >= TIMESTAMP '2026-07-01'"), sum_of("orders", "total_amount"),
               alt_segment=("ios", "platform = 'ios'"),
               alt_period=("before 2026-07-01", "ordered_at < TIMESTAMP '2026-07-01'"), summed="total_amount"),
    # a share of a stated whole (session 11)
    Definition("share of completed orders", "share", "orders", ("android", "platform = 'android'"), None,
               ("since 2026-07-01", "ordered_at >= TIMESTAMP '2026-07-01'"), share_of_whole("orders"),
               alt_segment=("web", "platform = 'web'"),
               whole=("completed orders", "status = 'completed'"), alt_whole=("refunded orders", "status = 'refunded'")),
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
    # fits (session 11): a correlation whose sign differs between two level ranges, an R² of a logged duration on
    # its own timestamps
    Definition("level win rate against level number", "fit", "levels", ("levels 1-40", "level <= 40"),
               ("levels 41 and above", "level > 40"), None,
               fit_of("(SELECT level, avg(CASE WHEN won THEN 1.0 ELSE 0.0 END) AS win_rate FROM level_attempts "
                      "GROUP BY 1) per_level", "r", "win_rate", "level"),
               alt_segment=("levels 1-20", "level <= 20"), wrong_baseline=("every level", "TRUE"),
               fit=("r", ("win rate", "win_rate"), ("level", "level"))),
    Definition("win rate change per level", "fit", "levels", ("levels 1-40", "level <= 40"),
               ("levels 41 and above", "level > 40"), None,
               fit_of("(SELECT level, avg(CASE WHEN won THEN 1.0 ELSE 0.0 END) AS win_rate FROM level_attempts "
                      "GROUP BY 1) per_level", "slope", "win_rate", "level"),
               alt_segment=("levels 30-50", "level BETWEEN 30 AND 50"), wrong_baseline=("every level", "TRUE"),
               fit=("slope", ("win rate", "win_rate"), ("level", "level"))),
    Definition("logged duration following the session's timestamps", "fit", "sessions", ("BR", "p.country = 'BR'"),
               ("other countries", "p.country <> 'BR'"), None,
               fit_of("sessions s JOIN players p USING (player_id)", "r2", "s.duration_s",
                      "epoch(s.ended_at) - epoch(s.started_at)"),
               alt_segment=("US", "p.country = 'US'"),
               fit=("r2", ("logged duration", "s.duration_s"), ("end minus start, in seconds",
                                                                "epoch(s.ended_at) - epoch(s.started_at)"))),
    # sums (session 12): purchase revenue, time played
    Definition("succeeded purchase revenue in USD", "sum", "purchases",
               ("ios", "platform = 'ios' AND status = 'succeeded'"),
               ("android", "platform = 'android' AND status = 'succeeded'"),
               ("since 2026-05-15", "purchased_at >= TIMESTAMP '2026-05-15'"), sum_of("purchases", "price_usd"),
               alt_period=("before 2026-05-15", "purchased_at < TIMESTAMP '2026-05-15'"),
               wrong_baseline=("all platforms", "status = 'succeeded'"), summed="price_usd"),
    Definition("hours played", "sum", "sessions", ("BR", "p.country = 'BR'"), None, None,
               sum_of("sessions s JOIN players p USING (player_id)", "s.duration_s / 3600.0"),
               alt_segment=("US", "p.country = 'US'"), summed="s.duration_s / 3600.0"),
    # a share of a stated whole (session 11)
    Definition("share of failed purchases", "share", "purchases", ("ios", "platform = 'ios'"), None,
               ("since 2026-05-15", "purchased_at >= TIMESTAMP '2026-05-15'"), share_of_whole("purchases"),
               alt_segment=("android", "platform = 'android'"),
               alt_period=("before 2026-05-15", "purchased_at < TIMESTAMP '2026-05-15'"),
               whole=("failed purchases", "status = 'failed'"), alt_whole=("succeeded purchases", "status = 'succeeded'")),
]

DEFINITIONS = {"ecommerce": ECOMMERCE, "gaming": GAMING}


def build_sql(d: Definition, seg: str, base: str | None, per: str | None, whole: str | None = None) -> str:
    """The correct query for the stated definition (a share's stated whole included)."""
    if getattr(d.build, "takes_whole", False):
        return d.build(seg, base, per, whole)
    return d.build(seg, base, per)


def wrong_sql(d: Definition, seg: str, base: str | None, per: str | None, whole: str | None = None) -> str:
    """A query that leaves a stated condition out (or counts the wrong thing); a share's whole is left out."""
    if getattr(d.build, "takes_whole", False):
        return d.build(seg, base, per, None) if whole else _drop_period(d.build)(seg, base, per)
    return (d.wrong or _drop_period(d.build))(seg, base, per)


def sloppy_sql(d: Definition, seg: str, base: str | None, per: str | None, whole: str | None = None) -> str | None:
    """A query that applies every stated condition and still computes the wrong metric (the median
    for the mean, rows for distinct entities, every event as the denominator, totals for monthly
    averages, x and y swapped in a slope, r for R², a share's whole on the part only); None when the
    definition has no such variant."""
    alt = getattr(d.build, "sloppy", None)
    if alt and getattr(d.build, "takes_whole", False):
        return alt(seg, base, per, whole)
    return alt(seg, base, per) if alt else None
