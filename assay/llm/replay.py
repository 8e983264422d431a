"""A replay LLM: serves a recorded real-model transcript, answer by answer, and fails loudly on drift.

A transcript is the directory the model bridge writes (``NNNN.request.json`` as sent on the wire,
``NNNN.response.json`` as ``{"text": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}``),
optionally trimmed by ``bench/record_transcript.py``: trimmed requests keep the request's *skeleton*
(``_skeleton``) instead of its full text. Answer N is served for the product's request N only when
the two requests agree on what matters:

- the phase (exploration with tools, verification, SQL fix, area analysis, recommendations),
- the tool set offered,
- the shape of the last user turn (how many tool results, for which calls),
- every tool call of the previous answer comes back with its result.

Prompt wording, results and history folding may change freely: they are what the transcript guards
against breaking, not what it pins. A request past the end, or a run that ends before the
transcript does (``assert_consumed``), is a failure too. Requests are matched in order: replay runs
the inline pipeline (areas one after another).

Register with ``llm: {provider: replay, model: NAME}``: NAME is a folder under
``tests/fixtures/transcripts/`` or a path.

Step numbers: a transcript recorded before session 12 (a ``NUMBERING`` file saying ``stored``) is of a model that saw
every action under its stored number (free schema lookups numbered too); the product now shows the model the step
budget's numbering (``explore/numbering.py``). The step numbers its recorded answers cite are translated into the
numbers the product showed for those same stored steps (the requests' ``meta["step_labels"]``): the source_steps of
an analysis answer, and the step numbers a ``done`` summary cites. The conversation's shape is checked as before.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models import LLMConfig, TokenUsage
from .base import LLMRequest, LLMResponse, ToolCall, cached_system_chars, estimate_tokens

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "transcripts"


class TranscriptMismatch(AssertionError):
    """The product sent a request the recorded model never saw."""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text":
                    parts.append(b.get("text", ""))
                elif b.get("type") == "tool_result":
                    parts.append(_text_of(b.get("content")))
        return "\n".join(parts)
    return ""


def _turns(body: dict) -> tuple[str, list[dict]]:
    """(system text, turns as [{"role", "text", "tool_uses": [(id, name)], "tool_results": [id]}]) for the
    Anthropic Messages and the OpenAI chat formats alike."""
    system = _text_of(body.get("system"))
    turns: list[dict] = []
    for m in body.get("messages", []):
        role, content = m.get("role"), m.get("content")
        if role == "system":
            system += _text_of(content)
            continue
        if role == "tool":  # OpenAI: one message per tool result, folded into a user turn
            role = "user"
            turn = {"role": "user", "text": "", "tool_uses": [], "tool_results": [m.get("tool_call_id")]}
        else:
            turn = {"role": role, "text": _text_of(content) if role == "user" or isinstance(content, str) else "",
                    "tool_uses": [], "tool_results": []}
            if isinstance(content, list):
                for b in content:
                    if b.get("type") == "tool_use":
                        turn["tool_uses"].append((b.get("id"), b.get("name")))
                    elif b.get("type") == "tool_result":
                        turn["tool_results"].append(b.get("tool_use_id"))
                    elif b.get("type") == "text" and role == "assistant":
                        turn["text"] += b.get("text", "")
            for c in m.get("tool_calls") or []:
                turn["tool_uses"].append((c.get("id"), c["function"]["name"]))
        if turns and turns[-1]["role"] == role == "user":
            prev = turns[-1]
            prev["text"] = (prev["text"] + "\n" + turn["text"]).strip()
            prev["tool_results"] += turn["tool_results"]
        else:
            turns.append(turn)
    return system, turns


def _phase(system: str, turns: list[dict], tools: list[str]) -> str:
    if tools:
        return "tools:" + ",".join(sorted(tools))
    first = turns[0]["text"] if turns else ""
    last = turns[-1]["text"] if turns else ""
    if first.startswith("Claim to verify"):
        return "verify"
    if "```sql" in last and "Error:" in last:
        return "fix"
    everything = system + "\n" + first
    for key, phase in (('{"recommendations"', "recommend"), ('{"insights"', "analyze"),
                       ('{"lookup_schema"', "explore-json"), ('{"pack"', "pack")):
        if key in everything:
            return phase
    return "text"


def skeleton(body: dict) -> dict:
    """What a request must agree on with its recording (see the module doc)."""
    if "_skeleton" in body:
        return body["_skeleton"]
    tools = [t.get("function", t).get("name") for t in body.get("tools") or []]
    system, turns = _turns(body)
    last = turns[-1] if turns else {"role": "user", "tool_results": []}
    prev_calls = [name for _, name in turns[-2]["tool_uses"]] if len(turns) >= 2 else []
    return {"phase": _phase(system, turns, tools), "tools": sorted(tools),
            "last_tool_results": len(last.get("tool_results", [])), "previous_calls": prev_calls}


# the measure is one JSON string on one line: a head cut inside it (a trimmed corrective round) never reads on
_CLAIM = re.compile(r'(?m)^Metric to compute:\s*\{"metric":\s*"([^"]*)",\s*"measure":\s*"((?:[^"\\\n]|\\.)*)"')


def _claim_key(text: str) -> tuple[str, str] | None:
    """(metric, measure) of a claim verification's request ("Metric to compute: {...}"), else None."""
    m = _CLAIM.search(text or "")  # a corrective round states why the query was refused first
    return (m.group(1), m.group(2)) if m else None


