"""Domain packs: built-ins valid; a malformed pack fails with one line naming file and field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.errors import PackError
from assay.models import AnalysisArea, Project
from assay.packs import BUILTIN_PACKS, goal_pack, list_packs, load_pack, load_pack_dir, pack_for_project

SPEC = {
    ("gaming", None): {"churn", "engagement", "monetization"},
    ("gaming", "match3"): {"levels", "boosters"},
    ("gaming", "idle"): {"progression", "economy"},
    ("gaming", "casual"): {"ad_performance", "session_flow"},
    ("social", None): {"growth", "engagement", "retention"},
    ("social", "content_sharing"): {"content_creation", "monetization"},
    ("ecommerce", None): {"conversion", "revenue", "retention"},
    ("ecommerce", "multi_category"): {"product_performance", "session_behavior"},
}


@pytest.mark.parametrize("pack, cat", list(SPEC))
def test_builtin_areas_match_the_specification(pack, cat):
    base = {a.id for a in load_pack(pack).areas}
    got = {a.id for a in load_pack(pack, cat).areas}
    assert got == (SPEC[(pack, cat)] | (set() if cat is None else SPEC[(pack, None)]))
    assert base == SPEC[(pack, None)]


def test_list_packs():
    assert {"gaming", "social", "ecommerce"} <= set(list_packs())


def test_exploration_prompt_renders_limits_from_code():
    from assay import limits
    from assay.packs import render

    from assay.explore.actions import actions_text

    text = render(load_pack("ecommerce").exploration, "x", limits=limits.template_vars(), max_steps=10,
                  actions=actions_text(False))
    assert f"up to {limits.MAX_LOOKUP_TABLES_PER_CALL} fully qualified tables" in text
    assert f"{limits.MAX_SEARCHES_PER_RUN} calls per run" in text


def broken(tmp_path: Path, edit) -> Path:
    dst = tmp_path / "pack"
    shutil.copytree(BUILTIN_PACKS / "ecommerce", dst)
    edit(dst)
    return dst


@pytest.mark.parametrize("edit, needle", [
    (lambda d: (d / "pack.yaml").write_text("name: [unclosed"), "not valid YAML"),
    (lambda d: (d / "pack.yaml").write_text((d / "pack.yaml").read_text().replace("name: ecommerce", "name: ''")),
     "name: required"),
    (lambda d: (d / "prompts" / "analysis_revenue.md").unlink(), "areas[1].prompt"),
    (lambda d: (d / "prompts" / "exploration.md").write_text("{{ schema_infoo }}"), "unknown template variable"),
    (lambda d: (d / "prompts" / "recommendations.md").write_text("{% if %}"), "template syntax error"),
    (lambda d: (d / "pack.yaml").write_text((d / "pack.yaml").read_text().replace("id: revenue", "id: Revenue!")),
     "areas[1].id"),
    (lambda d: (d / "pack.yaml").write_text((d / "pack.yaml").read_text().replace("priority: 1\n", "priority: high\n", 1)),
     "priority"),
])
def test_malformed_pack_is_one_clear_line(tmp_path, edit, needle):
    with pytest.raises(PackError) as exc:
        load_pack_dir(broken(tmp_path, edit))
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg and str(tmp_path) in msg


def test_unknown_pack_and_category():
    with pytest.raises(PackError, match="valid: "):
        load_pack("nope")
    with pytest.raises(PackError, match="category 'idle' is not in this pack"):
        load_pack("ecommerce", "idle")


def test_project_overrides_disabled_and_custom_areas():
    custom = AnalysisArea(id="refunds", name="Refunds", description="refund abuse", keywords=["refund"],
                          prompt="Refunds: {{ query_results }}")
    p = Project(id="p1", pack="ecommerce", disabled_areas=["retention"], custom_areas=[custom],
                prompt_overrides={"analysis_revenue": "Only revenue. {{ query_results }}"})
    pack = pack_for_project(p)
    ids = [a.id for a in pack.areas]
    assert "retention" not in ids and "refunds" in ids
    assert next(a for a in pack.areas if a.id == "revenue").prompt.startswith("Only revenue.")


def test_bad_override_names_the_field():
    p = Project(id="p1", pack="ecommerce", prompt_overrides={"analysis_nope": "x"})
    with pytest.raises(PackError, match="prompt_overrides.analysis_nope"):
        pack_for_project(p)


def test_goal_pack():
    pack = goal_pack("Find why incidents take longer to resolve in some locations")
    area = pack.areas[0]
    assert area.id == "goal" and "incident" in area.keywords and "location" in area.keywords
    assert "why" not in area.keywords


def test_a_pack_changed_on_disk_is_read_again_even_within_the_same_millisecond(tmp_path):
    """Loaded packs are kept by their files' content: a prompt rewritten at once (same size, same file time) is
    seen by the next load, and a load hands out its own copy (changing it changes no later load)."""
    import shutil

    from assay.packs import BUILTIN_PACKS, load_pack_dir

    folder = tmp_path / "p"
    shutil.copytree(BUILTIN_PACKS / "ecommerce", folder)
    first = load_pack_dir(folder)
    prompt = folder / "prompts" / "exploration.md"
    text = prompt.read_text()
    changed = ("Y" if text[0] != "Y" else "Z") + text[1:]  # its first character (prose), same size
    prompt.write_text(changed)  # written within the same clock tick
    assert load_pack_dir(folder).exploration == changed != first.exploration
    again = load_pack_dir(folder)
    again.areas.clear()
    assert load_pack_dir(folder).areas


def test_model_text_in_a_drafted_pack_is_never_run(tmp_path):
    """Red team 10 (session 25): an area's focus of ``{%endraw%}{{ cycler.__init__.__globals__.os.popen(...) }}``
    ran a shell command as `write_pack` validated the draft (the raw block's end was removed only as written with
    spaces, and the templates rendered in a plain Jinja environment). The model's text now shows as written, and
    pack templates render in Jinja's sandbox."""
    from assay.packgen import AreaDraft, PackDraft, write_pack
    from assay.packs import render

    marker = tmp_path / "pwned"
    call = "{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}"
    focuses = [f"Look for churn. {{%endraw%}}{call}{{%raw%}}", f"Look for churn. {{%- endraw %}}{call}",
               f"Look for churn. {{% end{{% endraw %}}raw %}}{call}", f"Look for churn. {{%endraw-%}}{call}"]
    for i, focus in enumerate(focuses):
        areas = [AreaDraft(id=f"a{j}", name="Area", description="an area of the shop", keywords=["a", "b"],
                           focus=focus) for j in range(2)]
        folder = write_pack(PackDraft(name="Shop", description="a small web shop", areas=areas), tmp_path / f"p{i}")
        load_pack_dir(folder)
        text = render((folder / "prompts" / "analysis_a0.md").read_text(), "area",
                      area={"name": "A", "description": "d", "id": "a0", "keywords": []})
        assert "cycler.__init__" in text and "Look for churn." in text, focus  # shown, not run
    assert not marker.exists()
    # a pack written by hand that reaches for Python's internals is refused, not run
    with pytest.raises(PackError, match="a function call is not allowed in a pack template"):
        render("{{ cycler.__init__.__globals__.os.popen('touch " + str(marker) + "').read() }}", "hand-made")
    with pytest.raises(PackError, match="reaches outside its variables"):
        render("{{ cycler.__init__.__globals__ }}", "hand-made")
    assert not marker.exists()


