"""The cosine above which two insights are one finding (assay/findings.py SAME_FINDING_COSINE).

A labelled set: each finding written twice, as two areas' analysts would word it (same finding,
different words); and hard pairs of different findings: the same segment with another metric, the
same metric on another segment, the same metric and segment in another direction. Embeds
"name. description" as merge_findings does and reports the separation and the threshold that
merges the most same-finding pairs with no different-finding pair merged.

Prints: same_pairs, different_pairs, same_min_cosine, same_p10_cosine, different_max_cosine,
threshold_zero_false_merges, recall_at_threshold, false_merges_at_<t> for the shipped threshold.
Usage: .venv/bin/python bench/findings.py
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from assay.findings import SAME_FINDING_COSINE  # noqa: E402
from assay.vectors import get_embedder  # noqa: E402

# (finding id, text): two or more texts per finding
TEXTS = [
    ("android", "Android checkout conversion collapsed after the July release. Cart-to-purchase conversion on android "
                "fell from 52% to 14% since 2026-07-01 while web and ios held steady."),
    ("android", "Android purchases per add-to-cart dropped sharply from July 2026. Since the 2026-07-01 app release only "
                "14% of android carts convert, against 52% before and on other platforms."),
    ("electronics", "Electronics revenue halved from July 2026. Monthly electronics revenue fell by more than half "
                    "since July while other categories held steady."),
    ("electronics", "Electronics sales fell by 55% since July. Revenue from electronics order items dropped from "
                    "about 180k to 80k a month from 2026-07-01."),
    ("paid_social", "Paid social customers rarely come back. Only 2.4% of customers acquired through paid_social place "
                    "a second order, against 19.3% for other channels."),
    ("paid_social", "paid_social acquisitions churn after the first order: their repeat-order rate is 2.4% versus "
                    "19.3% for customers from other acquisition channels."),
    ("furniture_removal", "Furniture is removed from carts far more often. 55% of furniture add-to-carts end in a "
                          "remove_from_cart, against 12% for other categories."),
    ("furniture_removal", "Furniture has a cart abandonment problem: the remove-from-cart rate for furniture is 0.55, "
                          "more than four times the 0.12 of other product categories."),
    ("missing_category", "37 products have no category. Their sales vanish from every category report."),
    ("missing_category", "Data quality: 37 of 400 products lack a category value, so category breakdowns miss them."),
    ("level42", "Level 42 is a difficulty wall. Its win rate is 7% against 55-60% on the levels around it."),
    ("level42", "Players get stuck on level 42: only 7% of attempts are won there, compared with about 58% on levels "
                "40 to 44."),
    ("tiktok", "TikTok-acquired players churn on day one. About 70% of tiktok_ads players never return after their "
               "first day, against 22% for other channels."),
    ("tiktok", "Day-1 retention of tiktok_ads installs is poor: only 30% come back after day 0, versus 78% of players "
               "from other acquisition channels."),
    ("ios_fail", "iOS purchases started failing in May. From 2026-05-15 about 38% of ios purchases fail, against 3% "
                 "before and on android."),
    ("ios_fail", "Purchase failure rate on ios jumped from 3% to 38% on 2026-05-15, while android stayed at 3%."),
    ("br", "Brazilian players play much shorter sessions. Players in BR average 330 seconds per session, about half of "
           "the 630 seconds elsewhere."),
    ("br", "Session length in BR is half the norm: average duration_s of 327 for country BR against 628 across other "
           "countries."),
    ("whales", "A few whales carry monetization. The top 5% of payers bring 69% of all purchase revenue."),
    ("whales", "Revenue is concentrated in the top 5% of paying players, who account for 68.8% of price_usd."),
    # hard different findings: same segment other metric, same metric other segment, opposite direction
    ("furniture_price", "Furniture has the highest average price. Furniture order items average 281 against a median "
                        "of 59 across categories."),
    ("electronics_price", "Electronics items are expensive: the average unit_price of electronics is 197, far above "
                          "the 59 median of other categories."),
    ("ios_conv", "iOS checkout conversion fell after July. Cart-to-purchase conversion on ios fell from 52% to 40% "
                 "since 2026-07-01."),
    ("android_sessions", "Android users browse longer. Android sessions last 20% longer than web sessions."),
    ("paid_social_signups", "Paid social brings the most signups. 20% of all new customers came through paid_social "
                            "in the last quarter."),
    ("level30", "Level 30 is too easy: its win rate is 95%, against 60% on the levels around it."),
    ("coins_small_fail", "coins_small purchases fail more often since May: the failure rate rose from 2% to 26%."),
    ("events_growth", "The monthly number of events is increasing over time, by about 19,000 a month."),
    ("sessions_growth", "The monthly number of sessions is increasing over time, by about 4,500 a month."),
    ("us_sessions", "US players play the longest sessions: 700 seconds on average, against 600 elsewhere."),
]


def main() -> None:
    emb = get_embedder()
    vecs = emb.embed([t for _, t in TEXTS])
    sims = vecs @ vecs.T
    same, diff = [], []
    for a, b in combinations(range(len(TEXTS)), 2):
        (same if TEXTS[a][0] == TEXTS[b][0] else diff).append(float(sims[a, b]))
    same_a, diff_a = np.array(same), np.array(diff)
    zero_fp = float(np.nextafter(diff_a.max(), 1.0))
    print(f"same_pairs: {len(same)}")
    print(f"different_pairs: {len(diff)}")
    print(f"same_min_cosine: {same_a.min():.3f}")
    print(f"same_p10_cosine: {np.percentile(same_a, 10):.3f}")
    print(f"same_median_cosine: {np.median(same_a):.3f}")
    print(f"different_max_cosine: {diff_a.max():.3f}")
    print(f"different_p99_cosine: {np.percentile(diff_a, 99):.3f}")
    print(f"threshold_zero_false_merges: {zero_fp:.3f}")
    print(f"same_recall_at_zero_false_merges: {(same_a >= zero_fp).mean():.3f}")
    t = SAME_FINDING_COSINE
    print(f"shipped_threshold: {t:.3f}")
    print(f"same_recall_at_shipped: {(same_a >= t).mean():.3f}")
    print(f"false_merges_at_shipped: {int((diff_a >= t).sum())}")


if __name__ == "__main__":
    main()