def _first_user(body: dict) -> str:
    """The first user turn of a recorded request (a trimmed recording keeps the last one's head: a verification
    request's first turn is the claim, and a corrective round repeats it at its start)."""
    if "_skeleton" in body:  # (a corrective round's claim, after its reason, kept apart: claim_head, read first)
        return "\n".join(filter(None, (body.get("claim_head"), body.get("last_user_head"))))
    turns = _turns(body)[1]
    return turns[0]["text"] if turns else ""


HEAD_CHARS = 400


def trim(body: dict) -> dict:
    """A wire request trimmed to what the replay checks (``bench/record_transcript.py``): its skeleton, and the
    first characters of its system prompt and last user turn (for a reader); a verification request's claim line
    when the turn does not start with it (a corrective round says why first)."""
    system, turns = _turns(body)
    last = turns[-1]["text"] if turns else ""
    out = {"model": body.get("model"), "max_tokens": body.get("max_tokens"), "_skeleton": skeleton(body),
           "system_head": system[:HEAD_CHARS], "last_user_head": last[:HEAD_CHARS]}
    m = _CLAIM.search(last)
    if m and m.start() > 0:
        out["claim_head"] = last[m.start():m.start() + HEAD_CHARS]
    return out


def _unanswered(turns: list[dict]) -> list[str]:
    """Tool calls in the history whose result never came back."""
    missing = []
    for i, t in enumerate(turns):
        if t["role"] == "assistant" and t["tool_uses"]:
            answered = set(turns[i + 1]["tool_results"]) if i + 1 < len(turns) else set()
            missing += [f"{name} ({cid})" for cid, name in t["tool_uses"] if cid not in answered]
    return missing


def _renumber_text(text: str, table: dict[int, int]) -> str:
    """Step numbers a text cites ("step 6", "steps 2, 4 and 7", "[step 3]") in the numbering of ``table`` (stored ->
    shown); a number of a step shown without one (a free lookup) stays as written."""
    from ..analysis.picker import _CITED
    from ..explore.numbering import map_numbers

    def one(m: re.Match) -> str:
        return m.group(0)[: m.start(1) - m.start(0)] + map_numbers(m.group(1), table) \
            + m.group(0)[m.end(1) - m.start(0):]
    return _CITED.sub(one, text or "")


def _renumber_steps(steps: Any, table: dict[int, int]) -> Any:
    from ..explore.numbering import map_steps

    return map_steps(steps, table) if isinstance(steps, list) else steps


