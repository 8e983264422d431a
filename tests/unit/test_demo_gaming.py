"""The gaming demo's data behaves like a game's logs: what an analyst finds there that was not planted is the data's
nature, not the generator's shortcuts.

Real models reported four of the generator's shortcuts as findings (bench/README.md, rounds 13-19): one level
attempt in two timestamped before the previous one, attempts and a third of the purchases outside every session of
the player (after the buyer's last one), and recent install cohorts with up to 3.7x the sessions of older ones in
their first two weeks (a fixed number of sessions squeezed into the time left before the data ends).
"""

from __future__ import annotations

import json

import duckdb
import pytest


@pytest.fixture(scope="module")
def con(demo_dir):
    c = duckdb.connect(str(demo_dir / "gaming.duckdb"), read_only=True)
    yield c
    c.close()


def one(con, sql):
    return con.execute(sql).fetchone()[0]


def test_a_players_level_attempts_follow_each_other_in_time(con):
    assert one(con, """SELECT count(*) FROM (SELECT attempted_at, lag(attempted_at) OVER (
                       PARTITION BY player_id ORDER BY level, attempt_no) prev FROM level_attempts)
                       WHERE attempted_at < prev""") == 0


def test_attempts_and_purchases_happen_within_a_session_of_the_player(con):
    for table, at in (("level_attempts", "attempted_at"), ("purchases", "purchased_at")):
        outside = one(con, f"""SELECT count(*) FROM {table} x WHERE NOT EXISTS (SELECT 1 FROM sessions s
                               WHERE s.player_id = x.player_id AND x.{at} >= s.started_at
                               AND x.{at} <= s.started_at + INTERVAL 1 SECOND * greatest(s.duration_s, 0) + INTERVAL 1 HOUR)""")
        assert outside == 0, table


def test_a_players_sessions_do_not_overlap(con):
    """(The planted sessions that end before they start excepted: their logged end is the defect.)"""
    assert one(con, """SELECT count(*) FROM (SELECT started_at, lag(started_at + INTERVAL 1 SECOND * greatest(duration_s, 0))
                       OVER (PARTITION BY player_id ORDER BY started_at) prev_end FROM sessions)
                       WHERE started_at < prev_end""") == 0


def test_recent_cohorts_play_as_often_as_older_ones_in_their_first_two_weeks(con):
    """Every cohort has had at least 14 days (installs end 14 days before the data does)."""
    per_month = [r[1] for r in con.execute("""
        SELECT strftime(p.installed_at, '%Y-%m'), avg(n) FROM players p JOIN (
          SELECT s.player_id, count(*) n FROM sessions s JOIN players p USING (player_id)
          WHERE s.started_at < p.installed_at + INTERVAL 14 DAY GROUP BY 1) USING (player_id)
        GROUP BY 1 ORDER BY 1""").fetchall()]
    assert len(per_month) == 12
    assert max(per_month) / min(per_month) < 1.3, per_month  # was 3.7 (October against November)


def test_the_planted_patterns_hold(con, demo_dir):
    truth = {p["id"]: p for p in json.loads((demo_dir / "gaming_truth.json").read_text())["patterns"]}
    no_return = dict(con.execute("""SELECT acquisition_channel = 'tiktok_ads', avg(CASE WHEN NOT EXISTS (
        SELECT 1 FROM sessions s WHERE s.player_id = p.player_id AND s.started_at >= p.installed_at + INTERVAL 1 DAY)
        THEN 1 ELSE 0 END) FROM players p GROUP BY 1""").fetchall())
    assert 0.62 < no_return[True] < 0.78 and 0.18 < no_return[False] < 0.27, no_return
    wins = dict(con.execute("SELECT level, avg(won::int) FROM level_attempts WHERE level IN (41, 42, 43) "
                            "GROUP BY 1").fetchall())
    assert wins[42] < 0.1 < 0.45 < min(wins[41], wins[43]), wins
    fail = dict(con.execute("""SELECT platform = 'ios' AND purchased_at >= TIMESTAMP '2026-05-15',
                               avg((status = 'failed')::int) FROM purchases GROUP BY 1""").fetchall())
    assert fail[True] > 0.3 and fail[False] < 0.06, fail
    dur = dict(con.execute("SELECT p.country = 'BR', avg(duration_s) FROM sessions JOIN players p USING (player_id) "
                           "WHERE duration_s > 0 GROUP BY 1").fetchall())
    assert 0.4 < dur[True] / dur[False] < 0.65, dur
    assert truth["negative_session_duration"]["affected_count"] == 412
    assert truth["whale_concentration"]["affected_count"] > 0
