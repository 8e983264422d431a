"""Scoring against planted ground truth, on hand-made examples."""

from __future__ import annotations

from assay.evaluate import matches, score_demo
from assay.models import Insight, Validation, ValidationStatus

PATTERN = {"id": "p1", "segment": "android", "names": ["android"], "affected_count": 1000}


def ins(name, count, sev="high", status=ValidationStatus.confirmed):
    return Insight(id="a-1", area="a", name=name, description="desc", affected_count=count, severity=sev,
                   validation=Validation(status=status))


def test_match_needs_segment_and_count_within_20_percent():
    assert matches(ins("platform = android: conversion fell", 1199), PATTERN)
    assert matches(ins("platform = Android: conversion fell", 800), PATTERN)
    assert not matches(ins("platform = android: conversion fell", 1201), PATTERN)
    assert not matches(ins("platform = ios: conversion fell", 1000), PATTERN)
    assert not matches(ins("platform = android", None), PATTERN)


def test_score():
    other = {"id": "p2", "segment": "furniture", "names": ["furniture"], "affected_count": 50}
    insights = [ins("android drop", 1000), ins("furniture removed", 10, sev="critical",
                                               status=ValidationStatus.rejected), ins("noise", 5)]
    s = score_demo(insights, [PATTERN, other])
    assert s.found == ["p1"] and s.missed == ["p2"]
    assert s.recall == 0.5 and abs(s.precision - 1 / 3) < 1e-9 and s.critical_wrong == 1


ELECTRONICS = {"id": "electronics_revenue_decline", "segment": "electronics", "names": ["electronics"],
               "affected_count": 1043, "entity": "order items", "metric": ["revenue", "sales", "purchase", "order"]}


def unit(name, count, entity):
    return Insight(id="r-1", area="revenue", name=name, description="since 2026-07-01", affected_count=count,
                   affected_entity=entity)


def test_counts_compared_only_when_the_entities_agree():
    # counted in customers where the truth counts order items: the count says nothing, the finding is found
    assert matches(unit("Electronics revenue fell by half", 5913, "customers"), ELECTRONICS)
    # the same entity: the count must be right
    assert matches(unit("Electronics revenue fell by half", 1100, "order_items"), ELECTRONICS)
    assert not matches(unit("Electronics revenue fell by half", 5913, "Order items"), ELECTRONICS)


def test_match_needs_the_metric_not_only_the_segment():
    # electronics named, but another metric (and order_items is a table name, not the word "order")
    assert not matches(unit("electronics has a much higher average unit_price in order_items", 2424, "orders"),
                       ELECTRONICS)
    assert matches(unit("Purchases of electronics per cart fell", 5913, "events"), ELECTRONICS)


def test_demo_ground_truth_states_entity_and_metric(tmp_path):
    from assay.demo import ecommerce, gaming

    for p in ecommerce.build(scale=0.01).patterns + gaming.build(scale=0.01).patterns:
        assert p.entity and p.metric, p.id


CHURN = {"id": "paid_social_churn", "segment": "paid_social", "names": ["paid_social"], "affected_count": 1800,
         "entity": "customers", "metric": ["repeat", "churn", "return"]}


def claim(**kw):
    from assay.models import Claim

    return Claim(**kw)


def test_a_segment_spelled_another_way_is_the_same_segment():
    """A reader's 'Paid-social' or 'paid social' is the warehouse's 'paid_social'; so is a claim's SQL condition."""
    assert matches(unit("Paid-social customers rarely return", 1790, "customers"), CHURN)
    assert matches(unit("Paid social customers rarely return", 1790, "customers"), CHURN)
    i = unit("Customers from social ads rarely return", 1790, "customers")
    assert not matches(i, CHURN)
    i.claims = [claim(metric="rate", measure="repeat rate", segment="paid_social customers", value=0.1,
                      baseline_value=0.3)]
    assert matches(i, CHURN)  # the claim names the segment


def test_a_segment_written_as_a_quoted_condition_is_named():
    """Round 14 (gaming): "Players in BR play sessions about half as long", its segment "players with country =
    'BR'"; the truth names BR as "= br", "country br" or "brazil" (a bare "br" is too short to trust), and the
    quotes of the condition hid it."""
    br = {"id": "br_short_sessions", "segment": "BR", "names": ["= br", "brazil", "country br"],
          "affected_count": 4049, "entity": "players", "metric": ["session", "duration", "length"]}
    i = unit("Players in BR play sessions about half as long as every other country", 4049, "players")
    assert not matches(i, br)
    i.segment = "players with country = 'BR'"
    assert matches(i, br)