def renumber_answer(answer: dict, purpose: str, table: dict[int, int]) -> dict:
    """A recorded answer whose step numbers are stored numbers, in the numbering the product showed (``table``): an
    analysis answer's source_steps (insights' and claims'), a done summary's cited steps (tool call or JSON)."""
    if not table:
        return answer
    answer = json.loads(json.dumps(answer))
    calls = answer.get("tool_calls") or []
    for c in calls:
        args = c.get("arguments") or {}
        if c.get("name") == "done" and isinstance(args.get("summary"), str):
            args["summary"] = _renumber_text(args["summary"], table)
    text = answer.get("text") or ""
    if not text:
        return answer
    start, end = text.find("{"), text.rfind("}")
    try:
        body = json.loads(text[start:end + 1]) if 0 <= start < end else None
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return answer
    if purpose.startswith("analyze") and isinstance(body.get("insights"), list):
        for ins in body["insights"]:
            if not isinstance(ins, dict):
                continue
            if "source_steps" in ins:
                ins["source_steps"] = _renumber_steps(ins["source_steps"], table)
            for c in ins.get("claims") or []:
                if isinstance(c, dict) and "source_steps" in c:
                    c["source_steps"] = _renumber_steps(c["source_steps"], table)
    elif isinstance(body.get("summary"), str) and "done" in body:
        body["summary"] = _renumber_text(body["summary"], table)
    else:
        return answer
    answer["text"] = text[:start] + json.dumps(body, ensure_ascii=False) + text[end + 1:]
    return answer


