"""Domain packs: loading, validation and prompt rendering.

A pack is a folder: ``pack.yaml`` (areas, categories, profile schema) and
``prompts/*.md`` (Jinja templates: base context, exploration, one analysis
prompt per area, recommendations). Every problem is reported as one line
naming the file and the field.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox
from jinja2 import nodes
from pydantic import ValidationError

from . import limits
from .config import did_you_mean, unknown_keys
from .errors import PackError
from .models import AnalysisArea, DomainPack, Project
from .settings import read_yaml_mapping

BUILTIN_PACKS = Path(__file__).resolve().parent / "domain_packs"  # shipped in the wheel (package data)
PROMPT_KEYS = ("base_context", "exploration", "recommendations")
PACK_KEYS = ("name", "description", "prompts", "areas", "categories", "profile_schema")
_AREA_ID = re.compile(r"^[a-z][a-z0-9_]{0,40}$")

# sandboxed: a pack is text from elsewhere (a shared folder, a model's draft), and its templates run in the process
# that holds the warehouse's credentials; attribute tricks (``cycler.__init__.__globals__.os``) are refused
_env = jinja2.sandbox.ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)

# what every template may use; validation renders with these to catch typos
TEMPLATE_VARS: dict[str, Any] = {
    "project": {"name": "example", "id": "example"},
    "profile": "",
    "previous_context": "",
    "schema_info": "",
    "dataset": "",
    "total_queries": 0,
    "query_results": "[]",
    "discovery_date": "2026-01-01",
    "insights_summary": "",
    "insights_data": "[]",
    "limits": limits.template_vars(),
    "area": {"id": "x", "name": "x", "description": "x", "keywords": []},
    "goal": "",
    "tenant_rule": "",
    "max_steps": 1,
    "actions": "",  # the actions in the provider's protocol (explore/actions.py actions_text)
}


def list_packs(root: Path | None = None) -> list[str]:
    root = root or BUILTIN_PACKS
    return sorted(p.name for p in root.iterdir() if (p / "pack.yaml").is_file())


# what a pack template may use: variables, if/else, one level of for loops over a variable, and filters that cannot
# grow a text past its inputs' sizes. The sandbox stops attribute tricks but not cost: ``'x' * 400000000``, nested
# ``range(100000)`` loops, ``{% set s = s ~ s %}`` line after line or a filter's width ran the process out of memory or
# time when a pack was loaded (red team 13)
_TEMPLATE_NODES = (nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Const, nodes.Getattr,
                   nodes.Getitem, nodes.Slice, nodes.If, nodes.CondExpr, nodes.And, nodes.Or, nodes.Not, nodes.Compare,
                   nodes.Operand, nodes.Test, nodes.Filter, nodes.Concat, nodes.Add, nodes.Sub, nodes.Div,
                   nodes.FloorDiv, nodes.Neg, nodes.Pos, nodes.List, nodes.Tuple, nodes.Dict, nodes.Pair,
                   nodes.Keyword, nodes.For)
_TEMPLATE_FILTERS = frozenset({"lower", "upper", "title", "capitalize", "trim", "striptags", "join", "length",
                               "count", "default", "d", "first", "last", "sort", "unique", "round", "int",
                               "float", "abs", "string", "e", "escape", "tojson", "truncate", "wordcount", "min",
                               "max", "sum", "selectattr", "rejectattr", "dictsort", "items", "reverse", "safe",
                               "urlencode"})
# filters whose output may be a multiple of their input (an escape per character, a separator between characters):
# one of them in an expression (red team 14: thirty ``tojson`` made 168 million characters at load)
_GROWING_FILTERS = frozenset({"join", "e", "escape", "tojson", "urlencode"})
# the lists a loop may walk (a loop over a text walks its characters: ``{% for c in schema_info %}{{ schema_info }}``
# is the catalog's length squared)
_LOOP_OVER = frozenset({"area.keywords", "limits"})


def _path(node: nodes.Node) -> str | None:
    """``area.keywords`` for ``area.keywords`` (a name and its attributes), else None."""
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        head = _path(node.node)
        return f"{head}.{node.attr}" if head else None
    return None


def _check_template(tree: nodes.Template) -> None:
    for node in tree.find_all(nodes.Node):
        if not isinstance(node, _TEMPLATE_NODES):
            kind = {"Mul": "*", "Pow": "**", "Mod": "%", "Call": "a function call", "Assign": "{% set %}",
                    "AssignBlock": "{% set %}", "Macro": "{% macro %}", "CallBlock": "{% call %}"}.get(
                type(node).__name__, type(node).__name__)
            raise jinja2.sandbox.SecurityError(f"{kind} is not allowed in a pack template")
        if isinstance(node, nodes.Filter) and node.name not in _TEMPLATE_FILTERS:
            raise jinja2.sandbox.SecurityError(f"the filter {node.name} is not allowed in a pack template")
        if isinstance(node, nodes.Filter) and node.name in _GROWING_FILTERS and any(
                f.name in _GROWING_FILTERS for f in node.find_all(nodes.Filter)):
            raise jinja2.sandbox.SecurityError("a filter that lengthens a text over another's output is not "
                                               f"allowed in a pack template ({node.name})")
        if isinstance(node, nodes.Filter) and node.name == "join" and not all(
                isinstance(a, nodes.Const) and isinstance(a.value, str) and len(a.value) <= 10
                for a in [*node.args, *(k.value for k in node.kwargs)]):
            # a separator from a variable is as long as it: ``keywords|join(schema_info)`` (the session's review)
            raise jinja2.sandbox.SecurityError("join takes a constant separator of at most 10 characters in a pack "
                                               "template")
        if isinstance(node, nodes.For):
            if any(f.name in _GROWING_FILTERS for f in node.find_all(nodes.Filter)):
                raise jinja2.sandbox.SecurityError("a filter that lengthens a text inside a for loop is not allowed "
                                                   "in a pack template")
            it = node.iter
            while isinstance(it, nodes.Filter) and it.node is not None:
                it = it.node
            if _path(it) not in _LOOP_OVER:
                raise jinja2.sandbox.SecurityError(f"a for loop over anything but {', '.join(sorted(_LOOP_OVER))} is "
                                                   "not allowed in a pack template")
            if next(node.find_all(nodes.For), None) is not None:
                raise jinja2.sandbox.SecurityError("a for loop inside a for loop is not allowed in a pack template")


@functools.lru_cache(maxsize=256)
def _compiled(template: str) -> jinja2.Template:
    """A template compiled once per text (Jinja compiles ``from_string`` anew each call: ~3 ms a prompt, paid at
    every request of a run), after checking it uses only what pack templates may (``_TEMPLATE_NODES``)."""
    _check_template(_env.parse(template))
    return _env.from_string(template)


def render(template: str, where: str = "template", **values: Any) -> str:
    ctx = dict(TEMPLATE_VARS)
    ctx.update(values)
    try:
        return _compiled(template).render(**ctx)
    except jinja2.TemplateSyntaxError as exc:
        raise PackError(f"{where} line {exc.lineno}: template syntax error: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise PackError(f"{where}: unknown template variable ({exc.message})") from None
    except jinja2.sandbox.SecurityError as exc:
        if "pack template" in str(exc):
            raise PackError(f"{where}: {exc} (variables, if/else, one level of for loops and plain filters only)") \
                from None
        raise PackError(f"{where}: the template reaches outside its variables ({exc})") from None
    except (ArithmeticError, TypeError, ValueError, jinja2.TemplateError) as exc:  # {{ 1 / 0 }}: one line, not a trace
        raise PackError(f"{where}: the template fails to render ({type(exc).__name__}: {exc})") from None


def _read_prompt(folder: Path, name: str, yaml_path: Path, field: str) -> str:
    if not isinstance(name, str) or not name:
        raise PackError(f"{yaml_path}: {field}: must name a prompt file")
    p = folder / "prompts" / name
    if not p.is_file():
        raise PackError(f"{yaml_path}: {field}: prompt file prompts/{name} does not exist")
    text = p.read_text()
    render(text, str(p))  # syntax and variables checked now, not mid-run
    return text


def _areas(raw: Any, folder: Path, yaml_path: Path, field: str) -> list[AnalysisArea]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise PackError(f"{yaml_path}: {field}: must be a list of areas")
    out = []
    for i, a in enumerate(raw):
        where = f"{field}[{i}]"
        if not isinstance(a, dict):
            raise PackError(f"{yaml_path}: {where}: must be a mapping")
        a = dict(a)
        aid = a.get("id")
        if not isinstance(aid, str) or not _AREA_ID.match(aid):
            raise PackError(f"{yaml_path}: {where}.id: {aid!r} must be lowercase letters, digits, '_'")
        if "prompt" in a:
            a["prompt"] = _read_prompt(folder, a["prompt"], yaml_path, f"{where}.prompt")
        else:
            default = f"analysis_{a.get('id', '')}.md"
            if not (folder / "prompts" / default).is_file():
                raise PackError(f"{yaml_path}: {where}.prompt: missing (and no prompts/{default})")
            a["prompt"] = _read_prompt(folder, default, yaml_path, f"{where}.prompt")
        try:
            area = AnalysisArea.model_validate(a)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise PackError(f"{yaml_path}: {where}.{loc}: {err['msg']}") from None
        if not area.keywords:
            raise PackError(f"{yaml_path}: {where}.keywords: at least one keyword is required")
        out.append(area)
    return out


def _area_unknown_keys(raw: Any, field: str) -> list[str]:
    if not isinstance(raw, list):
        return []
    return [e for i, a in enumerate(raw) if isinstance(a, dict) for e in unknown_keys(AnalysisArea, a, f"{field}[{i}]")]


def _unknown_keys(data: dict) -> list[str]:
    """Every unknown key of pack.yaml, its areas' and categories' too, each with a suggestion. Reported before any
    other problem of the file: a misspelt key leaves its field missing, so it is usually the cause of the others
    (and an area's typo was reported only after an earlier area's error)."""
    out = [f"{k}: unknown key{did_you_mean(k, PACK_KEYS)}" for k in data if k not in PACK_KEYS]
    out += [f"prompts.{k}: unknown key{did_you_mean(k, PROMPT_KEYS)}"
            for k in (data.get("prompts") if isinstance(data.get("prompts"), dict) else {}) if k not in PROMPT_KEYS]
    out += _area_unknown_keys(data.get("areas"), "areas")
    for cname, cdata in (data.get("categories") if isinstance(data.get("categories"), dict) else {}).items():
        cdata = cdata if isinstance(cdata, dict) else {}
        out += [f"categories.{cname}.{k}: unknown key{did_you_mean(k, ['areas'])}" for k in cdata if k != "areas"]
        out += _area_unknown_keys(cdata.get("areas"), f"categories.{cname}.areas")
    return out


def _stamp(folder: Path) -> tuple:
    """What a pack folder's content is judged by: the digest of pack.yaml and of every file under prompts/ (file
    times are too coarse: a file rewritten within the same few milliseconds keeps its time)."""
    files = [folder / "pack.yaml"]
    for root, _dirs, names in os.walk(folder / "prompts"):
        files += [Path(root) / n for n in names]
    out = []
    for path in files:
        try:
            out.append((str(path.relative_to(folder)), hashlib.blake2b(path.read_bytes(), digest_size=16).digest()))
        except OSError:
            out.append((str(path), b""))
    return tuple(sorted(out))


def load_pack_dir(folder: Path, category: str | None = None) -> DomainPack:
    """Load and validate one pack folder (optionally narrowed to a category). A folder read before and unchanged
    since (the content of its files) is not parsed and checked again: a run loads its pack in every phase."""
    folder = Path(folder)
    return _load_pack_dir(folder, category, _stamp(folder)).model_copy(deep=True)


@functools.lru_cache(maxsize=32)
def _load_pack_dir(folder: Path, category: str | None, _stamp: tuple) -> DomainPack:
    yaml_path = folder / "pack.yaml"
    if not yaml_path.is_file():
        raise PackError(f"{folder}: not a pack (no pack.yaml)")
    data = read_yaml_mapping(yaml_path, PackError, "must be a mapping with name, description and areas")
    unknown = _unknown_keys(data)
    if unknown:
        raise PackError("\n".join(f"{yaml_path}: {e}" for e in unknown))
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise PackError(f"{yaml_path}: name: required")
    prompts = data.get("prompts") or {}
    if not isinstance(prompts, dict):
        raise PackError(f"{yaml_path}: prompts: must be a mapping of {', '.join(PROMPT_KEYS)}")
    texts = {}
    for key in PROMPT_KEYS:
        texts[key] = _read_prompt(folder, prompts.get(key, f"{key}.md"), yaml_path, f"prompts.{key}")
    areas = _areas(data.get("areas"), folder, yaml_path, "areas")
    cats = data.get("categories") or {}
    if not isinstance(cats, dict):
        raise PackError(f"{yaml_path}: categories: must be a mapping of category name to its areas")
    cat_areas: dict[str, list[AnalysisArea]] = {}
    for cname, cdata in cats.items():
        cdata = cdata or {}
        if not isinstance(cdata, dict):
            raise PackError(f"{yaml_path}: categories.{cname}: must be a mapping")
        cat_areas[cname] = _areas(cdata.get("areas"), folder, yaml_path, f"categories.{cname}.areas")
    if category is not None and category not in cat_areas:
        valid = ", ".join(sorted(cat_areas)) or "none"
        raise PackError(f"{yaml_path}: category {category!r} is not in this pack"
                        f"{did_you_mean(category, cat_areas, listing=False)}; valid: {valid}")
    chosen = list(areas) + (cat_areas.get(category, []) if category else [])
    ids = [a.id for a in chosen]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise PackError(f"{yaml_path}: areas: duplicate area id {sorted(dup)[0]!r}")
    if not chosen:
        raise PackError(f"{yaml_path}: areas: a pack needs at least one analysis area")
    profile_schema = data.get("profile_schema") or {}
    if not isinstance(profile_schema, dict):
        raise PackError(f"{yaml_path}: profile_schema: must be a mapping")
    return DomainPack(
        name=name,
        description=str(data.get("description", "")),
        category=category,
        categories=sorted(cat_areas),
        areas=sorted(chosen, key=lambda a: (a.priority, a.id)),
        profile_schema=profile_schema,
        **texts,
    )


def validate_pack_dir(folder: Path) -> list[str]:
    """Validate a pack and all its categories; returns the category names."""
    base = load_pack_dir(folder)
    for cat in base.categories:
        load_pack_dir(folder, cat)
    return base.categories


def load_pack(name: str, category: str | None = None, pack_dir: str | None = None) -> DomainPack:
    if pack_dir:
        return load_pack_dir(Path(pack_dir), category)
    folder = BUILTIN_PACKS / name
    if not (folder / "pack.yaml").is_file():
        raise PackError(f"unknown pack {name!r}{did_you_mean(name, list_packs(), listing=False)}; "
                        f"valid: {', '.join(list_packs())}")
    return load_pack_dir(folder, category)


def pack_for_project(project: Project) -> DomainPack:
    """The project's pack with its overrides, disabled and custom areas applied."""
    if project.goal and not project.pack_dir and project.pack == "goal":
        return goal_pack(project.goal)
    pack = load_pack(project.pack, project.category, project.pack_dir)
    areas = [a for a in pack.areas if a.id not in set(project.disabled_areas)]
    for custom in project.custom_areas:
        areas = [a for a in areas if a.id != custom.id] + [custom]
    unknown = set(project.disabled_areas) - {a.id for a in pack.areas}
    if unknown:
        first = sorted(unknown)[0]
        raise PackError(f"project {project.id}: disabled_areas: unknown area {first!r}"
                        f"{did_you_mean(first, [a.id for a in pack.areas])}")
    overrides = project.prompt_overrides
    for key in overrides:
        valid = set(PROMPT_KEYS) | {f"analysis_{a.id}" for a in areas}
        if key not in valid:
            raise PackError(f"project {project.id}: prompt_overrides.{key}: not a prompt of this pack"
                            f"{did_you_mean(key, valid)}")
        render(overrides[key], f"project {project.id} prompt_overrides.{key}")
    updates = {k: overrides[k] for k in PROMPT_KEYS if k in overrides}
    areas = [
        a.model_copy(update={"prompt": overrides[f"analysis_{a.id}"]}) if f"analysis_{a.id}" in overrides else a
        for a in areas
    ]
    if not areas:
        raise PackError(f"project {project.id}: every analysis area is disabled")
    return pack.model_copy(update={"areas": areas, **updates})


_STOP = set(
    "a an the of in on at to for from by with and or but is are was were be been why how what which who "
    "whom whose when where do does did find show list take takes taking longer more less some any all "
    "that this these those it its into than then there their our your my we you they i me us them "
    "about across over under between per each most least".split()
)


def goal_keywords(goal: str, limit: int = 8) -> list[str]:
    words = re.findall(r"[A-Za-z][A-Za-z0-9_]+", goal.lower())
    out: list[str] = []
    for w in words:
        if w in _STOP or len(w) < 3 or w in out:
            continue
        out.append(w)
        if w.endswith("s") and len(w) > 4 and w[:-1] not in out:
            out.append(w[:-1])
    return out[:limit] or ["overview"]


def goal_pack(goal: str) -> DomainPack:
    """A one-off pack whose single area is the user's goal."""
    base = load_pack("generic")
    area = AnalysisArea(
        id="goal",
        name="Goal",
        description=goal.strip(),
        keywords=goal_keywords(goal),
        priority=1,
        prompt=next(a.prompt for a in base.areas if a.id == "overview"),
    )
    return base.model_copy(update={"name": "goal", "areas": [area], "description": goal})
