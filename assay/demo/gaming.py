"""The match-3 gaming demo warehouse: players, sessions, level attempts, purchases."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .common import DemoSpec, Pattern, START

CHANNELS = ["organic", "google_ads", "facebook_ads", "tiktok_ads", "cross_promo"]
CHANNEL_P = [0.40, 0.20, 0.18, 0.14, 0.08]
PLATFORMS = ["ios", "android"]
COUNTRIES = ["US", "BR", "DE", "JP", "IN", "GB", "FR", "MX"]
COUNTRY_P = [0.28, 0.14, 0.10, 0.10, 0.14, 0.09, 0.08, 0.07]
WALL_LEVEL = 42
IOS_BUG_FROM = pd.Timestamp("2026-05-15")
END = pd.Timestamp("2026-11-01")
PRODUCTS = [("coins_small", 0.99), ("coins_medium", 4.99), ("coins_large", 19.99),
            ("booster_pack", 2.99), ("lives_refill", 1.99), ("starter_bundle", 9.99)]


def build(scale: float = 1.0, seed: int = 11) -> DemoSpec:
    rng = np.random.default_rng(seed)
    n = int(30_000 * scale)
    span_s = int((END - START).total_seconds())
    pid = np.arange(1, n + 1)
    inst_off = rng.integers(0, span_s - 14 * 86400, n)
    channel = rng.choice(CHANNELS, n, p=CHANNEL_P)
    platform = rng.choice(PLATFORMS, n, p=[0.45, 0.55])
    country = rng.choice(COUNTRIES, n, p=COUNTRY_P)
    installed = START + pd.to_timedelta(inst_off, unit="s")
    players = pd.DataFrame(
        {
            "player_id": pid,
            "installed_at": installed,
            "acquisition_channel": channel,
            "platform": platform,
            "country": country,
            "device_model": rng.choice(["phone_a", "phone_b", "tablet_c", "phone_d"], n),
        }
    )

    # ---------------------------------------------------------------- sessions
    # A player's sessions follow one another in time and never overlap: the first within 20 hours of the install,
    # then gaps. tiktok_ads players churn after day 0: 70% play one or two sessions on their first day and never
    # come back (22% of the other channels' players). A returning player comes back within a few days, then plays
    # out a lifetime of 14-120 days. Sessions after END are not observed: a recent cohort has had less time (fewer
    # sessions seen), not more sessions squeezed into it.
    one_day = (channel == "tiktok_ads") & (rng.random(n) < 0.70)
    one_day |= (channel != "tiktok_ads") & (rng.random(n) < 0.22)
    # payers: day-0 churners rarely pay; whales (5% of payers) are players who keep playing for months
    payer = rng.random(n) < np.where(one_day, 0.02, 0.07)
    whales = rng.choice(np.flatnonzero(payer & ~one_day), max(1, int(payer.sum() * 0.05)), replace=False)
    n_plan = np.where(one_day, rng.integers(1, 3, n), rng.integers(3, 40, n))
    life_s = rng.uniform(14, 120, n) * 86400
    n_plan[whales] = rng.integers(40, 90, len(whales))
    life_s[whales] = rng.uniform(60, 150, len(whales)) * 86400
    s_player = np.repeat(np.arange(n), n_plan)
    m = len(s_player)
    first = np.concatenate([[True], s_player[1:] != s_player[:-1]])
    second = np.concatenate([[False], first[:-1]]) & ~first
    dur = rng.gamma(2.0, 300.0, m).round().astype(np.int64) + 30
    # BR players have sessions about half as long
    dur = np.where(country[s_player] == "BR", (dur * 0.5).astype(np.int64) + 15, dur)
    day0 = one_day[s_player]
    gap = np.where(
        day0,
        rng.integers(600, 3 * 3600, m),
        np.where(second, rng.exponential(2 * 86400, m) + 4 * 3600,
                 rng.exponential(life_s[s_player] / n_plan[s_player])),
    ).astype(np.int64)
    # each session starts after the previous one ended and a gap; cumulated per player
    step = np.where(first, rng.integers(0, 20 * 3600, m), np.concatenate([[0], dur[:-1]]) + gap)
    total = np.cumsum(step)
    offset = total - np.repeat(total[first] - step[first], n_plan)
    # a day-0 churner's sessions all start within its first day
    offset = np.where(day0, np.minimum(offset, 86400 - 900), offset)
    seen = inst_off[s_player] + offset < span_s
    s_player, offset, dur = s_player[seen], offset[seen], dur[seen]
    m = len(s_player)
    n_sess = np.bincount(s_player, minlength=n)  # sessions observed (every player has the first)
    started = START + pd.to_timedelta(inst_off[s_player] + offset, unit="s")
    # data-quality defect: 412 sessions whose end precedes their start
    bad = rng.choice(m, 412, replace=False)
    logged = dur.copy()
    logged[bad] = -rng.integers(60, 3600, 412)
    sessions = pd.DataFrame(
        {
            "session_id": np.arange(1, m + 1),
            "player_id": pid[s_player],
            "started_at": started,
            "ended_at": started + pd.to_timedelta(logged, unit="s"),
            "duration_s": logged,
        }
    )
    sess_first = np.concatenate([[0], np.cumsum(n_sess)[:-1]])  # each player's first session's row

    def in_sessions(owner: np.ndarray, idx: np.ndarray, frac: np.ndarray) -> pd.DatetimeIndex:
        """A moment ``frac`` of the way through the owner's ``idx``-th session (its real length)."""
        row = sess_first[owner] + idx
        return pd.DatetimeIndex(started[row] + pd.to_timedelta((frac * dur[row]).astype(np.int64), unit="s"))

    # ---------------------------------------------------------------- level attempts
    # each player reaches a max level depending on the sessions played; attempts per level
    reach = np.minimum(60, (n_sess * rng.uniform(1.5, 3.5, n)).astype(int) + 1)
    lvl_player = np.repeat(np.arange(n), reach)
    level = np.concatenate([np.arange(1, r + 1) for r in reach])
    base_win = 0.75 - level * 0.004
    win_p = np.where(level == WALL_LEVEL, 0.07, base_win)
    tries = rng.geometric(win_p)
    tries = np.minimum(tries, 25)
    # at the wall most players give up: their attempts end without a win
    stop_at_wall = (level == WALL_LEVEL) & (rng.random(len(level)) < 0.75)
    att_player = np.repeat(lvl_player, tries)
    att_level = np.repeat(level, tries)
    att_no = np.concatenate([np.arange(1, t + 1) for t in tries])
    last = np.repeat(np.cumsum(tries), tries) == (np.arange(len(att_no)) + 1)
    won = last & ~np.repeat(stop_at_wall, tries)
    # players who gave up at the wall do not go beyond it
    gave_up = set(np.unique(lvl_player[stop_at_wall]))
    keep = ~(np.isin(att_player, list(gave_up)) & (att_level > WALL_LEVEL))
    att_player, att_level, att_no, won = att_player[keep], att_level[keep], att_no[keep], won[keep]
    k = len(att_player)
    # a player's attempts, in order (level, then attempt), spread over its sessions in order
    per = np.bincount(att_player, minlength=n)
    nth = np.arange(k) - np.repeat(np.concatenate([[0], np.cumsum(per)[:-1]]), per)
    sess_idx = (nth * n_sess[att_player]) // per[att_player]
    in_sess = np.concatenate([[True], (att_player[1:] != att_player[:-1]) | (sess_idx[1:] != sess_idx[:-1])])
    grp = np.cumsum(in_sess) - 1
    grp_size = np.bincount(grp)
    rank = np.arange(k) - np.flatnonzero(in_sess)[grp]
    att_at = in_sessions(att_player, sess_idx, (rank + 1) / (grp_size[grp] + 1))
    boosters = np.where(rng.random(k) < 0.12, rng.integers(1, 4, k), 0)
    level_attempts = pd.DataFrame(
        {
            "attempt_id": np.arange(1, k + 1),
            "player_id": pid[att_player],
            "level": att_level,
            "attempt_no": att_no,
            "attempted_at": att_at,
            "won": won,
            "moves_left": np.where(won, rng.integers(0, 12, k), 0),
            "boosters_used": boosters,
        }
    )

    # ---------------------------------------------------------------- purchases
    # players buy in their sessions; whales buy the big pack again and again over their months of play
    n_buy = np.where(payer, rng.integers(1, 6, n), 0)
    n_buy[whales] = rng.integers(25, 60, len(whales))
    b_player = np.repeat(np.arange(n), n_buy)
    b = len(b_player)
    prod_idx = rng.integers(0, len(PRODUCTS), b)
    prod_idx = np.where(np.isin(b_player, whales), 2, prod_idx)  # whales buy the big pack
    # each purchase falls in one of the sessions the player would play; those after END are not observed
    b_sess = (rng.random(b) * n_plan[b_player]).astype(np.int64)
    seen = b_sess < n_sess[b_player]
    b_player, prod_idx, b_sess = b_player[seen], prod_idx[seen], b_sess[seen]
    b = len(b_player)
    b_at = in_sessions(b_player, b_sess, rng.random(b))
    order = np.lexsort((b_at.asi8, b_player))  # ids in time order per player
    b_player, prod_idx, b_at = b_player[order], prod_idx[order], b_at[order]
    b_platform = platform[b_player]
    fail_p = np.where((b_platform == "ios") & (b_at >= IOS_BUG_FROM), 0.38, 0.03)
    status = np.where(rng.random(b) < fail_p, "failed", "succeeded")
    purchases = pd.DataFrame(
        {
            "purchase_id": np.arange(1, b + 1),
            "player_id": pid[b_player],
            "purchased_at": b_at,
            "product": [PRODUCTS[i][0] for i in prod_idx],
            "price_usd": [PRODUCTS[i][1] for i in prod_idx],
            "platform": b_platform,
            "status": status,
        }
    )
    tables = {"players": players, "sessions": sessions, "level_attempts": level_attempts, "purchases": purchases}
    patterns = [
        Pattern(
            id="level_42_wall",
            entity="players",
            metric=["win", "won", "wall", "difficult", "stop"],
            area="levels",
            kind="outlier_segment",
            segment="level 42",
            names=["level 42", "level = 42"],
            description="Level 42 is a difficulty wall: its win rate is about 7% against about 55-60% on the levels around it, and most players stop there.",
            count_sql=(
                "SELECT count(*) FROM (SELECT player_id FROM level_attempts WHERE level = 42 "
                "GROUP BY player_id HAVING NOT bool_or(won))"
            ),
            unit="players who attempted level 42 and never beat it",
        ),
        Pattern(
            id="tiktok_day1_churn",
            entity="players",
            metric=["churn", "return", "retention", "day"],
            area="churn",
            kind="churn_gap",
            segment="tiktok_ads",
            names=["tiktok_ads"],
            description="Players acquired through tiktok_ads churn on day 0: about 70% never return after their first day, against about 22% for other channels.",
            count_sql=(
                "SELECT count(*) FROM players p WHERE p.acquisition_channel = 'tiktok_ads' AND NOT EXISTS ("
                "SELECT 1 FROM sessions s WHERE s.player_id = p.player_id "
                "AND s.started_at >= p.installed_at + INTERVAL 1 DAY)"
            ),
            unit="tiktok_ads players with no session after day 0",
        ),
        Pattern(
            id="whale_concentration",
            entity="players",
            metric=["revenue", "price_usd", "spend"],
            area="monetization",
            kind="concentration",
            segment="top 5% payers",
            names=["top 5%"],
            description="The top 5% of paying players (whales buying coins_large) bring most of the revenue.",
            count_sql=(
                "SELECT CAST(ceil(count(DISTINCT player_id) * 0.05) AS BIGINT) FROM purchases WHERE status = 'succeeded'"
            ),
            unit="payers in the top 5% by revenue",
        ),
        Pattern(
            id="ios_purchase_failures",
            entity="purchases",
            metric=["fail"],
            area="monetization",
            kind="change_point",
            segment="ios",
            names=["ios"],
            description="From 2026-05-15 about 38% of iOS purchases fail, against 3% before and on Android.",
            count_sql=(
                "SELECT count(*) FROM purchases WHERE platform = 'ios' AND status = 'failed' "
                "AND purchased_at >= TIMESTAMP '2026-05-15'"
            ),
            unit="failed iOS purchases since 2026-05-15",
        ),
        Pattern(
            id="br_short_sessions",
            entity="players",
            metric=["session", "duration", "length"],
            area="engagement",
            kind="outlier_segment",
            segment="BR",
            names=["= br", "brazil", "country br"],
            description="Players in Brazil (BR) play sessions about half as long as players elsewhere.",
            count_sql="SELECT count(*) FROM players WHERE country = 'BR'",
            unit="players in BR",
        ),
        Pattern(
            id="negative_session_duration",
            entity="sessions",
            metric=["negative", "end before", "ended_at"],
            area="engagement",
            kind="data_quality",
            segment="duration_s",
            names=["duration", "end before"],
            description="412 sessions end before they start (negative duration_s), a logging defect that distorts session-length metrics.",
            count_sql="SELECT count(*) FROM sessions WHERE duration_s < 0",
            unit="sessions with negative duration",
        ),
    ]
    return DemoSpec(name="gaming", pack="gaming", category="match3", tables=tables, patterns=patterns)
