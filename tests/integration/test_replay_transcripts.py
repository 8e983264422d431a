"""Recorded model transcripts replayed end to end through the pipeline (tests/fixtures/transcripts).

A transcript is a real (or hand-played) model run recorded through the model bridge; the replay LLM
serves its answers in order and fails when the product asks something the recorded model never saw.
A prompt or loop change that would have confused the model shows up here as a failure, not a drift.
"""

from __future__ import annotations

import json

import pytest

from assay.explore import actions
from assay.llm import replay
from assay.llm.replay import TRANSCRIPTS, TranscriptMismatch
from assay.models import LLMConfig, Project, StepAction, WarehouseConfig
from assay.run.lifecycle import new_run_id, run_discovery_inline
from assay.settings import load_settings
from assay.store import open_store
from tests.seeded_vectors import seeded_vectors

NAME = "demo-ecommerce-8-steps"


def _project(demo_dir, pid):
    truth = json.loads((demo_dir / "ecommerce_truth.json").read_text())
    p = Project(id=pid, pack=truth["pack"], category=truth["category"], max_steps=8,
                # recorded before LLM table descriptions existed: the pass is off, as in those runs
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "ecommerce.duckdb"),
                                                                   "llm_descriptions": False},
                                          pii_columns=["email", "full_name"]),
                llm=LLMConfig(provider="replay", model=NAME))
    open_store(load_settings()).save_project(p)
    return p


def test_demo_ecommerce_transcript_replays_end_to_end(demo_dir):
    replay.reset(NAME)
    p = _project(demo_dir, "replay-ecommerce")
    with seeded_vectors(TRANSCRIPTS / NAME):  # the texts' vectors, as a warm host has them (no model run)
        result = run_discovery_inline(p.id, new_run_id())
    llm = replay.replay_llm(p.llm)
    llm.assert_consumed()  # every recorded answer was asked for, in order
    steps = open_store(load_settings()).steps(result.run_id)
    assert [s.action for s in steps].count(StepAction.query) == 8
    assert sum(1 for s in steps if s.action == StepAction.lookup_schema) == 1  # free: 8 queries still ran
    assert result.run_type.value == "full"
    names = " | ".join(i.name for i in result.insights)
    assert "Android cart-to-purchase fell" in names and "paid_social" in names
    assert all(i.validation and i.validation.status.value == "confirmed" for i in result.insights)
    assert len(result.recommendations) == 3
    assert result.recommendations[0].related_insight_ids == ["conversion-1"]
    # one numbering (explore/numbering.py): the lookup (stored step 1) is free and has no number, so the queries the
    # product showed as [step 1..8] are stored steps 2..9; the recorded model saw stored numbers and cited [3, 4] for
    # the android drop: the replay translates that into the numbers shown (2, 3), which resolve to stored 3 and 4
    assert [s.shown for s in steps if s.action == StepAction.lookup_schema] == [0]
    assert [s.shown for s in steps if s.action == StepAction.query] == list(range(1, 9))
    android = next(i for i in result.insights if i.name.startswith("Android cart-to-purchase fell"))
    assert android.source_steps == [3, 4]
    assert not android.ungrounded  # its numbers are in the steps it cites


def test_a_changed_tool_set_fails_loudly(demo_dir, monkeypatch):
    replay.reset(NAME)
    real = actions.tool_specs
    monkeypatch.setattr("assay.explore.loop.tool_specs",
                        lambda allowed=None: [t for t in real(allowed) if t.name != "search_tables"])
    p = _project(demo_dir, "replay-ecommerce-drift")
    with pytest.raises(TranscriptMismatch, match=r"request 0001 .*'tools:done,lookup_schema,query', the recording has"):
        run_discovery_inline(p.id, new_run_id())


def test_a_dropped_tool_result_fails_loudly(demo_dir, monkeypatch):
    replay.reset(NAME)
    from assay.explore.loop import Explorer

    real = Explorer._execute

    def drop_lookups(self, acts, turn):  # a loop bug: schema actions silently skipped
        return real(self, [a for a in acts if a.kind != "lookup_schema"], turn)

    monkeypatch.setattr(Explorer, "_execute", drop_lookups)
    p = _project(demo_dir, "replay-ecommerce-dropped")
    with pytest.raises(TranscriptMismatch, match=r"request 0002 .*tool result"):
        run_discovery_inline(p.id, new_run_id())


# Two 30-step runs by a model answering through the bridge as a careful analyst (2026-11-23, demo scale 1; the
# replay runs on the session's smaller demo: results differ, the conversation's shape must not).
# Round 4 (2026-11-23, session 6: the explorer told the analysis areas, the analysis asked for at most 3 findings per
# area) runs with LLM table descriptions on, as recorded: its first request describes the tables.
REAL_MODEL = {
    "demo-ecommerce-30-steps": ("ecommerce", ["Android cart-to-purchase collapsed", "Paid-social customers"]),
    # round 2's gaming run is retired (session 7): the verifier's affected-count claim now takes the segment of the
    # claim that measures the outcome rate, which that run's recorded count query already applied, so the product
    # no longer sends the corrective round the recording answers (one verification request fewer)
    # round 4's and round 6's ecommerce runs and round 6's gaming run are retired (session 8): the verifier no longer
    # sends the corrective rounds they answer (an entity of one type of events is events: r6 ecommerce 0014/0024; a
    # counterfactual count reads the window before the period on purpose: r4 0016, r6 0018/0026; a change of a share
    # follows the share rule: r4 0029, r6 0033; a reach rate's denominator is every row: r6 gaming 0036), so each
    # later answer would verify another claim (the replay now fails on that). Their fixtures stay for
    # bench/estimate_real.py; round 7 replaces them.
    "demo-gaming-30-steps-r4": ("gaming", ["Level 42 is a hard wall", "iOS purchase failures jumped"]),
    # round 5's runs (statistical leads) and round 7's are retired (session 10): the verifier reads a condition on a
    # column a CTE renamed as the stated condition (validate/conditions.py: renames_of), so it no longer sends the
    # corrective round they answer (r7 gaming 0017, r7 ecommerce 0018, r5 ecommerce and gaming one each), and each
    # later answer would verify another claim. Their fixtures stay for bench/estimate_real.py; round 8 replaces them.
    # Round 8 (2026-11-27, session 10: baseline restatements folded, absences as context, renamed CTE columns read as
    # what they name, the refusal's reason first, the scan's leads in the analysis prompt, the explorer's rows kept)
    "demo-ecommerce-30-steps-r8": ("ecommerce", ["On platform = android, purchase per add_to_cart fell",
                                                 "37 of 400 products have a NULL category"]),
    # (gaming's round 8 is retired from the replays in session 20, its fixtures kept: round 20 replays the gaming demo
    # as it is generated since, sessions and purchases in time order over each player's lifetime)
    # Rounds 9, 10 and 11 (session 11): the scan's uncovered findings adopted, fit claims and a share's whole, the step
    # budget as the loop counts it; from round 10 a rate's segment_sql as its denominator and headlines of at most 20
    # words; round 11 a lead covered by meaning only with one of its figures (bench/README.md gives each one's figures)
    # (round 9 is retired from the replays in session 12, its fixtures kept for bench/estimate_real.py: rounds 10
    # and 11 replay the same regime, and each replay costs the suite ~20 s of CPU)
    # (rounds 10 and 11 are retired from the replays at the end of session 12, their fixtures kept for
    # bench/estimate_real.py: rounds 14-16 replay the session's regime, and each replay costs the suite ~20 s of CPU)
    # (round 14 is retired from the replays in session 13, its fixtures kept for bench/estimate_real.py: rounds 15
    # and 16 replay its regime, and each replay costs the suite ~10-13 s of CPU)
    # (round 16 is retired from the replays in session 14, its fixtures kept for bench/estimate_real.py: rounds 15,
    # 17 and 18 replay its regime)
    # (round 15 is retired from the replays in session 21, its fixtures kept for bench/estimate_real.py: round 21
    # replays both demos on today's code)
    # Round 17 (session 13): the questions a turn holds said once (by the tools), headlines in the question's words
    # and at most 12; its recommendations answer was refused once (a priority of 6) and answered again
    "demo-gaming-30-steps-r17": ("gaming", ["Level 42 is a difficulty wall",
                                            "iOS purchases fail far more often since May 2026"]),
    # (rounds 18 (both demos) and 19 (gaming) are retired from the replays in session 23, their fixtures kept for
    # bench/estimate_real.py: they ran the code of rounds 17 and 18 (no regime of their own), the gaming ones on the
    # demo as generated before session 20; rounds 21 and 22 replay both demos on today's code, and each replay costs
    # the suite ~5-6 s of CPU. Round 19's ecommerce run is held by test_a_share_of_a_total_is_no_longer_sent_back)
    # (round 20, the first on the realistic gaming demo, is retired from the replays in session 22, its fixtures kept
    # for bench/estimate_real.py: rounds 21 and 22 replay that demo on today's code)
    # Round 21 (session 21): both demos on session 20's code (main at 8a68823); figures in bench/README.md (its
    # ecommerce run is retired from the replays in session 22, its fixtures kept: round 22 replays that demo)
    # (round 21's gaming run is retired from the replays in session 26, its fixtures kept: rounds 22 and 24 replay that
    # demo)
    # Round 22 (session 22): both demos on session 21's code with the analysis prompt's numbered leads (L1, L2, ...):
    # the models' insights list the leads they report, and the scan adopts none of those (gaming round 21 adopted the
    # revenue's growth and the rise in average price beside the insight that explained both)
    "demo-ecommerce-30-steps-r22": ("ecommerce", ["Android cart-to-purchase conversion collapsed from July onward",
                                                  "Paid social customers buy and come back far less than other"]),
    "demo-gaming-30-steps-r22": ("gaming", ["Level 42 is a difficulty wall far harder than its neighbours",
                                            "Revenue growth comes from top payers while other payers' spend stays"]),
    # Round 24 (session 26): both demos on session 25's code (main at ead87c8: the guard of red teams 9-12 and the
    # false-refusal audit's relaxations): no query refused, one schema action in 58 requests
    "demo-ecommerce-30-steps-r24": ("ecommerce", ["Android cart-to-purchase conversion collapsed from July 2026",
                                                  "A fifth of paid_social signups never show any activity"]),
    "demo-gaming-30-steps-r24": ("gaming", ["Level 42 is a difficulty wall that most players never pass",
                                            "iOS purchase failures jumped in May 2026 and stayed high"]),
}
# the rounds whose model listed the leads its insights report: every lead it listed stays unadopted
LISTS_LEADS = {"demo-ecommerce-30-steps-r22", "demo-gaming-30-steps-r22", "demo-ecommerce-30-steps-r24",
               "demo-gaming-30-steps-r24"}
