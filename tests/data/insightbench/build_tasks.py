"""Builds the two tiny InsightBench-format tasks the harness test runs (deterministic; run once).

Task 1: 300 incidents; Hardware holds 60% of them and Fred Luddy's incidents take ~4x longer to
resolve; the time to resolution has no trend over time. Task 2: 250 expenses plus a users table;
processing time grows with the amount and HR's amounts are about 3x the others'.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).parent


def task1(rng: np.random.Generator) -> None:
    n = 300
    cats = rng.choice(["Hardware", "Software", "Network", "Database", "Inquiry / Help"], n,
                      p=[0.6, 0.1, 0.1, 0.1, 0.1])
    agents = rng.choice(["Fred Luddy", "Beth Anglin", "Luke Wilson", "Howard Johnson", "Charlie Whitherspoon"], n)
    opened = pd.Timestamp("2023-01-01") + pd.to_timedelta(np.sort(rng.uniform(0, 360, n)), unit="D")
    ttr = rng.gamma(4.0, 1.5, n) * np.where(agents == "Fred Luddy", 4.0, 1.0)
    pd.DataFrame({
        "number": [f"INC{i:07d}" for i in range(n)], "category": cats, "assigned_to": agents,
        "priority": rng.choice(["1 - Critical", "2 - High", "3 - Moderate", "4 - Low"], n),
        "opened_at": opened.strftime("%Y-%m-%d %H:%M:%S"),
        "closed_at": (opened + pd.to_timedelta(ttr, unit="D")).strftime("%Y-%m-%d %H:%M:%S"),
    }).to_csv(HERE / "csvs" / "flag-1.csv", index=False)
    (HERE / "flags" / "flag-1.json").write_text(json.dumps({
        "metadata": {"goal": "Find the imbalance in incidents across categories and agents' resolution times",
                     "dataset_description": "300 entries simulating a ServiceNow incidents table."},
        "insights": ["Hardware incidents are significantly higher than other categories",
                     "Fred Luddy has a significantly higher average time to resolution than other agents",
                     "", "The time to resolution of incidents is uniform over time"],
        "insight_list": [{"insight": "x"}, {"insight": "y"},
                         {"insight": "Hardware incidents make up most of the incidents"}, {"insight": "z"}],
    }, indent=1))


def task2(rng: np.random.Generator) -> None:
    n = 250
    dept = rng.choice(["HR", "IT", "Sales", "Finance", "Legal"], n)
    amount = rng.gamma(3.0, 300.0, n) * np.where(dept == "HR", 3.0, 1.0)
    opened = pd.Timestamp("2023-03-01") + pd.to_timedelta(rng.uniform(0, 200, n), unit="D")
    days = 1 + amount / 150 + rng.normal(0, 1.5, n).clip(-0.9, None)
    users = ["alice", "bob", "carol", "dan", "erin"]
    pd.DataFrame({
        "number": [f"EXP{i:06d}" for i in range(n)], "department": dept, "amount": amount.round(2),
        "user": rng.choice(users, n), "state": rng.choice(["Processed", "Declined", "Pending"], n, p=[.7, .2, .1]),
        "opened_at": opened.strftime("%Y-%m-%d %H:%M:%S"),
        "processed_date": (opened + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d %H:%M:%S"),
    }).to_csv(HERE / "csvs" / "flag-2.csv", index=False)
    pd.DataFrame({"user_name": users, "department": ["HR", "IT", "Sales", "Finance", "Legal"],
                  "start_date": ["2020-01-06", "2021-05-03", "2022-02-14", "2019-09-09", "2023-01-02"]}
                 ).to_csv(HERE / "csvs" / "flag-2-sysuser.csv", index=False)
    (HERE / "flags" / "flag-2.json").write_text(json.dumps({
        "metadata": {"goal": "Understand how the amount of an expense influences its processing time",
                     "dataset_description": "Two tables simulating the ServiceNow platform: the `sys_user` table "
                                            "and the `fm_expense_line` table."},
        "insights": ["There is a positive correlation between expense amount and processing time",
                     "HR has a significantly higher average expense amount than other departments"],
    }, indent=1))


if __name__ == "__main__":
    (HERE / "csvs").mkdir(exist_ok=True)
    (HERE / "flags").mkdir(exist_ok=True)
    r = np.random.default_rng(7)
    task1(r)
    task2(r)
