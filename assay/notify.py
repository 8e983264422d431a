"""Run-completion notifications: a summary posted to a Slack-compatible incoming webhook.

The message is Slack's format (``text`` plus ``blocks``); Mattermost, Rocket.Chat and Teams
workflows accept the same ``text``. A notification never changes a run's outcome: failures are
returned to the caller to log.
"""

from __future__ import annotations

import html

import httpx

from . import secrets
from .models import DiscoveryResult, Project

TIMEOUT_S = 10.0
MAX_LISTED = 5
SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def slack_escape(text: str) -> str:
    """Text from the warehouse or a model as Slack shows it, not as mrkdwn it acts on: a category value
    "<!channel>" pinged the channel and "<https://e.vil|see>" showed a disguised link (session 23's red team)."""
    return html.escape(str(text), quote=False)


def summary_message(result: DiscoveryResult, *, report_hint: str | None = None) -> dict:
    icon = {"full": ":white_check_mark:", "partial": ":warning:", "failed": ":x:"}[result.run_type.value]
    head = (f"{icon} assay discovery *{result.run_id[:8]}* of *{result.project_id}*: {result.run_type.value} · "
            f"{len(result.insights)} insights · {len(result.recommendations)} recommendations · "
            f"{result.total_steps} steps · {result.duration_s:.0f}s")
    top = sorted(result.insights, key=lambda i: (SEVERITY_RANK.get(i.severity.value, 9), i.id))[:MAX_LISTED]
    lines = [f"• [{i.severity.value}] {slack_escape(i.name)}"
             + (f" ({i.affected_count:,} affected)" if i.affected_count else "") for i in top]
    if len(result.insights) > MAX_LISTED:
        lines.append(f"… and {len(result.insights) - MAX_LISTED} more")
    lines += [f":x: {slack_escape(e)}" for e in result.errors[:3]]
    tail = report_hint or f"assay show {result.run_id[:8]} · assay report {result.run_id[:8]}"
    text = "\n".join([head, *lines, tail])
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": head}}]
    if lines:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)[:2900]}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": tail}]})
    return {"text": text, "blocks": blocks}


def webhook_url(project: Project) -> str | None:
    n = project.notify
    if n is None or not (n.webhook_url_env or n.webhook_block):
        return None
    return secrets.resolve(n.webhook_url_env, n.webhook_block, what=f"project {project.id} notify webhook",
                           required=False)


def notify_run(project: Project, result: DiscoveryResult) -> str | None:
    """Post the summary if the project asks for it; returns why it was not sent (None when sent or
    not configured)."""
    if project.notify is None or result.run_type.value not in project.notify.on:
        return None
    url = webhook_url(project)
    if not url:
        return f"project {project.id}: notify is configured but its webhook URL is not set"
    try:
        r = httpx.post(url, json=summary_message(result), timeout=TIMEOUT_S)
        r.raise_for_status()
    except httpx.HTTPError as exc:
        return f"webhook post failed: {type(exc).__name__}: {exc}"
    return None


def crash_message(project_id: str, run_id: str, why: str) -> dict:
    head = f":boom: assay discovery *{run_id[:8]}* of *{project_id}*: crashed"
    tail = f"assay runs {project_id} · assay rerun {run_id[:8]}"
    text = "\n".join([head, why[:500], tail]) if why else "\n".join([head, tail])
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": head}}]
    if why:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": why[:2900]}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": tail}]})
    return {"text": text, "blocks": blocks}


def notify_crash(project: Project, run_id: str, why: str) -> str | None:
    """A run that crashed (its process died, or Prefect lost it) saved no result to summarise: say that it
    crashed and why, to the same webhook, when the project asks to hear of failed runs."""
    if project.notify is None or "failed" not in project.notify.on:
        return None
    url = webhook_url(project)
    if not url:
        return f"project {project.id}: notify is configured but its webhook URL is not set"
    try:
        r = httpx.post(url, json=crash_message(project.id, run_id, why), timeout=TIMEOUT_S)
        r.raise_for_status()
    except httpx.HTTPError as exc:
        return f"webhook post failed: {type(exc).__name__}: {exc}"
    return None