@pytest.mark.parametrize("template,refused", [
    ("{{ ('x' * 400000000) | length }}", "\\* is not allowed"),
    ("{{ 9 ** 9 ** 9 }}", "\\*\\* is not allowed"),
    ("{{ '%0999999999d' % 1 }}", "% is not allowed"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
     "for loop|function call"),
    ("{% for a in area.keywords %}{% for b in area.keywords %}x{% endfor %}{% endfor %}",
     "for loop inside a for loop"),
    ("{% for a in area.keywords %}{{ a }}{% else %}{% for b in area.keywords %}x{% endfor %}{% endfor %}",
     "for loop inside a for loop"),
    # red team 14: a growing filter over another's output (thirty tojson: 168 million characters), a loop over a text
    # (its characters: the catalog's length squared)
    ("{{ goal" + " | tojson" * 30 + " | length }}", "lengthens a text over another's output"),
    ("{{ (goal | join('y' * 1)) }}", "\\* is not allowed|constant separator"),
    ("{{ goal | join('yyyyyyyy') | join('zzzzzzzz') }}", "lengthens a text over another's output"),
    ("{% for c in schema_info %}{{ schema_info }}{% endfor %}", "for loop over anything but"),
    ("{% for c in goal | list %}{{ goal }}{% endfor %}", "filter list|for loop over anything but"),
    # the session's review: a separator from a variable, a lengthening filter in a loop, a division by zero
    ("{{ area.keywords | join(schema_info) }}", "constant separator"),
    ("{% for k in area.keywords %}{{ area.keywords | join(', ') }}{% endfor %}", "inside a for loop"),
    ("{{ 1 / 0 }}", "fails to render"),
    ("{% set s = goal ~ goal %}{% set s = s ~ s %}{{ s }}", "set"),
    ("{{ goal | center(400000000) }}", "filter center"),
    ("{{ goal | indent(400000000) }}", "filter indent"),
    ("{{ goal | replace('g', goal) | replace('g', goal) }}", "filter replace"),
    ("{{ area.keywords | map('center', 99999999) | join }}", "filter map"),
    ("{% macro m(n) %}{{ m(n) }}{{ m(n) }}{% endmacro %}{{ m(1) }}", "macro"),
    ("{{ '{:>999999999}'.format(goal) }}", "function call"),
])
def test_a_pack_template_cannot_run_the_process_out_of_memory_or_time(template, refused):
    """Red team 13 (session 26): the sandbox stopped attribute tricks but not cost: ``'x' * 400000000`` took 400 MB
    as the pack was validated, nested ``range(100000)`` loops never returned. A pack template may use variables,
    if/else, one level of for loops over a variable and filters that cannot grow a text; anything else is refused
    at load, in one line."""
    from assay.packs import render

    with pytest.raises(PackError, match=refused):
        render(template, "prompts/base_context.md", goal="g")


def test_what_pack_templates_use_still_renders():
    from assay.packs import render

    text = render("{% if goal %}Goal: {{ goal | trim }}{% else %}none{% endif %} {{ area.name | lower }}: "
                  "{% for k in area.keywords %}{{ k }}{% if not loop.last %}, {% endif %}{% endfor %} "
                  "{{ limits | length > 0 }} {{ (max_steps - 1) // 2 }} {{ area.keywords | join(' / ') }}",
                  "t", goal=" g ", area={"id": "a", "name": "Churn", "description": "d", "keywords": ["x", "y"]},
                  max_steps=9)
    assert text == "Goal: g churn: x, y True 4 x / y"
