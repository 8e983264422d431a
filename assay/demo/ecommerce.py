"""The ecommerce demo warehouse: seeded, vectorised, with planted patterns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .common import DemoSpec, Pattern, START, months_between

CHANNELS = ["organic", "paid_search", "paid_social", "email", "referral"]
CHANNEL_P = [0.35, 0.25, 0.20, 0.10, 0.10]
COUNTRIES = ["US", "GB", "DE", "FR", "ES", "IT", "NL", "PL"]
COUNTRY_P = [0.35, 0.15, 0.13, 0.11, 0.08, 0.07, 0.06, 0.05]
CATEGORIES = ["electronics", "fashion", "home", "beauty", "sports", "furniture", "toys", "books"]
PLATFORMS = ["web", "ios", "android"]
PLATFORM_P = [0.45, 0.25, 0.30]
RELEASE = pd.Timestamp("2026-07-01")          # android app release that broke checkout
DECLINE_FROM = pd.Timestamp("2026-07-01")     # electronics decline window start
END = pd.Timestamp("2026-11-01")


def build(scale: float = 1.0, seed: int = 7) -> DemoSpec:
    rng = np.random.default_rng(seed)
    n_cust = int(50_000 * scale)
    n_sessions = int(300_000 * scale)
    span_s = int((END - START).total_seconds())

    # ---------------------------------------------------------------- customers
    cid = np.arange(1, n_cust + 1)
    signup_off = rng.integers(0, span_s - 30 * 86400, n_cust)
    channel = rng.choice(CHANNELS, n_cust, p=CHANNEL_P)
    country = rng.choice(COUNTRIES, n_cust, p=COUNTRY_P)
    customers = pd.DataFrame(
        {
            "customer_id": cid,
            "email": [f"user{i}@example.com" for i in cid],
            "full_name": [f"Customer {i}" for i in cid],
            "country": country,
            "acquisition_channel": channel,
            "signup_at": START + pd.to_timedelta(signup_off, unit="s"),
        }
    )
    channels = pd.DataFrame(
        {
            "channel": CHANNELS,
            "cost_per_acquisition": [0.0, 14.5, 11.0, 2.0, 6.5],
            "kind": ["organic", "paid", "paid", "owned", "earned"],
        }
    )

    # ---------------------------------------------------------------- products
    n_prod = 400
    pid = np.arange(1, n_prod + 1)
    pcat = rng.choice(CATEGORIES, n_prod)
    base_price = {"electronics": 180, "fashion": 45, "home": 60, "beauty": 25, "sports": 55,
                  "furniture": 240, "toys": 30, "books": 15}
    price = np.round(np.array([base_price[c] for c in pcat]) * rng.uniform(0.5, 1.8, n_prod), 2)
    products = pd.DataFrame(
        {"product_id": pid, "name": [f"Product {i}" for i in pid], "category": pcat, "price": price}
    )
    # planted data-quality defect: 37 products lost their category
    dq_idx = rng.choice(n_prod, 37, replace=False)
    products["category"] = products["category"].astype(object)
    products.loc[dq_idx, "category"] = None

    # ---------------------------------------------------------------- sessions
    s_cust = rng.integers(0, n_cust, n_sessions)
    signup_s = signup_off[s_cust]
    remaining = span_s - signup_s
    off = (rng.random(n_sessions) * remaining).astype(np.int64)
    # paid_social customers churn: 85% of their sessions after their first 21 days never happen
    is_social = channel[s_cust] == "paid_social"
    churned = is_social & (off > 21 * 86400) & (rng.random(n_sessions) < 0.85)
    keep = ~churned
    s_cust, signup_s, remaining, off = s_cust[keep], signup_s[keep], remaining[keep], off[keep]
    n_sessions = len(s_cust)
    s_ts = START + pd.to_timedelta(signup_s + np.minimum(off, remaining - 1), unit="s")
    s_platform = rng.choice(PLATFORMS, n_sessions, p=PLATFORM_P)
    s_prod = rng.integers(0, n_prod, n_sessions)
    cat_known = pcat[s_prod]  # the true category (purchase behaviour follows it)

    p_cart = np.full(n_sessions, 0.38)
    cart = rng.random(n_sessions) < p_cart
    p_remove = np.where(cat_known == "furniture", 0.55, 0.12)
    removed = cart & (rng.random(n_sessions) < p_remove)
    p_buy = np.full(n_sessions, 0.52)
    s_ts_idx = pd.DatetimeIndex(s_ts)
    after_release = s_ts_idx >= RELEASE
    p_buy = np.where((s_platform == "android") & after_release, 0.14, p_buy)
    p_buy = np.where((cat_known == "electronics") & (s_ts_idx >= DECLINE_FROM), p_buy * 0.45, p_buy)
    bought = cart & ~removed & (rng.random(n_sessions) < p_buy)

    n_views = rng.integers(1, 4, n_sessions)
    # events: views, carts, removals, purchases (vectorised by repetition)
    sess_id = np.arange(1, n_sessions + 1)
    ev_parts = []
    rep = np.repeat(np.arange(n_sessions), n_views)
    view_off = np.concatenate([np.arange(k) for k in n_views]) * 40
    ev_parts.append((rep, "view", view_off))
    c_idx = np.flatnonzero(cart)
    ev_parts.append((c_idx, "add_to_cart", n_views[c_idx] * 40 + 30))
    r_idx = np.flatnonzero(removed)
    ev_parts.append((r_idx, "remove_from_cart", n_views[r_idx] * 40 + 90))
    b_idx = np.flatnonzero(bought)
    ev_parts.append((b_idx, "purchase", n_views[b_idx] * 40 + 150))
    ev_sess = np.concatenate([p[0] for p in ev_parts])
    ev_type = np.concatenate([np.full(len(p[0]), p[1]) for p in ev_parts])
    ev_off = np.concatenate([p[2] for p in ev_parts])
    order = np.lexsort((ev_off, ev_sess))
    ev_sess, ev_type, ev_off = ev_sess[order], ev_type[order], ev_off[order]
    # top up to at least 1M events (x scale) with extra browsing views
    target = int(1_000_000 * scale)
    extra = max(0, target - len(ev_sess))
    if extra:
        x_sess = rng.integers(0, n_sessions, extra)
        ev_sess = np.concatenate([ev_sess, x_sess])
        ev_type = np.concatenate([ev_type, np.full(extra, "view")])
        ev_off = np.concatenate([ev_off, rng.integers(5, 35, extra)])
    events = pd.DataFrame(
        {
            "event_id": np.arange(1, len(ev_sess) + 1),
            "session_id": sess_id[ev_sess],
            "customer_id": cid[s_cust[ev_sess]],
            "product_id": pid[s_prod[ev_sess]],
            "event_type": ev_type,
            "platform": s_platform[ev_sess],
            "event_at": s_ts[ev_sess] + pd.to_timedelta(ev_off, unit="s"),
        }
    )

    # ---------------------------------------------------------------- orders
    n_ord = len(b_idx)
    o_cust = s_cust[b_idx]
    qty = rng.integers(1, 3, n_ord)
    # planted concentration: 1% of customers are whales who buy in bulk
    whales = rng.choice(n_cust, max(1, n_cust // 100), replace=False)
    whale_mask = np.isin(o_cust, whales)
    qty = np.where(whale_mask, rng.integers(12, 30, n_ord), qty)
    unit = price[s_prod[b_idx]]
    orders = pd.DataFrame(
        {
            "order_id": np.arange(1, n_ord + 1),
            "customer_id": cid[o_cust],
            "session_id": sess_id[b_idx],
            "platform": s_platform[b_idx],
            "ordered_at": s_ts[b_idx] + pd.to_timedelta(n_views[b_idx] * 40 + 150, unit="s"),
            "status": rng.choice(["completed", "completed", "completed", "completed", "refunded"], n_ord),
            "total_amount": np.round(qty * unit, 2),
        }
    )
    order_items = pd.DataFrame(
        {
            "order_item_id": np.arange(1, n_ord + 1),
            "order_id": orders["order_id"].to_numpy(),
            "product_id": pid[s_prod[b_idx]],
            "quantity": qty,
            "unit_price": unit,
        }
    )
    tables = {
        "customers": customers,
        "channels": channels,
        "products": products,
        "events": events,
        "orders": orders,
        "order_items": order_items,
    }

    last_month = months_between(START, END)
    patterns = [
        Pattern(
            id="android_funnel_drop",
            entity="customers",
            metric=["conversion", "purchase", "checkout", "funnel"],
            area="conversion",
            kind="funnel_drop",
            segment="android",
            names=["android"],
            description=(
                "After the Android release of 2026-07-01, cart-to-purchase conversion on android fell from "
                "about 52% to about 14%; other platforms did not change."
            ),
            count_sql=(
                "SELECT count(DISTINCT customer_id) FROM events WHERE platform = 'android' "
                "AND event_type = 'add_to_cart' AND event_at >= TIMESTAMP '2026-07-01'"
            ),
            unit="customers who added to cart on android after the release",
        ),
        Pattern(
            id="electronics_revenue_decline",
            entity="order items",
            metric=["revenue", "sales", "purchase", "order"],
            area="revenue",
            kind="trend",
            segment="electronics",
            names=["electronics"],
            description="Electronics revenue fell by more than half from July 2026 while other categories held steady.",
            count_sql=(
                "SELECT count(*) FROM order_items oi JOIN products p USING (product_id) JOIN orders o USING (order_id) "
                "WHERE p.category = 'electronics' AND o.ordered_at >= TIMESTAMP '2026-07-01'"
            ),
            unit="electronics order items since the decline began",
        ),
        Pattern(
            id="paid_social_churn",
            entity="customers",
            metric=["repeat", "churn", "retention", "come back", "return", "second"],
            area="retention",
            kind="churn_gap",
            segment="paid_social",
            names=["paid_social"],
            description=(
                "Customers acquired through paid_social stop coming back after their first three weeks, so far "
                "fewer of them place a repeat order than customers of other channels."
            ),
            count_sql=(
                "SELECT count(*) FROM (SELECT c.customer_id FROM customers c JOIN orders o USING (customer_id) "
                "WHERE c.acquisition_channel = 'paid_social' GROUP BY c.customer_id HAVING count(*) = 1)"
            ),
            unit="paid_social customers with a single order",
        ),
        Pattern(
            id="revenue_concentration",
            entity="customers",
            metric=["revenue", "total_amount", "sales"],
            area="revenue",
            kind="concentration",
            segment="top 1% customers",
            names=["top 1%"],
            description="The top 1% of customers by revenue (bulk buyers) bring a large share of all revenue.",
            count_sql=(
                "SELECT CAST(ceil(count(DISTINCT customer_id) * 0.01) AS BIGINT) FROM orders"
            ),
            unit="customers in the top 1% by revenue",
        ),
        Pattern(
            id="furniture_cart_removal",
            entity="events",
            metric=["remov"],
            area="product_performance",
            kind="outlier_segment",
            segment="furniture",
            names=["furniture"],
            description="Furniture is removed from carts far more often (about 55% of carts) than any other category (about 12%).",
            count_sql=(
                "SELECT count(*) FROM events e JOIN products p USING (product_id) "
                "WHERE e.event_type = 'remove_from_cart' AND p.category = 'furniture'"
            ),
            unit="remove_from_cart events on furniture",
        ),
        Pattern(
            id="products_missing_category",
            entity="products",
            metric=["missing", "empty", "null", "no category", "without"],
            area="product_performance",
            kind="data_quality",
            segment="category",
            names=["category"],
            description="37 products have no category, so their sales vanish from every category report.",
            count_sql="SELECT count(*) FROM products WHERE category IS NULL",
            unit="products without a category",
        ),
    ]
    return DemoSpec(
        name="ecommerce",
        pack="ecommerce",
        category="multi_category",
        tables=tables,
        patterns=patterns,
        foreign_keys={
            "events": {"customer_id": "customers", "product_id": "products"},
            "orders": {"customer_id": "customers"},
            "order_items": {"order_id": "orders", "product_id": "products"},
        },
        months=last_month,
    )