class TranscriptLLM:
    name = "replay"

    def __init__(self, folder: Path, model: str = ""):
        self.folder = Path(folder)
        reqs = sorted(self.folder.glob("*.request.json"))
        if not reqs:
            raise ConfigError(f"replay: no NNNN.request.json in {self.folder}")
        self.entries: list[tuple[str, dict, dict]] = []
        for r in reqs:
            n = r.name.split(".")[0]
            resp = self.folder / f"{n}.response.json"
            if not resp.is_file():
                raise ConfigError(f"replay: {resp.name} is missing in {self.folder}")
            self.entries.append((n, json.loads(r.read_text()), json.loads(resp.read_text())))
        self.supports_tools = any(skeleton(b)["tools"] for _, b, _ in self.entries)
        marker = self.folder / "NUMBERING"
        # "stored": the recorded model saw every action's stored number (before session 12)
        self.numbering = marker.read_text().split()[0] if marker.is_file() and marker.read_text().split() else "shown"
        self.step_labels: dict[int, int] = {}  # stored number -> the number the product showed, as requests tell
        self.model = model or str(self.entries[0][1].get("model") or "replay")
        self.pos = 0
        self.calls: list[LLMRequest] = []
        self._lock = threading.Lock()
        self._cached_prefixes: set[str] = set()  # the cache-marked system prompts sent so far (a provider's cache)

    def _fail(self, n: str, req: LLMRequest, what: str) -> None:
        raise TranscriptMismatch(f"replay {self.folder.name} request {n} ({req.purpose}): {what}")

    def complete(self, request: LLMRequest) -> LLMResponse:
        from .anthropic import wire_body

        with self._lock:
            if self.pos >= len(self.entries):
                raise TranscriptMismatch(f"replay {self.folder.name}: the product sent request {self.pos + 1} "
                                         f"({request.purpose}) but the transcript has {len(self.entries)}")
            n, recorded, answer = self.entries[self.pos]
            self.pos += 1
            self.calls.append(request)
            self.step_labels.update({int(k): int(v) for k, v in (request.meta.get("step_labels") or {}).items()})
        body = wire_body(request, self.model)
        got, want = skeleton(body), skeleton(recorded)
        if got["phase"] != want["phase"]:
            self._fail(n, request, f"phase {got['phase']!r}, the recording has {want['phase']!r}")
        if got["tools"] != want["tools"]:
            self._fail(n, request, f"tools {got['tools']}, the recording offered {want['tools']}")
        if got["last_tool_results"] != want["last_tool_results"] or got["previous_calls"] != want["previous_calls"]:
            self._fail(n, request, f"last turn carries {got['last_tool_results']} tool result(s) for calls "
                                   f"{got['previous_calls']}; the recording had {want['last_tool_results']} for "
                                   f"{want['previous_calls']}")
        turns = _turns(body)[1]
        missing = _unanswered(turns)
        if missing:
            self._fail(n, request, f"tool calls without a result: {', '.join(missing)}")
        got_claim, want_claim = _claim_key(turns[0]["text"] if turns else ""), _claim_key(_first_user(recorded))
        if got_claim and want_claim and got_claim != want_claim:
            # a verification of another claim: the recorded answer re-derives something else (a corrective round
            # added or removed shifts every later answer onto the wrong claim)
            self._fail(n, request, f"verifies {got_claim}, the recording verified {want_claim}")
        if self.numbering == "stored":
            answer = renumber_answer(answer, request.purpose, dict(self.step_labels))
        return self._response(n, request, answer)

    def _response(self, n: str, request: LLMRequest, answer: dict) -> LLMResponse:
        calls = [ToolCall(id=f"toolu_replay_{n}_{i}", name=c["name"], args=dict(c.get("arguments") or {}))
                 for i, c in enumerate(answer.get("tool_calls") or [])]
        text = answer.get("text") or ""
        chars = request.chars()
        usage = TokenUsage(input_tokens=int(answer.get("input_tokens") or estimate_tokens(chars)),
                           output_tokens=int(answer.get("output_tokens")
                                             or estimate_tokens(len(text) + sum(len(json.dumps(c.args))
                                                                                for c in calls))),
                           cached_tokens=estimate_tokens(self._cached_chars(request)),
                           input_chars=chars)
        return LLMResponse(text=text, tool_calls=calls, usage=usage,
                           stop_reason="tool_use" if calls else "end_turn")

    def _cached_chars(self, request: LLMRequest) -> int:
        """The exploration loop says what its requests share with the one before (``prefix_chars``: the history
        too); for the other phases, the system prompt's cached blocks as a provider's cache would serve them."""
        with self._lock:
            system = cached_system_chars(request, self._cached_prefixes)
        prefix = request.meta.get("prefix_chars")
        return int(prefix) if prefix is not None else system

    def remaining(self) -> int:
        return len(self.entries) - self.pos

    def assert_consumed(self) -> None:
        if self.remaining():
            n = self.entries[self.pos][0]
            raise TranscriptMismatch(f"replay {self.folder.name}: the run ended with {self.remaining()} recorded "
                                     f"answer(s) unused, from request {n} "
                                     f"({skeleton(self.entries[self.pos][1])['phase']})")


_instances: dict[str, TranscriptLLM] = {}


def transcript_folder(name: str) -> Path:
    p = Path(name).expanduser()
    folder = p if p.is_dir() else TRANSCRIPTS / name
    if not folder.is_dir():
        known = ", ".join(sorted(d.name for d in TRANSCRIPTS.iterdir() if d.is_dir())) if TRANSCRIPTS.is_dir() else ""
        raise ConfigError(f"llm.model: no transcript {name!r} (known: {known or 'none'})")
    return folder


def replay_llm(cfg: LLMConfig) -> TranscriptLLM:
    """One replay per transcript and process, so every phase of a run draws from the same queue."""
    folder = transcript_folder(cfg.model)
    key = str(folder.resolve())
    if key not in _instances:
        _instances[key] = TranscriptLLM(folder)
    return _instances[key]


def reset(name: str | None = None) -> None:
    """Forget served positions (tests replay a transcript more than once)."""
    if name is None:
        _instances.clear()
    else:
        _instances.pop(str(transcript_folder(name).resolve()), None)
