"""Pack generation (a draft pack written for review, with the project's LLM) and acceptance."""

from __future__ import annotations

from pathlib import Path

from ..config import check_warehouse_file
from ..errors import MissingKey
from ..llm import build_llm, llm_configured
from ..llm.resolve import HOW_TO_ADD_AN_LLM
from ..models import Project, ProjectState
from ..packs import pack_for_project
from ..schema.catalog import render_catalog
from ..schema.discovery import discover_schema
from ..settings import Settings, load_settings
from ..store import open_store
from ..warehouse import open_warehouse


def generate_pack(project_id: str, notes: str, out_dir: Path | None = None, *,
                  settings: Settings | None = None) -> Path:
    """Draft a domain pack for the project with its LLM; the folder is written for review. A project
    that is not ready moves pack_generation -> pack_generation_done (back to pending on failure)."""
    from ..packgen import draft_pack, write_pack

    settings = settings or load_settings()
    store = open_store(settings)
    project = store.get_project(project_id)
    if not llm_configured(project.llm):
        raise MissingKey(f"project {project.id}: pack generation needs an LLM ({HOW_TO_ADD_AN_LLM})")
    moving = project.state != ProjectState.ready
    if moving:
        store.save_project(project.model_copy(update={"state": ProjectState.pack_generation}))
    try:
        wh = open_warehouse(project.warehouse)
        try:
            tables = discover_schema(store, project, wh)
        finally:
            wh.close()
        draft, _ = draft_pack(build_llm(project.llm), render_catalog(tables).text, notes)
        folder = write_pack(draft, out_dir or settings.home / "packs" / f"{project.id}-draft")
    except BaseException:
        if moving:
            store.save_project(project.model_copy(update={"state": ProjectState.pack_generation_pending}))
        raise
    if moving:
        store.save_project(project.model_copy(update={"state": ProjectState.pack_generation_done}))
    return folder


def accept_pack(project_id: str, folder: Path, *, settings: Settings | None = None) -> Project:
    """Make a (reviewed) pack folder the project's pack; the project becomes ready."""
    from ..packs import load_pack_dir, validate_pack_dir

    store = open_store(settings or load_settings())
    project = store.get_project(project_id)
    folder = Path(folder).expanduser().resolve()
    validate_pack_dir(folder)
    pack = load_pack_dir(folder)
    accepted = project.model_copy(update={"pack": pack.name, "pack_dir": str(folder), "category": None,
                                          "state": ProjectState.ready})
    pack_for_project(accepted)  # the project's own overrides and disabled areas must fit the new pack
    check_warehouse_file(accepted, f"project {project.id}")  # saved only on a warehouse file that is there
    store.save_project(accepted)
    return accepted