def test_a_segment_is_named_as_words_not_inside_other_words_or_by_its_exclusion():
    ios = {"id": "ios_fail", "segment": "ios", "names": ["ios"], "affected_count": 100, "entity": "purchases",
           "metric": ["fail"]}
    assert not matches(unit("Payment failures rise in several scenarios", 100, "purchases"), ios)
    assert matches(unit("iOS payment failures rise", 100, "purchases"), ios)
    i = unit("Other channels' customers fail to return", 1790, "customers")
    i.claims = [claim(metric="rate", measure="repeat rate", segment="other channels",
                      segment_sql="acquisition_channel <> 'paid_social'", value=0.3, baseline_value=0.1)]
    assert not matches(i, CHURN)  # a condition that excludes the segment does not name it


def test_a_count_claim_of_the_same_entity_sizes_the_finding():
    """The affected count may size the whole segment while a count claim states the affected subset (or the
    other way round): the finding is found when either count of the pattern's entity is right."""
    i = unit("Paid-social customers rarely return", 10036, "customers")
    assert not matches(i, CHURN)  # the segment's size, not the customers who did not return
    i.claims = [claim(metric="count", measure="customers with one order", entity="customers",
                      segment="paid_social", value=1795)]
    assert matches(i, CHURN)
    i.claims[0].verified_value = 900  # the warehouse says otherwise: the verified value counts
    assert not matches(i, CHURN)
    i.claims = [claim(metric="count", measure="orders", entity="orders", segment="paid_social", value=1795)]
    assert not matches(i, CHURN)  # another entity's count does not size it


TIKTOK = {"id": "tiktok_day1_churn", "segment": "tiktok_ads", "names": ["tiktok_ads"], "affected_count": 2962,
          "entity": "players", "metric": ["churn", "return", "retention", "day"]}


def test_a_confirmed_count_of_another_cut_of_the_cohort_is_the_same_finding():
    """Round 7: gaming's churn-1 counted the tiktok_ads players gone by day 6 among those installed before May (1,564,
    a censoring-aware cohort: every one could be 7 days old) where the truth counts every install with no session
    after day 0 (2,962); ecommerce's retention-1 counted the 7,997 paid_social customers who never ordered where the
    truth counts the 1,795 with one order. Both counts and both segments' effects were confirmed by the warehouse.
    A re-derivation of the truth's own definition would have given the truth's count, so a confirmed count that
    differs from it counts another cut of the cohort: found. An unconfirmed or corrected count of the same entity
    (possibly the truth's definition, inflated), a confirmed count with no confirmed effect, a count of another
    entity, or another segment are still refused."""
    from assay.models import ValidationStatus as V

    def churn(count_verdict=V.confirmed, effect_verdict=V.confirmed, base=0.225, entity="players",
              segment="tiktok_ads players installed before 2026-05-01"):
        i = unit("tiktok_ads players churn in week 1: 71% gone by day 6 vs 22%", 1564, entity)
        i.claims = [claim(metric="rate", measure="share of players whose last session is within 6 days of install",
                          entity="players", segment=segment, baseline="other channels", value=0.709,
                          baseline_value=base, verdict=effect_verdict, verified_value=0.709,
                          verified_baseline_value=base),
                    claim(metric="count", measure="tiktok_ads players whose last session is within 6 days",
                          entity=entity, segment=segment, value=1564, verdict=count_verdict,
                          verified_value={V.confirmed: 1564, V.adjusted: 900}.get(count_verdict))]
        return i

    assert matches(churn(), TIKTOK)
    assert not matches(churn(count_verdict=None), TIKTOK)  # an unverified count far from the truth's
    assert not matches(churn(count_verdict=V.adjusted), TIKTOK)  # the warehouse corrected it, still not the truth's
    assert not matches(churn(effect_verdict=V.rejected), TIKTOK)  # the effect itself was not confirmed
    assert not matches(churn(base=0.70), TIKTOK)  # no effect: 0.709 against 0.70
    assert not matches(churn(segment="organic players"), TIKTOK)  # the effect is another segment's
    sessions = churn(entity="sessions")
    sessions.affected_entity = "players"
    assert not matches(sessions, TIKTOK)  # a confirmed count of another entity does not size the players' cohort
    # ecommerce: the paid_social customers who never ordered, against the truth's single-order customers
    never = unit("paid_social customers: 20% ever buy vs 55%, 12% of buyers repeat vs 35%", 7997, "customers")
    never.claims = [claim(metric="rate", measure="share of buyers with 2 or more orders", entity="customers",
                          segment="paid_social customers with at least one order", baseline="other channels",
                          value=0.12, baseline_value=0.35, verdict=V.confirmed),
                    claim(metric="count", measure="paid_social customers who never placed an order",
                          entity="customers", segment="paid_social customers with no order", value=7997,
                          verdict=V.confirmed, verified_value=7997)]
    assert matches(never, CHURN)
    assert score_demo([never], [CHURN]).found == ["paid_social_churn"]


