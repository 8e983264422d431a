"""Ask an LLM for a JSON contract; invalid output becomes a corrective message."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import InvalidLLMOutput
from ..models import TokenUsage
from .base import LLM, LLMRequest, Message

T = TypeVar("T", bound=BaseModel)
MAX_CORRECTIONS = 2


def _candidates(text: str) -> list[dict]:
    from ..explore.actions import _json_objects

    return _json_objects(text or "")


def parse_contract(text: str, model: type[T], key: str) -> T:
    objs = [o for o in _candidates(text) if key in o]
    if not objs:
        raise ValueError(f"no JSON object with a {key!r} key")
    last: Exception | None = None
    for obj in reversed(objs):
        try:
            return model.model_validate(obj)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            last = ValueError(f"{loc}: {err['msg']}")
    raise last  # type: ignore[misc]


def ask_contract(llm: LLM, req: LLMRequest, model: type[T], key: str) -> tuple[T, TokenUsage, list[dict]]:
    """Returns (parsed, usage, dialog). Raises InvalidLLMOutput after the corrections."""
    usage = TokenUsage()
    dialog: list[dict] = []
    messages = list(req.messages)
    for attempt in range(MAX_CORRECTIONS + 1):
        r = LLMRequest(purpose=req.purpose, system=req.system, messages=messages, tools=None,
                       max_tokens=req.max_tokens, meta=req.meta)
        resp = llm.complete(r)
        usage = usage.add(resp.usage)
        dialog.append({"attempt": attempt, "response": resp.text[:20000]})
        try:
            return parse_contract(resp.text, model, key), usage, dialog
        except ValueError as exc:
            dialog[-1]["error"] = str(exc)
            messages = messages + [
                Message("assistant", content=resp.text or "(empty)"),
                Message("user", content=f"That answer could not be used ({exc}). Reply again with one JSON "
                                        f"object with a {json.dumps(key)} key, exactly as the answer format says."),
            ]
    raise InvalidLLMOutput(f"{req.purpose}: the model did not return valid {key} JSON after "
                           f"{MAX_CORRECTIONS} corrections ({dialog[-1].get('error')})")
