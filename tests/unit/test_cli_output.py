"""What a person sees from the CLI: the no-LLM note once, in one wording; Prefect without telemetry."""

from __future__ import annotations

from typer.testing import CliRunner

from assay.cli import app
from assay.models import DiscoveryResult, DiscoveryRun
from assay.run.analyst import STATISTICAL_NOTE
from assay.settings import load_settings
from assay.store import open_store


def test_no_llm_note_is_printed_once_in_one_wording():
    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="nollm0001", project_id="p", analyst="statistical"))
    store.save_result(DiscoveryResult(run_id="nollm0001", project_id="p", domain="ecommerce", analyst="statistical",
                                      recommendation_note=STATISTICAL_NOTE))
    r = CliRunner().invoke(app, ["show", "nollm0001"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert flat.count("statistical analyst ran") == 1, r.output
    assert flat.count("Recommendations need an LLM") == 1, r.output
    assert "No LLM configured:" not in flat  # the second wording is gone
    from assay.llm.resolve import HOW_TO_ADD_AN_LLM

    assert HOW_TO_ADD_AN_LLM in flat  # and how to add one, in the words of every other message
    # a project that chose the statistical analyst hears of its choice, not of keys
    store.create_run(DiscoveryRun(id="nollm0002", project_id="p", analyst="statistical",
                                  analyst_note="analyst: statistical because the project sets analyst: statistical"))
    store.save_result(DiscoveryResult(run_id="nollm0002", project_id="p", domain="ecommerce", analyst="statistical"))
    flat = " ".join(CliRunner().invoke(app, ["show", "nollm0002"], catch_exceptions=False).output.split())
    assert "the project sets analyst: statistical; set analyst: auto in the project" in flat, flat
    assert "ANTHROPIC_API_KEY" not in flat, flat


def test_cli_runs_prefect_without_telemetry(monkeypatch):
    import os

    from prefect._internal.analytics import ci_detection
    from prefect._internal.analytics.enabled import is_telemetry_enabled

    from assay.cli import _prefect_env

    monkeypatch.setattr(ci_detection, "is_ci_environment", lambda: False)  # what a user's terminal is
    monkeypatch.delenv("DO_NOT_TRACK", raising=False)
    monkeypatch.setattr("prefect._internal.analytics.enabled.is_ci_environment", lambda: False)
    assert is_telemetry_enabled()  # a user's terminal: the first-run notice would be printed
    _prefect_env()
    try:
        assert not is_telemetry_enabled()  # ... not by the CLI's Prefect (its server process inherits this)
    finally:
        os.environ.pop("DO_NOT_TRACK", None)


def test_python_dash_m_runs_the_command_line():
    """`python -m assay.cli --help` printed nothing and exited 0 (no __main__ guard); both module forms now run the
    CLI, and a bad command still fails with a non-zero exit."""
    import subprocess
    import sys

    for module in ("assay", "assay.cli"):
        r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "discover" in r.stdout, (module, r.stdout[-500:], r.stderr[-500:])
        bad = subprocess.run([sys.executable, "-m", module, "no-such-command"], capture_output=True, text=True,
                             timeout=120)
        assert bad.returncode != 0


def test_the_run_header_is_one_line_at_any_width(monkeypatch):
    """`assay demo` piped to a log (an 80-column console) printed "Discovery 39e94413 of demo-ecommerce · full ·
    analyst statistical · 56 steps ·" and "59s" on the next line: the header is one line, the terminal wraps it."""
    from assay import cli

    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="header001", project_id="a-rather-long-project-name", analyst="statistical"))
    store.save_result(DiscoveryResult(run_id="header001", project_id="a-rather-long-project-name",
                                      domain="ecommerce", analyst="statistical", total_steps=56, duration_s=59.4,
                                      recommendation_note=STATISTICAL_NOTE))
    monkeypatch.setattr(cli.out, "_width", 60)
    r = CliRunner().invoke(app, ["show", "header001"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if line.startswith("Discovery header00"))
    assert header.endswith("· 56 steps · 59s"), r.output


def test_a_flag_shows_no_value_in_the_help():
    """typer shows every option's type ("--json <bool>"): a flag read as if it took a value (two new users)."""
    from typer.testing import CliRunner

    from assay.cli import app

    for args in (["runs", "--help"], ["demo", "--help"], ["show", "--help"]):
        out = CliRunner().invoke(app, args, terminal_width=120).output
        assert "<bool>" not in out and "--help" in out, out
    assert "<int range>" in CliRunner().invoke(app, ["runs", "--help"], terminal_width=120).output  # values do


def test_a_commands_help_reads_as_paragraphs():
    """A docstring's line breaks are not the help's: "...refuses" then "what it cannot prove" on the next line read
    as a broken sentence (a new user, session 23); and no text in angle brackets is lost to the markup."""
    from typer.testing import CliRunner

    from assay.cli import app

    out = CliRunner().invoke(app, ["sql", "check", "--help"], terminal_width=200).output
    assert "the guard has no catalog and refuses what it cannot prove" in " ".join(out.split())
    assert "refuses\n" not in out
    demo = CliRunner().invoke(app, ["demo", "--help"], terminal_width=200).output
    demo = " ".join(demo.translate({ord(c): " " for c in "│╭╮╰╯─"}).split())
    assert "schema assay_demo_ecommerce or _gaming" in demo, demo


def test_values_in_brackets_are_shown_as_written_and_never_read_as_markup():
    """Red team 10 (session 25): a category value ``west[/]`` in an insight's headline made `assay show` and
    `assay discover` exit 1 (rich read it as a closing tag), and an error's ``[masked]`` vanished (read as a style).
    Data and model text are escaped wherever the CLI prints them."""
    from assay.models import Insight, Recommendation, RunStatus

    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="markup001", project_id="p", status=RunStatus.completed))
    ins = Insight(id="revenue-1", area="revenue", name="west[/] has a much higher average amount",
                  description="[link=https://e.vil]click[/link] [bold]loud[/bold]")
    rec = Recommendation(id="rec-1", priority=1, title="Look at west[/]", description="[red]x",
                         related_insight_ids=["revenue-1"])
    store.save_result(DiscoveryResult(run_id="markup001", project_id="p", domain="ecommerce", insights=[ins],
                                      recommendations=[rec], errors=["value [masked] failed"]))
    r = CliRunner().invoke(app, ["show", "markup001"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    for text in ("west[/] has a much higher average amount", "[link=https://e.vil]click[/link]", "Look at west[/]",
                 "value [masked] failed", "[red]x"):
        assert text in flat, text


def test_control_sequences_in_data_never_reach_the_terminal():
    """Red team 13 (session 26): an insight named with ESC sequences (a hidden link ``ESC]8;;https://e.vil``, a
    clipboard write ``ESC]52;c;...``, a reset ``ESC c``) came out of `assay show` intact; a later `cat` of the output
    ran them. Control characters are dropped from data and model text, in the terminal and the Markdown report."""
    from assay.models import Insight, Recommendation, RunStatus
    from assay.report.markdown import render_markdown

    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="control01", project_id="p", status=RunStatus.completed))
    name = "\x1b]8;;https://e.vil/x\x1b\\west\x1b]8;;\x1b\\ has a much higher\x07 average amount"
    ins = Insight(id="revenue-1", area="revenue", name=name, description="\x1b]52;c;cm0gLXJmIH4=\x07copied \x1bc\x9b0m")
    rec = Recommendation(id="rec-1", priority=1, title="Look at \x1b[31mwest", description="x\x00y",
                         related_insight_ids=["revenue-1"])
    result = DiscoveryResult(run_id="control01", project_id="p", domain="ecommerce", insights=[ins],
                             recommendations=[rec], errors=["value \x1b[2J failed"])
    store.save_result(result)
    r = CliRunner().invoke(app, ["show", "control01"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    for out in (r.output, render_markdown(result)):
        assert not any(c in out for c in "\x1b\x07\x00\x9b"), repr(out)
    flat = " ".join(r.output.split())
    assert "west" in flat and "copied" in flat and "Look at [31mwest" in flat


def test_a_run_s_goal_is_shown_with_it():
    """A new user (session 26): a run's ``--goal`` was recorded nowhere a reader could see it."""
    import json

    from assay.models import RunStatus

    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="goalrun01", project_id="p", status=RunStatus.completed,
                                  goal="Which stores have the most refunds?"))
    store.save_result(DiscoveryResult(run_id="goalrun01", project_id="p", domain="generic"))
    r = CliRunner().invoke(app, ["show", "goalrun01"], catch_exceptions=False)
    assert r.exit_code == 0 and "goal: Which stores have the most refunds?" in " ".join(r.output.split()), r.output
    r = CliRunner().invoke(app, ["runs", "--json", "--project", "p"], catch_exceptions=False)
    rows = [json.loads(line) for line in r.output.splitlines() if line.startswith("{")]
    assert {"run": "goalrun01", "goal": "Which stores have the most refunds?"}.items() <= next(
        x for x in rows if x["run"] == "goalrun01").items()