WHALES = {"id": "revenue_concentration", "kind": "concentration", "segment": "top 1% customers", "names": ["top 1%"],
          "affected_count": 207, "entity": "customers", "metric": ["revenue", "total_amount", "sales"]}


def test_a_confirmed_share_of_the_truths_top_group_finds_a_concentration():
    """Round 8's ecommerce revenue-3 led with the top 10% of customers (2,067 of them, 44.1% of completed revenue) and
    stated the top 1%'s share beside it (13.9%), both confirmed. The truth's top group is fixed by its definition
    (ceil(1% of customers)), so the count of another group says nothing; the top 1%'s confirmed share, 13.9 times
    its 1% of the customers, is the planted concentration. Refused: an unconfirmed share, a share near the uniform
    spread, a share of another group or of another entity, and any of it for a pattern that is no concentration."""
    from assay.models import ValidationStatus as V

    def top(share=0.139, verdict=V.confirmed, segment="top 1% of customers by completed revenue",
            entity="customers"):
        i = unit("The top 10% of customers hold 44.1% of completed revenue, and the top 1% hold 13.9%", 2067,
                 "customers")
        i.claims = [claim(metric="share", measure="share of completed revenue", entity="customers",
                          segment="top 10% of customers by completed revenue", value=0.441, verdict=V.confirmed,
                          verified_value=0.441),
                    claim(metric="share", measure="share of completed revenue", entity=entity, segment=segment,
                          value=share, verdict=verdict, verified_value=share if verdict else None),
                    claim(metric="count", measure="customers in the top 10%", entity="customers",
                          segment="top 10% of customers by completed revenue", value=2067, verdict=V.confirmed,
                          verified_value=2067)]
        return i

    assert matches(top(), WHALES)
    assert matches(top(share=13.9), WHALES)  # the same share written in percent
    assert score_demo([top()], [WHALES]).found == ["revenue_concentration"]
    assert not matches(top(verdict=None), WHALES)  # the warehouse never confirmed the top 1%'s share
    assert not matches(top(verdict=V.rejected), WHALES)
    assert not matches(top(share=0.02), WHALES)  # 2% for 1% of customers: near the uniform spread
    assert not matches(top(segment="customers in the top 10%"), WHALES)  # another group's share
    assert not matches(top(entity="orders", segment="top 1% of orders by total_amount"), WHALES)  # another group
    assert not matches(top(), {**WHALES, "kind": "segment_gap"})  # only a concentration has this baseline
    # round 11: the same group named by its size, "top 241 customers by revenue" (1% of 24,093 buyers; the truth's
    # group has 207 here: 240 is within the count tolerance of it)
    by_size = top(segment="top 240 customers by revenue")
    assert matches(by_size, WHALES)
    assert not matches(top(segment="top 2,410 customers by revenue"), WHALES)  # the top 10%, by its size
    assert not matches(top(segment="top 10% of customers"), WHALES)
    # ... and its share of revenue summed over orders: the claim's entity is orders, its segment names customers
    assert matches(top(segment="top 240 customers by revenue", entity="orders"), WHALES)