DESCRIBED = {"demo-ecommerce-30-steps-r4", "demo-gaming-30-steps-r4",
             "demo-ecommerce-30-steps-leads", "demo-gaming-30-steps-leads",
             "demo-ecommerce-30-steps-r6", "demo-gaming-30-steps-r6",
             "demo-ecommerce-30-steps-r7", "demo-gaming-30-steps-r7",
             "demo-ecommerce-30-steps-r8", "demo-gaming-30-steps-r8",
             "demo-ecommerce-30-steps-r9", "demo-gaming-30-steps-r9",
             "demo-ecommerce-30-steps-r10", "demo-gaming-30-steps-r10",
             "demo-ecommerce-30-steps-r11", "demo-gaming-30-steps-r11",
             "demo-ecommerce-30-steps-r14", "demo-gaming-30-steps-r14",
             "demo-ecommerce-30-steps-r15", "demo-gaming-30-steps-r15",
             "demo-ecommerce-30-steps-r16", "demo-gaming-30-steps-r16", "demo-gaming-30-steps-r17",
             "demo-ecommerce-30-steps-r18", "demo-gaming-30-steps-r18", "demo-gaming-30-steps-r19",
             "demo-gaming-30-steps-r20", "demo-ecommerce-30-steps-r21", "demo-gaming-30-steps-r21",
             "demo-ecommerce-30-steps-r22", "demo-gaming-30-steps-r22",
             "demo-ecommerce-30-steps-r24", "demo-gaming-30-steps-r24"}
QUERIES = {"demo-ecommerce-30-steps-leads": 25, "demo-gaming-30-steps-leads": 22,
           "demo-ecommerce-30-steps-r6": 28, "demo-gaming-30-steps-r6": 28, "demo-gaming-30-steps-r7": 27,
           "demo-ecommerce-30-steps-r7": 29, "demo-gaming-30-steps-r8": 27,
           "demo-ecommerce-30-steps-r8": 22, "demo-ecommerce-30-steps-r9": 27, "demo-gaming-30-steps-r9": 27,
           "demo-ecommerce-30-steps-r10": 23, "demo-gaming-30-steps-r10": 23,
           "demo-ecommerce-30-steps-r11": 24, "demo-gaming-30-steps-r11": 27,
           "demo-ecommerce-30-steps-r14": 28, "demo-gaming-30-steps-r14": 28,
           "demo-ecommerce-30-steps-r15": 29, "demo-gaming-30-steps-r15": 27,
           "demo-ecommerce-30-steps-r16": 23, "demo-gaming-30-steps-r16": 29,
           "demo-gaming-30-steps-r17": 30, "demo-ecommerce-30-steps-r18": 27,
           "demo-gaming-30-steps-r18": 29, "demo-gaming-30-steps-r19": 29,
           "demo-gaming-30-steps-r20": 28, "demo-ecommerce-30-steps-r21": 27, "demo-gaming-30-steps-r21": 28,
           "demo-ecommerce-30-steps-r22": 25, "demo-gaming-30-steps-r22": 28,
           "demo-ecommerce-30-steps-r24": 27, "demo-gaming-30-steps-r24": 27}  # as recorded (the model's done)


