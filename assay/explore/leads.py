"""Statistical leads for the LLM explorer.

Before the model explores, the statistical analyst's planner runs a few probes (``analysis.leads_probes``,
through the run's guarded executor, no LLM) and its detectors rank what those probes show. The strongest
candidates open the explorer's prompt as *leads*: a headline, the numbers and the SQL behind them, said to be
unverified. They are not insights: the scan's probes are not steps of the exploration, so the analysis cannot
cite them. The scan's probe steps are stored with the run (``Store.put_scan``); after the analysis, the findings
the statistical analyst would report and no LLM insight covers are adopted as insights (``run/adopt.py``).

A scan that fails (a warehouse error, an odd result) leaves the explorer without leads, never the run
without an exploration.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from ..models import ExplorationStep

log = logging.getLogger("assay")

MAX_LEADS = 8             # leads shown to the explorer, strongest first
LEAD_TEXT_CHARS = 320     # the numbers of one lead (its detector's description)
LEAD_SQL_CHARS = 480      # the probe SQL of one lead, on one line
SECTION_MAX_CHARS = 7_000

HEADER = ("## Leads from a statistical scan (unverified)\n"
          "Before you started, a statistical scan ran {probes} automatic probe queries on this warehouse and "
          "flagged the candidates below, strongest first. They are NOT findings: each may be noise, an artifact "
          "of how the data is stored, or the same fact twice, and the scan saw only part of the warehouse. "
          "Check or dismiss each one with your own queries: only what your own steps show can be reported, and "
          "the analysis cannot cite this list. Do not stop at them: the areas and questions they do not touch "
          "still need your steps.")


@dataclass
class Lead:
    headline: str
    numbers: str
    sql: str
    kind: str
    score: float
    sql_label: str = "probe SQL"


class _CachingExecutor:
    """The run's executor, each distinct query run once: the detectors re-read a probe's result when its
    digest kept only some rows, and that re-read must not spend another query."""

    def __init__(self, executor):
        self._executor = executor
        self._seen: dict[str, object] = {}
        self.queries = 0

    def run(self, sql, *args, **kw):
        if sql not in self._seen:
            self.queries += 1
            self._seen[sql] = self._executor.run(sql, *args, **kw)
        return self._seen[sql]

    def __getattr__(self, name):
        return getattr(self._executor, name)


class _ScanSession:
    """The run session as the planner and detectors see it, with the caching executor (and, when given, a store
    whose steps are the scan's probes: run/adopt.py)."""

    def __init__(self, s, executor: _CachingExecutor, store=None):
        self._s = s
        self.executor = executor
        if store is not None:
            self.store = store

    def __getattr__(self, name):
        return getattr(self._s, name)


def _one_line(text: str, cap: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= cap else text[: cap - 1] + "…"


def scan(s, probes: int, steps_out: list[ExplorationStep] | None = None) -> tuple[list[Lead], int]:
    """The leads of a statistical scan of at most ``probes`` probe queries, and the queries it ran; its probe
    steps go into ``steps_out`` when given (stored on the run: run/adopt.py rebuilds its findings from them)."""
    from ..stats import detectors as D
    from ..stats.analyst import (_dedupe, detect_all, drop_artifact_echoes, fold_spreads_into_outliers,
                                 merge_segment_outliers, worth_reporting)
    from ..stats.planner import explore_statistically
    from ..stats.portable import portable

    ex = _CachingExecutor(s.generated_executor)  # its SQL is the product's: a tenant predicate is written in
    ss = _ScanSession(s, ex)
    steps: list[ExplorationStep] = []
    explore_statistically(ss, [], steps.append, max_steps=probes, behaviour_first=True)
    if steps_out is not None:
        steps_out.extend(steps)
    failed = [st for st in steps if not st.ok]
    if steps and len(failed) == len(steps):
        raise RuntimeError(f"every probe failed ({failed[0].error})")
    errors: list[str] = []
    cands = detect_all(ss, steps, lambda step, err: errors.append(f"probe {step}: {err}"))
    if errors:
        log.info("leads: %d probe result(s) skipped by the detectors (%s)", len(errors), errors[0][:200])
    goal = s.run.goal or (s.pack.description if s.pack.name == "goal" else "")
    found = worth_reporting(fold_spreads_into_outliers(drop_artifact_echoes(_dedupe(D.score(cands)))), goal)
    found, _ = merge_segment_outliers(found)
    by_step = {st.step: st for st in steps}
    leads = []
    for c in found[:MAX_LEADS]:
        st = by_step.get(c.step)
        probe_sql = " ".join((st.query if st else "").split())
        # the probe that showed it; when that is too long to read (a profile of every column), the query
        # that counts the rows it is about
        sql, label = (probe_sql, "probe SQL") if len(probe_sql) <= LEAD_SQL_CHARS or not c.count_sql \
            else (portable(c.count_sql, s.warehouse.dialect), "count SQL")
        leads.append(Lead(headline=_one_line(c.name, 200), numbers=_one_line(c.description, LEAD_TEXT_CHARS),
                          sql=_one_line(sql, LEAD_SQL_CHARS), sql_label=label, kind=str(c.kind), score=c.score))
    return leads, ex.queries


def render(leads: list[Lead], probes: int) -> str:
    """The prompt section: a few lines per lead, capped."""
    if not leads:
        return ""
    out = HEADER.format(probes=probes)
    for n, lead in enumerate(leads, start=1):
        item = (f"\n{n}. {lead.headline} ({lead.kind.replace('_', ' ')}, score {lead.score:.2f})\n"
                f"   numbers: {lead.numbers}\n   {lead.sql_label}: {lead.sql}")
        if len(out) + len(item) > SECTION_MAX_CHARS:
            break
        out += item
    return out


_ITEM = re.compile(r"^\d+\. (.+?) \([^()]*, score [0-9.]+\)\n   numbers: (.*)$", re.M)


def headlines(text: str, numbers_chars: int = 200) -> list[str]:
    """The leads of a rendered section (``render``) as "headline: numbers" lines, without their SQL."""
    return [f"{h}: {_one_line(n, numbers_chars)}" for h, n in _ITEM.findall(text or "")]


def lead_titles(text: str) -> list[str]:
    """The leads' headlines alone, whole (a headline may hold ": " itself)."""
    return [h for h, _ in _ITEM.findall(text or "")]


def leads_section(s) -> str:
    """The run's leads section, scanned once per run (a resumed exploration reads the stored one).
    Off (``analysis.leads_probes: 0``): no scan, no section. A failed scan: no section, one log line."""
    if s.run.leads is not None:
        return s.run.leads
    budget = max(0, int(s.project.analysis.leads_probes))
    text = ""
    if budget:
        try:
            probes: list[ExplorationStep] = []
            leads, queries = scan(s, budget, probes)
            text = render(leads, queries)
            try:  # before the run says it scanned: a resumed run never re-scans
                s.store.put_scan(s.run_id, probes)
            except Exception as exc:  # only the adoption needs them: the explorer keeps its leads
                log.warning("leads: the scan's probes could not be stored (%s); its findings will not be adopted",
                            str(exc)[:300])
            s.bump({"leads_probes": queries, "leads": len(leads)})
            log.info("leads: %d probe queries, %d leads for the explorer", queries, len(leads))
        except Exception as exc:  # the scan is help: the explorer starts without it
            log.warning("leads: the statistical scan failed (%s: %s); the explorer starts without leads",
                        type(exc).__name__, str(exc)[:300])
            text = ""
    s.store.update_run(s.run_id, leads=text)
    s.refresh()
    return text