def test_a_repeat_of_a_disliked_insight_says_so():
    """A new user (session 26): after `assay feedback RUN conversion-1 dislike --comment known` the next statistical
    run showed the same insight, "repeats RUN/conversion-1", and nothing of the feedback (that analyst reads none)."""
    from assay.models import Insight, RunStatus

    store = open_store(load_settings())
    for rid in ("dislike01", "dislike02"):
        store.create_run(DiscoveryRun(id=rid + "0" * 24, project_id="fbp", status=RunStatus.completed))
    first = Insight(id="conversion-1", area="conversion", name="android converts less", description="since July")
    store.save_result(DiscoveryResult(run_id="dislike01" + "0" * 24, project_id="fbp", domain="d", insights=[first]))
    r = CliRunner().invoke(app, ["feedback", "dislike01", "conversion-1", "dislike", "--comment", "known"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    again = first.model_copy(update={"duplicate_of": "dislike0/conversion-1"})
    store.save_result(DiscoveryResult(run_id="dislike02" + "0" * 24, project_id="fbp", domain="d", insights=[again]))
    r = CliRunner().invoke(app, ["show", "dislike02"], catch_exceptions=False)
    flat = " ".join(r.output.split())
    assert r.exit_code == 0 and "repeats dislike0/conversion-1 · you disliked it (known)" in flat, r.output


def test_show_steps_lists_what_was_looked_at_and_what_failed():
    """A judge could not tell "checked and found nothing" from "never looked": `assay show --json` had no step list.
    `--steps` lists every exploration step, in the terminal and in the JSON."""
    import json

    from assay.models import ExplorationStep, StepAction

    store = open_store(load_settings())
    store.create_run(DiscoveryRun(id="steps0001", project_id="p", analyst="statistical"))
    store.save_result(DiscoveryResult(run_id="steps0001", project_id="p", domain="ecommerce", analyst="statistical"))
    store.add_step(ExplorationStep(run_id="steps0001", step=1, action=StepAction.query, row_count=4,
                                   purpose="Funnel of status by clinics.region (through patients)",
                                   query="SELECT 1"))
    store.add_step(ExplorationStep(run_id="steps0001", step=2, action=StepAction.query, query="SELECT secret FROM t",
                                   refused="reads a column the project declares PII"))
    r = CliRunner().invoke(app, ["show", "steps0001", "--steps"], catch_exceptions=False)
    flat = " ".join(r.output.split())
    assert r.exit_code == 0 and "Funnel of status by clinics.region (through patients)" in flat, r.output
    assert "refused: reads a column the project declares PII" in flat
    body = json.loads(CliRunner().invoke(app, ["show", "steps0001", "--steps", "--json"],
                                         catch_exceptions=False).output)
    assert [s["step"] for s in body["steps"]] == [1, 2] and body["steps"][0]["rows"] == 4
    assert body["steps"][1]["purpose"] == "SELECT secret FROM t" and body["run_id"] == "steps0001"
    assert "steps" not in json.loads(CliRunner().invoke(app, ["show", "steps0001", "--json"]).output)