# recorded with the statistical leads scan on (rounds 5, 6 and 7, the product's default since): replayed with it on
# (the tests turn it off by default, tests/conftest.py); the older rounds had no scan and replay without one
RECORDED_WITH_LEADS = {"demo-ecommerce-30-steps-leads", "demo-gaming-30-steps-leads",
                       "demo-ecommerce-30-steps-r6", "demo-gaming-30-steps-r6",
                       "demo-ecommerce-30-steps-r7", "demo-gaming-30-steps-r7",
                       "demo-ecommerce-30-steps-r8", "demo-gaming-30-steps-r8",
                       "demo-ecommerce-30-steps-r9", "demo-gaming-30-steps-r9",
                       "demo-ecommerce-30-steps-r10", "demo-gaming-30-steps-r10",
                       "demo-ecommerce-30-steps-r11", "demo-gaming-30-steps-r11",
                       "demo-ecommerce-30-steps-r14", "demo-gaming-30-steps-r14",
                       "demo-ecommerce-30-steps-r15", "demo-gaming-30-steps-r15",
                       "demo-ecommerce-30-steps-r16", "demo-gaming-30-steps-r16", "demo-gaming-30-steps-r17",
                       "demo-ecommerce-30-steps-r18", "demo-gaming-30-steps-r18", "demo-gaming-30-steps-r19",
                       "demo-gaming-30-steps-r20", "demo-ecommerce-30-steps-r21", "demo-gaming-30-steps-r21",
                       "demo-ecommerce-30-steps-r22", "demo-gaming-30-steps-r22",
             "demo-ecommerce-30-steps-r24", "demo-gaming-30-steps-r24"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.leads_default) if n in RECORDED_WITH_LEADS else n
                                  for n in sorted(REAL_MODEL)])
def test_real_model_transcript_replays_end_to_end(demo_dir, name):
    which, headlines = REAL_MODEL[name]
    replay.reset(name)
    truth = json.loads((demo_dir / f"{which}_truth.json").read_text())
    p = Project(id=f"replay-{name}", pack=truth["pack"], category=truth["category"], max_steps=30,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / f"{which}.duckdb"),
                                                                   "llm_descriptions": name in DESCRIBED}),
                llm=LLMConfig(provider="replay", model=name))
    store = open_store(load_settings())
    store.save_project(p)
    # table descriptions are cached by the tables' content: another transcript's run on the same demo would
    # answer this one's first request (the description pass) from the cache, and the replay would start a turn late
    store.db.table_notes.delete_many({})
    with seeded_vectors(TRANSCRIPTS / name):
        result = run_discovery_inline(p.id, new_run_id())
    replay.replay_llm(p.llm).assert_consumed()  # every recorded answer asked for, in order
    scanned = store.get_run(result.run_id).telemetry.leads_probes
    assert (scanned > 0) == (name in RECORDED_WITH_LEADS), scanned  # the scan as recorded
    steps = open_store(load_settings()).steps(result.run_id)
    assert sum(1 for s in steps if s.action == StepAction.query) >= QUERIES.get(name, 24)
    assert not any(s.refused and "information_schema" in (s.query or "").lower() for s in steps)
    assert result.run_type.value == "full" and not result.errors
    names = " | ".join(i.name for i in result.insights)
    assert all(h in names for h in headlines), names
    assert all(i.validation is not None for i in result.insights)  # every insight went through verification
    assert result.recommendations
    if name in LISTS_LEADS:  # read as the adoption reads them (the scan's headline against the adopted finding's)
        from assay.findings import lists_lead
        from assay.run.adopt import lead_line

        listed = [h for i in result.insights for h in i.leads]
        assert listed and not any(i.origin and lists_lead(lead_line(i), listed) for i in result.insights), \
            [(i.name, i.origin, i.leads) for i in result.insights]
        # every headline a model listed is one of the scan's leads of the run, whole
        from assay.explore.leads import lead_titles

        titles = lead_titles(store.get_run(result.run_id).leads or "")
        assert set(listed) <= set(titles), sorted(set(listed) - set(titles))


RETIRED = {"demo-ecommerce-30-steps-r4": 16, "demo-ecommerce-30-steps-r6": 15, "demo-gaming-30-steps-r6": 37,
           "demo-gaming-30-steps-r7": 17, "demo-ecommerce-30-steps-r7": 18}


