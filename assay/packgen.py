"""Pack generation: an LLM drafts a domain pack from the warehouse schema and the user's notes.

The model answers a small JSON contract (areas with keywords and a focus, a profile schema);
assay turns it into a complete pack folder (pack.yaml and prompts, the shared prompts taken
from the generic pack, one analysis prompt per area), validates the folder exactly as
`assay packs validate` does, and leaves it for review. `assay pack accept` makes it the
project's pack and moves the project to ``ready``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, field_validator

from .errors import PackError
from .llm.base import LLM, LLMRequest, Message, SystemBlock
from .llm.contract import ask_contract
from .models import TokenUsage
from .packs import BUILTIN_PACKS, validate_pack_dir

MAX_NOTES_CHARS = 20_000
_AREA_ID = re.compile(r"^[a-z][a-z0-9_]{1,39}$")


class AreaDraft(BaseModel):
    id: str
    name: str = Field(min_length=2)
    description: str = Field(min_length=10)
    keywords: list[str] = Field(min_length=2, max_length=20)
    focus: str = Field(min_length=20, description="what the analyst must look for in this area")
    priority: int = Field(default=2, ge=1, le=5)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        v = v.strip().lower()
        if not _AREA_ID.match(v):
            raise ValueError("area id must be lowercase letters, digits and '_' (2-40), starting with a letter")
        return v


class PackDraft(BaseModel):
    name: str = Field(min_length=2, max_length=40)
    description: str = Field(min_length=10)
    areas: list[AreaDraft] = Field(min_length=2, max_length=8)
    profile_schema: dict[str, str] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return re.sub(r"[^a-z0-9_-]+", "-", v.strip().lower()).strip("-") or "custom"

    @field_validator("areas")
    @classmethod
    def _unique(cls, v: list[AreaDraft]) -> list[AreaDraft]:
        ids = [a.id for a in v]
        if len(set(ids)) != len(ids):
            raise ValueError("area ids must be unique")
        return v


class PackAnswer(BaseModel):
    pack: PackDraft


PROMPT = """\
You design a domain pack for assay, an analyst that explores a data warehouse with SQL and reports insights
per analysis area. Draft the pack for the warehouse below, using the owner's notes.

## The owner's notes
{notes}

## Warehouse catalog (one line per table: name, rows, column names, joins)
{catalog}

Answer with one JSON object:
{{"pack": {{
  "name": "short-name",
  "description": "what this business is and what the discovery should find",
  "areas": [
    {{"id": "snake_case_id", "name": "Area name", "description": "one sentence",
      "keywords": ["words", "that", "appear", "in", "table", "or", "column", "names"],
      "focus": "what the analyst must look for here: the metrics, segments and failure modes that matter",
      "priority": 1}}
  ],
  "profile_schema": {{"field": "what the owner should tell us about the business, e.g. currency or KPIs"}}
}}}}
Give 3 to 6 areas that this warehouse can actually answer (their keywords must match its tables and columns);
priority 1 is the most important."""

AREA_PROMPT = """\
## Analysis area: {{{{ area.name }}}}
{{{{ area.description }}}}

{focus}

You are given {{{{ total_queries }}}} exploration results from the {{{{ dataset }}}} warehouse, as compact digests
(per-column statistics, and every row of a small result or, for a larger one, the rows that carry its signal; `cut` says what was left out):

{{{{ query_results }}}}

Report the findings that matter for this area, most important first. Each finding must name the affected segment
precisely, quantify it with numbers taken from the results, and give the count of affected entities as
affected_count when the results support one.
"""


def _literal(text: str) -> str:
    """Model text placed in a Jinja template: shown as written, never evaluated. Inside a raw block only an
    ``endraw`` tag ends it, in any of its spellings (``{%endraw%}``, ``{%- endraw %}``, one built around a removed
    one): with no ``{%`` left in the text, none can be formed (red team 10 ran code through ``{%endraw%}``)."""
    return "{% raw %}" + text.replace("{%", "{ %") + "{% endraw %}"


def draft_pack(llm: LLM, catalog: str, notes: str) -> tuple[PackDraft, TokenUsage]:
    if len(notes) > MAX_NOTES_CHARS:
        notes = notes[:MAX_NOTES_CHARS] + "\n[notes truncated]"
    req = LLMRequest(purpose="pack", system=[SystemBlock(PROMPT.format(notes=notes.strip() or "(none)",
                                                                       catalog=catalog))],
                     messages=[Message("user", content="Draft the pack as JSON.")], max_tokens=4096)
    answer, usage, _ = ask_contract(llm, req, PackAnswer, "pack")
    return answer.pack, usage


def write_pack(draft: PackDraft, folder: Path) -> Path:
    """The draft as a pack folder, validated; an invalid draft leaves nothing behind."""
    folder = Path(folder)
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "prompts").mkdir(parents=True)
    try:
        generic = BUILTIN_PACKS / "generic" / "prompts"
        for name in ("base_context.md", "exploration.md", "recommendations.md"):
            shutil.copy(generic / name, tmp / "prompts" / name)
        areas = []
        for a in draft.areas:
            (tmp / "prompts" / f"analysis_{a.id}.md").write_text(AREA_PROMPT.format(focus=_literal(a.focus)))
            areas.append({"id": a.id, "name": a.name, "description": a.description, "keywords": a.keywords,
                          "priority": a.priority})
        doc = {"name": draft.name, "description": draft.description,
               "prompts": {"base_context": "base_context.md", "exploration": "exploration.md",
                           "recommendations": "recommendations.md"},
               "areas": areas, "profile_schema": draft.profile_schema}
        (tmp / "pack.yaml").write_text("# drafted by `assay pack generate`: review, edit, then `assay pack accept`\n"
                                       + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
        validate_pack_dir(tmp)
    except PackError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder
