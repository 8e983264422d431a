"""Summarise bench/guard.py's details file as Markdown: per class, the harmful executions by lane,
with up to three example statements and what they did (python bench/guard_findings.py DETAILS [LABEL])."""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main() -> None:
    recs = json.loads(open(sys.argv[1]).read())
    label = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    att = [r for r in recs if r["kind"] == "attack"]
    harmful = [r for r in att if r["harm"]]
    print(f"### {label}: {len(harmful)} harmful of {len(att)} attack executions")
    by = defaultdict(list)
    for r in harmful:
        by[r["cls"]].append(r)
    for cls in sorted(by, key=lambda c: -len(by[c])):
        rs = by[cls]
        lanes = defaultdict(int)
        for r in rs:
            lanes[r["lane"]] += 1
        print(f"- **{cls}** ({', '.join(f'{k} {v}' for k, v in sorted(lanes.items()))}):")
        seen, shown = set(), 0
        for r in sorted(rs, key=lambda r: (r["lane"] != "pg_low", r["lane"])):
            key = (r["harm"][0].split(":")[0], r["lane"])
            if key in seen or shown >= 3:
                continue
            seen.add(key)
            shown += 1
            sql = " ".join(r["sql"].split())[:160]
            print(f"  - `{sql}` [{r['lane']}, {r['status']}] -> {'; '.join(h[:140] for h in r['harm'][:2])}")
    gaps = [r for r in harmful if r.get("leaks_after_verdict_mask")]
    if gaps:
        print(f"- **PII the guard's masked_outputs would not cover** (lineage gaps, {len(gaps)}):")
        for r in gaps[:6]:
            print(f"  - `{' '.join(r['sql'].split())[:140]}` [{r['lane']}] -> {r['leaks_after_verdict_mask'][0][:80]}")
    leg = [r for r in recs if r["kind"] == "legit" and r["status"] != "ok"]
    if leg:
        print(f"- **legit queries that did not pass** ({len(leg)}):")
        for r in leg[:6]:
            print(f"  - `{' '.join(r['sql'].split())[:140]}` [{r['lane']}] {r['status']}: {r.get('msg', '')[:140]}")
    crashes = [r for r in recs if r["status"] == "crash"]
    if crashes:
        print(f"- **crashes** (an exception escaped Executor.run: a run failure) ({len(crashes)}):")
        for r in crashes[:4]:
            print(f"  - `{' '.join(r['sql'].split())[:120]}` [{r['lane']}] {r.get('msg', '')[:160]}")


if __name__ == "__main__":
    main()