@pytest.mark.parametrize("name", ["demo-ecommerce-30-steps-r6"])
def test_a_removed_corrective_round_fails_loudly_instead_of_verifying_the_wrong_claim(demo_dir, name):
    """Round 6's ecommerce run answered a corrective round the verifier no longer sends (the entity check now
    compares head nouns): every later recorded answer would re-derive the claim after the one it was written for.
    The replay compares each verification request's claim (metric, measure) with the recording's and fails."""
    replay.reset(name)
    truth = json.loads((demo_dir / "ecommerce_truth.json").read_text())
    p = Project(id=f"replay-retired-{name}", pack=truth["pack"], category=truth["category"], max_steps=30,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "ecommerce.duckdb"),
                                                                   "llm_descriptions": True}),
                llm=LLMConfig(provider="replay", model=name))
    store = open_store(load_settings())
    store.save_project(p)
    store.db.table_notes.delete_many({})
    run_id = new_run_id()
    with pytest.raises(TranscriptMismatch), seeded_vectors(TRANSCRIPTS / name):  # (the run goes on to its
        run_discovery_inline(p.id, run_id)  # recommendations, which fail as well)
    errors = [log.error or "" for _, log in store.area_results(run_id).values()]
    assert any(f"request {RETIRED[name]:04d} (verify): verifies ('change', 'daily purchase events per add_to_cart "
               "event'), the recording verified ('count', 'android add_to_cart events')" in e for e in errors), errors


@pytest.mark.leads_default
def test_a_corrective_round_for_a_renamed_column_is_no_longer_sent(demo_dir):
    """Round 7's gaming model renamed the stated condition's expression in a CTE (``date_diff(...) AS
    last_active_day``, then ``WHERE last_active_day < 1``) and was asked again (request 0017). The verifier now
    reads the renamed column as what it names and accepts the first query, so the recorded corrective answer is
    not asked for: the replay fails loudly on the next claim instead of verifying the wrong one."""
    name = "demo-gaming-30-steps-r7"
    replay.reset(name)
    truth = json.loads((demo_dir / "gaming_truth.json").read_text())
    p = Project(id=f"replay-retired-{name}", pack=truth["pack"], category=truth["category"], max_steps=30,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "gaming.duckdb"),
                                                                   "llm_descriptions": True}),
                llm=LLMConfig(provider="replay", model=name))
    store = open_store(load_settings())
    store.save_project(p)
    store.db.table_notes.delete_many({})
    run_id = new_run_id()
    with pytest.raises(TranscriptMismatch), seeded_vectors(TRANSCRIPTS / name):
        run_discovery_inline(p.id, run_id)
    errors = [log.error or "" for _, log in store.area_results(run_id).values()]
    assert any(f"request {RETIRED[name]:04d} (verify): verifies ('rate', 'share of players with no session since "
               "2026-10-01'), the recording verified ('average', 'highest level attempted')" in e for e in errors), errors


@pytest.mark.leads_default
def test_a_share_of_a_total_is_no_longer_sent_back(demo_dir):
    """Round 19's ecommerce model claimed "android's share of completed revenue fell from 0.318 to 0.120" (a change
    with sum_sql) and re-derived it as a ratio of SUMs; the verifier then refused the ratio as no total (request
    0024, a corrective round), took the bare SUM the model gave next and marked the critical insight adjusted. A
    share of a total is now checked as a share: the first answer is accepted, the corrective round is not sent, and
    the replay fails loudly on the next claim instead of verifying the wrong one."""
    name = "demo-ecommerce-30-steps-r19"
    replay.reset(name)
    truth = json.loads((demo_dir / "ecommerce_truth.json").read_text())
    p = Project(id=f"replay-retired-{name}", pack=truth["pack"], category=truth["category"], max_steps=30,
                warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(demo_dir / "ecommerce.duckdb"),
                                                                   "llm_descriptions": True}),
                llm=LLMConfig(provider="replay", model=name))
    store = open_store(load_settings())
    store.save_project(p)
    store.db.table_notes.delete_many({})
    run_id = new_run_id()
    with pytest.raises(TranscriptMismatch), seeded_vectors(TRANSCRIPTS / name):
        run_discovery_inline(p.id, run_id)
    errors = [log.error or "" for _, log in store.area_results(run_id).values()]
    assert any("request 0024 (verify): verifies ('count', 'completed android orders in July 2026, the month revenue "
               "collapsed'), the recording verified ('change', 'android share of completed revenue (total_amount)')"
               in e for e in errors), errors