def test_a_concentration_named_only_by_its_group_s_size_is_found():
    """Round 19 (gaming): "A few coins_large buyers bring most revenue: the top 85 payers (5% of the 1,700 players
    with a succeeded purchase) bring 68.1%", 85 payers counted and confirmed, never wrote "top 5%" and was scored as
    missing the planted whale concentration. Its group named by its size is the truth's top group; another size is
    another group, and a pattern that is no concentration is never named this way."""
    from assay.models import ValidationStatus as V

    whales = {"id": "whale_concentration", "kind": "concentration", "segment": "top 5% payers", "names": ["top 5%"],
              "entity": "players", "metric": ["revenue", "price_usd", "spend"], "affected_count": 85}
    i = unit("A few coins_large buyers bring most revenue, growing in October", 85, "players")
    i.description = ("The top 85 payers (5% of the 1,700 players with a succeeded purchase) bring $64,167.90 of the "
                     "$94,257.86 succeeded revenue (68.1%). The top 17 alone bring 18.9%.")
    i.claims = [claim(metric="sum", measure="succeeded revenue (sum of price_usd)", entity="purchases",
                      segment="succeeded purchases of the top 85 payers by succeeded revenue", value=64167.9,
                      verdict=V.confirmed, verified_value=64167.9),
                claim(metric="count", measure="payers in the top group by succeeded revenue", entity="players",
                      segment="top 85 payers by succeeded revenue", value=85, verdict=V.confirmed, verified_value=85)]
    assert matches(i, whales)
    assert not matches(i, {**whales, "affected_count": 170})  # the top 10% by its size is another group
    assert not matches(i, {**whales, "kind": "outlier_segment"})
    i.description = i.description.replace("top 85", "top 340").replace("top 17", "top 34")
    i.claims = [c.model_copy(update={"segment": c.segment.replace("85", "340")}) for c in i.claims]
    assert not matches(i, whales)


def test_a_concentration_named_in_a_list_of_top_groups_is_found():
    """Round 21 (gaming): "Revenue is concentrated in a few whales": "The top 1%, 5% and 10% of payers bring 20.4%,
    64.9% and 70.3% of it ... 73 payers with lifetime spend of $200 or more bring 64.0%", its count of players near
    the truth's 78, was scored as not naming the top 5%: a list of top groups names each of them. Another list
    (the top 1% and 10%) does not, nor does a list of shares that are not groups."""
    whales = {"id": "whale_concentration", "kind": "concentration", "segment": "top 5% payers", "names": ["top 5%"],
              "entity": "players", "metric": ["revenue", "price_usd", "spend"], "affected_count": 78}
    i = unit("Revenue is concentrated in a few whales, and increasingly so", 73, "players")
    i.description = ("Succeeded revenue totals $78,864.00 from 1,549 payers. The top 1%, 5% and 10% of payers bring "
                     "20.4%, 64.9% and 70.3% of it.")
    assert matches(i, whales)
    for other in ("The top 1% and 10% of payers bring 20.4% and 70.3% of it.",
                  "The top 1% of payers bring 20.4% of it; 5% and 10% of payers are whales."):
        i.description = other
        assert not matches(i, whales), other
    i.description = "The top 1%, 5%, and 10% of payers bring 20.4%, 64.9% and 70.3% of it."
    assert matches(i, whales)
    assert not matches(i, {**whales, "kind": "outlier_segment"})


def test_eval_demo_leaves_no_project_or_run_in_the_users_store(tmp_path, monkeypatch):
    """`assay eval demo` ran its discoveries in the user's store: eval-ecommerce and eval-gaming showed in
    `assay project list` and `assay runs` afterwards. It runs them in a temporary store, removed when it ends."""
    import tempfile

    from typer.testing import CliRunner

    from assay.cli import app
    from assay.settings import load_settings
    from assay.store import open_store

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the scratch store goes, to see it removed
    store = open_store(load_settings())
    before = ({p.id for p in store.list_projects()}, {r.id for r in store.list_runs(limit=1000)})
    r = CliRunner().invoke(app, ["eval", "demo", "--scale", "0.05", "--max-steps", "8"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "recall: " in r.output and "gaming: found " in r.output
    assert ({p.id for p in store.list_projects()}, {r.id for r in store.list_runs(limit=1000)}) == before
    assert not list(tmp_path.glob("assay-eval-*"))  # the scratch store's folder is gone
