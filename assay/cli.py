"""The `assay` command line (typer + rich)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape as _rich_escape
from rich.padding import Padding
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .errors import AssayError, MissingKey, UserError
from .report.text import without_controls
from .settings import load_settings


def _flags_take_no_value() -> None:
    """typer (0.2x) shows every option's type in the help, flags too ("--json <bool>"), which reads as if a flag
    took a value (two new users asked): a flag shows none."""
    from typer.core import TyperOption

    shown = getattr(TyperOption, "display_type_rich", None)
    if shown is None or getattr(shown, "_assay_flags", False):  # an older typer shows no types: nothing to do
        return

    def display_type_rich(self, ctx):
        return None if self.is_flag and self.metavar is None else shown(self, ctx)

    display_type_rich._assay_flags = True
    TyperOption.display_type_rich = display_type_rich


_flags_take_no_value()


def escape(text: str) -> str:
    """Warehouse, model or user text printed through rich: its markup escaped (a value ``west[/]`` ended the
    command) and its control characters dropped (an ESC sequence in a finding hid a link: red team 13)."""
    return _rich_escape(without_controls(str(text)))


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode="markdown",
                  help="assay: an LLM analyst for your data warehouse, orchestrated by Prefect.")


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import PackageNotFoundError, version

        try:
            out.print(f"assay {version('assay')}", highlight=False)
        except PackageNotFoundError:
            out.print("assay (not installed: run from a checkout)", highlight=False)
        raise typer.Exit()


@app.callback()
def _root(show_version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                            help="print assay's version and exit")) -> None:
    """assay: an LLM analyst for your data warehouse, orchestrated by Prefect."""


project_app = typer.Typer(no_args_is_help=True, help="Register and list projects.")
schema_app = typer.Typer(no_args_is_help=True, help="Schema cache and index.")
packs_app = typer.Typer(invoke_without_command=True, help="Domain packs.")
sql_app = typer.Typer(no_args_is_help=True, help="Test the SQL guard.")
app.add_typer(project_app, name="project")
app.add_typer(schema_app, name="schema")
app.add_typer(packs_app, name="packs")
app.add_typer(sql_app, name="sql")
pack_app = typer.Typer(no_args_is_help=True, help="Generate a project's domain pack and accept it.")
app.add_typer(pack_app, name="pack")

out = Console()
err = Console(stderr=True)


def _table_console() -> Console:
    """The terminal's console, or one wide enough when piped or redirected: rich would fit a table in 80 columns,
    and a table's rows are data to keep whole."""
    return out if out.is_terminal else Console(width=200)


def fail(msg: str, code: int = 2, log: Path | None = None) -> None:
    for line in str(msg).splitlines() or [""]:  # one line per error
        err.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True, markup=True)
    if log is not None:
        err.print(f"[dim]log: {escape(str(log))}[/]", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def main() -> None:
    code: object = 0
    try:
        try:
            app()
        except UserError as exc:
            fail(str(exc))
    except SystemExit as exc:
        code = exc.code
    except typer.Exit as exc:
        code = exc.exit_code
    exit_now(code)


def exit_now(code: object = 0) -> None:
    """End the command without the interpreter's teardown, once its own exit work is done.

    What a command leaves to run at exit does run, in order: the threads Python waits for, then every
    ``atexit`` handler (the vector index's close, logging's flush, Prefect's drains), then stdout and stderr
    are flushed. What is skipped is the interpreter's own teardown after that: with Prefect, pandas, scipy
    and duckdb loaded it took 2.5-4 s of every command on a loaded two-core machine (a one-area rerun:
    9.8-11.9 s with it, 7.0-8.1 s without; issue #20 item 8). ``ASSAY_FAST_EXIT=0`` exits the usual way."""
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): printed, status 1, as the interpreter does
        print(code, file=sys.stderr)
        code = 1
    if os.environ.get("ASSAY_FAST_EXIT", "1").strip() == "0":
        raise SystemExit(code)
    import atexit

    try:
        threading._shutdown()  # type: ignore[attr-defined]  # the non-daemon threads, as the interpreter waits
    except Exception:  # noqa: BLE001 - an interpreter without it: exit the usual way
        raise SystemExit(code) from None
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
            pass
    os._exit(code)


def _store():
    from .store import open_store

    return open_store(load_settings())


PARTIAL_EXIT = 3  # `assay discover`: the discovery is saved, but some areas have no analysis (`assay rerun` them)


def _guarded(fn):
    """Turn user errors into one line and a non-zero exit; never a traceback."""
    import functools

    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except typer.Exit:
            raise
        except UserError as exc:
            fail(str(exc))
        except AssayError as exc:
            fail(str(exc), 1)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


# ---------------------------------------------------------------------------- packs


@packs_app.callback()
@_guarded
def packs(ctx: typer.Context) -> None:
    """List the built-in domain packs with their categories and areas."""
    if ctx.invoked_subcommand:
        return
    from .packs import BUILTIN_PACKS, list_packs, load_pack

    t = Table(title="Domain packs")
    t.add_column("pack")
    t.add_column("category")
    t.add_column("areas")
    for name in list_packs():
        base = load_pack(name)
        t.add_row(name, "(base)", ", ".join(a.id for a in base.areas))
        for cat in base.categories:
            p = load_pack(name, cat)
            extra = [a.id for a in p.areas if a.id not in {b.id for b in base.areas}]
            t.add_row("", cat, ", ".join(extra))
    out.print(t)
    out.print(f"[dim]packs live in {BUILTIN_PACKS}; validate your own with `assay packs validate DIR`[/]")


@packs_app.command("validate")
@_guarded
def packs_validate(directory: Path) -> None:
    """Validate a pack folder (pack.yaml + prompts/)."""
    from .packs import validate_pack_dir

    cats = validate_pack_dir(directory)
    out.print(f"[green]ok[/] {directory} (categories: {', '.join(cats) or 'none'})")


@pack_app.command("generate")
@_guarded
def pack_generate(
    project: str = typer.Argument(..., help="project id"),
    notes: Optional[Path] = typer.Option(None, "--notes", help="Markdown notes about the business and its goals"),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="where to write the draft (default: ASSAY_HOME/packs)"),
) -> None:
    """Ask the LLM to draft a domain pack from the warehouse schema and your notes (written for review)."""
    from .services.packs import generate_pack

    text = ""
    if notes is not None:
        if not notes.is_file():
            fail(f"{notes}: no such notes file")
        text = notes.read_text()
    folder = generate_pack(project, text, out_dir)
    out.print(f"drafted {folder}\nreview and edit it, then: assay pack accept {project} {folder}")


@pack_app.command("accept")
@_guarded
def pack_accept(project: str, directory: Optional[Path] = typer.Argument(
        None, help="the pack folder (default: the draft of `assay pack generate`)")) -> None:
    """Validate a pack folder and make it the project's pack; the project becomes ready."""
    from .services.packs import accept_pack

    folder = directory or load_settings().home / "packs" / f"{project}-draft"
    p = accept_pack(project, folder)
    out.print(f"[green]ready[/] project {p.id} uses pack {p.pack} ({p.pack_dir})")


# ---------------------------------------------------------------------------- projects


@project_app.command("apply")
@_guarded
def project_apply(file: Optional[Path] = typer.Option(None, "-f", "--file", help="project YAML"),
                  path: Optional[Path] = typer.Argument(None, help="project YAML (as -f)", show_default=False)) -> None:
    """Create or update a project from a versioned YAML file (`-f FILE`, or the file as the argument)."""
    from .config import check_warehouse_contents, check_warehouse_file
    from .errors import ConfigError, PackError
    from .packs import pack_for_project
    from .settings import read_project_file

    if (file is None) == (path is None):
        fail("give the project's YAML file once: assay project apply -f FILE (or assay project apply FILE)", 2)
    file = file or path
    project, errors = read_project_file(file)
    # every problem of the file in one report (a new user fixed six mistakes in five runs, session 26), then, once
    # the file is clean, its pack's, a missing DuckDB file, and every PII column, schema or tenant column that file
    # does not hold
    if project is not None and not errors:
        try:
            pack_for_project(project)
        except (ConfigError, PackError) as exc:
            errors += str(exc).splitlines()
        try:
            check_warehouse_file(project, str(file))
            check_warehouse_contents(project, str(file))  # (a file that is not there has no contents to read)
        except ConfigError as exc:
            errors += str(exc).splitlines()
    if errors:
        raise ConfigError("\n".join(errors))
    _store().save_project(project)
    out.print(f"[green]applied[/] project {project.id} ({project.pack}"
              f"{'/' + project.category if project.category else ''}, {project.warehouse.kind})")


@project_app.command("list")
@_guarded
def project_list() -> None:
    """List the registered projects: pack, warehouse, analyst, state and schedule."""
    t = Table(title="Projects")
    for c in ("id", "pack", "warehouse", "analyst", "state", "schedule"):
        t.add_column(c, no_wrap=c == "id")
    for p in _store().list_projects():
        t.add_row(p.id, f"{p.pack}/{p.category or '-'}", p.warehouse.kind, p.analyst, p.state.value,
                  p.schedule or "-")
    _table_console().print(t)  # an id cut to "shop-7e79d7…" is no longer one to copy


@project_app.command("show")
@_guarded
def project_show(project: str = typer.Argument(..., help="project id")) -> None:
    """Print a project as the YAML `project apply -f` takes (what is stored: secrets never are)."""
    import yaml

    p = _store().get_project(project)
    data = p.model_dump(mode="json", exclude_defaults=True)
    data.pop("created_at", None)  # the store's, not the project file's
    warehouse = {"kind": p.warehouse.kind, **data.pop("warehouse", {})}
    data = {"id": p.id, "pack": p.pack, **{k: v for k, v in data.items() if k not in ("id", "pack")},
            "warehouse": warehouse}
    sys.stdout.write(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


@project_app.command("delete")
@_guarded
def project_delete(project: str = typer.Argument(..., help="project id"),
                   yes: bool = typer.Option(False, "--yes", help="do not ask (needed off a terminal)")) -> None:
    """Delete a project with its runs, their insights and its schema index (its Prefect deployments stay)."""
    store = _store()
    p = store.get_project(project)  # an unknown id: one line with the known ones
    runs = store.list_runs(p.id, limit=100_000)
    if any(r.status.value in ("pending", "running") for r in runs):
        from .liveness import reap_gone_runs

        reap_gone_runs(store)
        runs = store.list_runs(p.id, limit=100_000)
        if any(r.status.value in ("pending", "running") for r in runs):
            fail(f"project {p.id} has a run in progress; delete it once the run has ended")
    what = f"project {p.id} and its {len(runs)} run(s)"
    if not yes:
        if not sys.stdin.isatty():
            fail(f"this deletes {what}; pass --yes to confirm")
        if not typer.confirm(f"Delete {what}?", default=False):
            fail("nothing deleted", 1)
    store.delete_project(p.id)
    try:  # its schema index (the vector collection the explorer's search_tables reads)
        from .vectors import open_index
        from .vectors.index import schema_collection

        open_index(load_settings()).drop(schema_collection(p.id))
    except Exception as exc:  # the store is the record; a collection left behind is found again, never read
        logging.getLogger("assay").warning("could not drop the schema index of %s: %s", p.id, exc)
    out.print(f"deleted {what}" + (f"; its Prefect deployments stay (`prefect deployment delete "
                                   f"assay-discovery/discover-{p.id}`)" if p.schedule else ""), highlight=False)


# ---------------------------------------------------------------------------- schema


@schema_app.command("refresh")
@_guarded
def schema_refresh(project: str) -> None:
    """Re-read the warehouse schema and re-index changed tables."""
    from .schema.catalog import join_hints, render_catalog
    from .schema.discovery import discover_schema
    from .schema.index import project_schema_index
    from .warehouse import open_warehouse

    settings = load_settings()
    store = _store()
    p = store.get_project(project)
    # a foreground bulk job: the embedding model may use every core (runs leave one to the explorer)
    os.environ.setdefault("ASSAY_TORCH_THREADS", str(os.cpu_count() or 1))
    wh = open_warehouse(p.warehouse)
    try:
        with out.status("reading the warehouse schema"):
            tables = discover_schema(store, p, wh, refresh=True)
    finally:
        wh.close()
    with out.status(f"indexing {len(tables):,} tables (only new or changed ones are embedded)"):
        stats = project_schema_index(p, settings=settings).sync(tables, join_hints(tables))
    cat = render_catalog(tables)
    out.print(f"{len(tables)} tables; re-embedded {stats.embedded}, removed {stats.removed}; "
              f"catalog {cat.tokens} tokens ({cat.tables_left_out} left out)")


@schema_app.command("search")
@_guarded
def schema_search(
    project: str,
    query: str = typer.Argument(..., help="what the table holds, as the analyst would ask for it"),
    top_k: int = typer.Option(10, "--top-k", "-k", min=1, max=50, help="how many tables to list"),
    as_json: bool = typer.Option(False, "--json", help="the results as search_tables returns them to the analyst"),
) -> None:
    """Search the schema index as the analyst's search_tables does (to check a glossary or comments)."""
    from .schema.catalog import join_hints
    from .schema.discovery import discover_schema
    from .schema.index import project_schema_index
    from .schema.provider import SchemaProvider
    from .warehouse import open_warehouse

    store = _store()
    p = store.get_project(project)
    wh = open_warehouse(p.warehouse)
    try:
        tables = discover_schema(store, p, wh)  # the cached schema, as a run would read it
    finally:
        wh.close()
    idx = project_schema_index(p)
    idx.sync(tables, join_hints(tables))  # nothing is re-embedded unless a table changed
    hits = SchemaProvider(tables, searcher=idx.search).search(query, top_k)
    if as_json:
        out.print_json(data=hits)
        return
    t = Table(title=f"search_tables {query!r} in {p.id}")
    for c, kw in (("#", {"justify": "right"}), ("table", {}), ("score", {"justify": "right"}),
                  ("rows", {"justify": "right"}), ("description / columns", {}),  # wrapped at words
                  ("folded copies", {"justify": "right"})):
        t.add_column(c, **kw)
    for i, h in enumerate(hits, 1):
        cols = ", ".join(h["columns"])
        t.add_row(str(i), escape(h["table"]), f"{h['score']:.3f}", f"{h['rows']:,}",
                  escape(h.get("description") or cols), str(len(h.get("similar", [])) + h.get("more_similar", 0) or ""))
    _table_console().print(t)


# ---------------------------------------------------------------------------- discover


def _run_flow(project: str, max_steps: Optional[int], min_steps: Optional[int], areas: list[str] | None,
              goal: Optional[str] = None) -> dict:
    """Run the discovery flow in a thread while the main thread shows progress. The run's id is its flow
    run's id (``done["run_id"]``), as for a run a deployment starts."""
    _prefect_env()
    from .vectors.embedder import warm_up_if_cold

    # on a host that never embedded, torch and the model load while Prefect imports and its server starts; where
    # the cache holds the model's vectors, lazily at the first text it lacks (a run whose texts are all cached,
    # e.g. a scheduled statistical run of unchanged data, never imports torch)
    warm_up_if_cold()
    server = _PrefectServer()
    from assay_flows.flows.discovery import DiscoveryParams, discovery_flow
    from assay_flows.flows.runstate import run_with_id

    params = DiscoveryParams(project=project, max_steps=max_steps, min_steps=min_steps, areas=areas, goal=goal)
    server.join()
    return _watch_flow(None, lambda ready: run_with_id(discovery_flow, {"params": params}, ready),
                       settings=server.flow_settings)


def _start_ephemeral_server():
    """Start Prefect's ephemeral server now, in a thread, so that its process comes up while this one
    imports the flows and loads the embedder; the flow's client then finds it running. ``join()`` the
    returned thread before the flow starts. With ``PREFECT_API_URL`` set (a real server) or ephemeral
    mode off, nothing is started. A failure here is left to the flow's own client, which reports it."""
    import threading

    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_ALLOW_EPHEMERAL_MODE

    # read here: a thread does not see the caller's settings context (a test harness sets one)
    wanted = not PREFECT_API_URL.value() and PREFECT_SERVER_ALLOW_EPHEMERAL_MODE.value()

    def start() -> None:
        if not wanted:
            return
        try:
            from prefect.server.api.server import SubprocessASGIServer

            SubprocessASGIServer().start()  # the instance Prefect's get_client() uses (one per process)
        except Exception:  # noqa: BLE001 - the flow's client starts it again and says why it cannot
            pass

    thread = threading.Thread(target=start, name="assay-prefect-server", daemon=True)
    thread.start()
    return thread


class _PrefectServer:
    """The Prefect API a command's flow talks to, started before Prefect is imported.

    By default the local server that later commands reuse (``assay_flows/local_server.py``): found or
    started here, its URL put in ``PREFECT_API_URL`` before Prefect reads its settings, and ``join()``
    waits for it to answer. ``PREFECT_API_URL`` (environment or profile) wins, ``ASSAY_PREFECT_SERVER=
    ephemeral`` keeps one ephemeral server per command, and so does a process where Prefect is already
    imported (its settings are read). If the local server does not answer in time, ``flow_settings()``
    puts the flow on an ephemeral server instead: the command goes on, one line says why."""

    def __init__(self) -> None:
        from assay_flows import local_server

        self.url: str | None = None
        self.proc = None
        self.fallback = False
        self.thread = None
        mode = os.environ.get("ASSAY_PREFECT_SERVER", "local").strip().lower()
        if mode == "local" and "prefect" not in sys.modules and not local_server.configured_api_url():
            self.url, self.proc = local_server.begin(self._timeout())
        if self.url:
            os.environ["PREFECT_API_URL"] = self.url
        else:
            self.thread = _start_ephemeral_server()

    @staticmethod
    def _timeout() -> float:
        return float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS") or 90)

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()
            return
        from assay_flows import local_server

        if not local_server.wait(self.url, self._timeout(), self.proc):
            self.fallback = True
            err.print(f"[dim]the local Prefect server ({self.url}) did not answer; this command uses an "
                      f"ephemeral one (log: {local_server.prefect_home() / local_server.LOG})[/]",
                      highlight=False, soft_wrap=True)
        elif self.proc is not None:  # this command started it: say that a process stays behind, and how to end it
            err.print(f"[dim]started a local Prefect server at {self.url}; later commands reuse it, and it stops "
                      f"after {local_server.idle_seconds() / 60:.0f} min unused (now: assay local-server stop)[/]",
                      highlight=False, soft_wrap=True)

    def flow_settings(self):
        """Enter in the thread that runs the flow."""
        import contextlib

        if not self.fallback:
            return contextlib.nullcontext()
        from prefect.settings import PREFECT_API_URL, temporary_settings

        return temporary_settings(restore_defaults={PREFECT_API_URL})


def _prefect_server_for_deployments(command: str) -> "_PrefectServer":
    """The Prefect server that deployments are written to: the one `assay discover` uses (PREFECT_API_URL, else
    the local server, started when none runs), never a temporary one. `assay serve` on a temporary server
    (Prefect's own, when no API URL is set) wrote its schedules where nothing outlived it, met the local server's
    database locked (a traceback), and on Ctrl-C retried the gone server for 30 s instead of pausing its
    deployments."""
    from assay_flows import local_server

    ephemeral = os.environ.get("ASSAY_PREFECT_SERVER", "local").strip().lower() != "local"
    if ephemeral and not local_server.configured_api_url():  # before any server starts
        fail(f"{command} needs a Prefect server that outlives it: set PREFECT_API_URL, or leave "
             "ASSAY_PREFECT_SERVER unset for the local server", 1)
    server = _PrefectServer()
    server.join()
    if server.fallback:
        fail(f"{command} needs a Prefect server that outlives it, and the local one did not answer (see "
             f"`assay local-server status`), or set PREFECT_API_URL", 1)
    if server.url is None and not local_server.configured_api_url():  # Prefect already imported: its own
        fail(f"{command} needs a Prefect server that outlives it: set PREFECT_API_URL", 1)
    return server


def _prefect_env() -> None:
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect's first-run telemetry notice is printed by the ephemeral server's own process, through
    # the progress bar; the CLI runs Prefect without telemetry, as it runs the server without analytics
    # (DO_NOT_TRACK=0 in the environment keeps it on)
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")  # 2 busy cores: 20 s is short


def run_log_path(run_id: str) -> Path:
    return load_settings().home / "logs" / f"{run_id}.log"


def _log_to_file(path: Path):
    """Send every log line (Prefect's included, tracebacks and all) to ``path`` instead of the
    terminal, where the progress bar and one error line are all a person should see. Returns the
    function that puts the terminal handlers back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    moved: list[tuple[logging.Logger, logging.Handler]] = []
    loggers = [logging.getLogger()] + [x for x in logging.Logger.manager.loggerDict.values()
                                       if isinstance(x, logging.Logger)]
    for lg in loggers:
        consoles = [h for h in lg.handlers if isinstance(h, logging.StreamHandler)
                    and not isinstance(h, logging.FileHandler)]
        for h in consoles:
            lg.removeHandler(h)
            moved.append((lg, h))
        if consoles:
            lg.addHandler(handler)
    if not logging.getLogger().handlers:
        logging.getLogger().addHandler(handler)

    def move(to: Path) -> None:  # the log of a run whose id was not known when it started
        os.replace(handler.baseFilename, to)
        handler.baseFilename = str(to)

    def restore() -> None:
        for lg in loggers:
            if handler in lg.handlers:
                lg.removeHandler(handler)
        for lg, h in moved:
            lg.addHandler(h)
        handler.close()

    restore.move = move
    return restore


class _ProgressNotes(logging.Handler):
    """Log records that carry ``extra={"progress": text}`` (a wait the person should see, such as the local
    vector store held by another process) become the progress line's note while they are fresh; the
    record itself still goes to the run's log."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self._note, self._until = "", 0.0

    def emit(self, record: logging.LogRecord) -> None:
        text = getattr(record, "progress", None)
        if text:
            self._note = str(text)
            self._until = time.monotonic() + float(getattr(record, "progress_for_s", 35.0))

    def current(self) -> str:
        return self._note if time.monotonic() < self._until else ""


def _watch_flow(run_id: str | None, start, settings=None, rerun: bool = False) -> dict:
    """Run a flow (``start()`` returns its coroutine) in a thread while the main thread shows progress.
    Logs go to the run's log file; a failure is one line and the log's path. With ``run_id`` None the
    run's id is its flow run's: ``start(ready)`` calls ``ready(run_id)`` once the flow run exists."""
    log_path = run_log_path(run_id or f"starting-{os.getpid()}")
    restore = _log_to_file(log_path)
    try:
        return _watch_flow_logged(run_id, start, log_path, restore.move, settings, rerun=rerun)
    finally:
        restore()


def _interrupted_rerun(store, run_id: str, log_path: Path) -> None:
    """Ctrl-C during `assay rerun`: the run goes back to what its saved discovery says (a failed attempt never
    erases an area's earlier analysis: ``Store.save_area``); it is not cancelled, and its discovery flow run is
    left as it was (session 24's review)."""
    from .models import Phase, RunStatus, RunType, utcnow

    try:
        result = store.get_result(run_id)
        failed = result.run_type == RunType.failed
        store.update_run(run_id, status=RunStatus.failed if failed else RunStatus.completed,
                         run_type=result.run_type, finished_at=utcnow(), phase=Phase.analysis if failed else Phase.done,
                         error=("; ".join(result.errors) or None) if result.run_type != RunType.full else None)
    except Exception:  # the store is the record: when it cannot say so, the run is reaped as crashed later
        pass
    _exit_interrupted(f"the rerun of run {run_id[:8]} stopped; its earlier analysis is kept", log_path)


def _interrupted(store, run_id: str | None, log_path: Path, rerun: bool = False) -> None:
    """Ctrl-C while a run is watched: the run is cancelled where it stands (its flow run on a Prefect server, then
    its document: written last, so that what the flow's thread writes meanwhile does not undo it), one line says
    how to go on, and the process ends now. The flow runs in a daemon thread that nothing can stop: leaving
    through the interpreter's teardown let it run on (a new user's exploration went from step 5 to 40 after
    Ctrl-C) and printed Prefect's tracebacks for seconds before the run ended Crashed."""
    from .models import RunStatus, utcnow

    if run_id is None:
        fail("interrupted before the run started", 130)
    if rerun:
        _interrupted_rerun(store, run_id, log_path)
    why = "interrupted (Ctrl-C)"
    if os.environ.get("PREFECT_API_URL"):
        # a server outlives this process (the local one, or PREFECT_API_URL's): its flow run says so too (an
        # ephemeral server ends with the process)
        import asyncio

        from assay_flows.flows.runstate import mirror

        with contextlib.suppress(Exception):
            gone = store.get_run(run_id).model_copy(update={"status": RunStatus.cancelled, "error": why})
            asyncio.run(asyncio.wait_for(mirror(gone), 3))
    try:
        run = store.get_run(run_id)
        store.update_run(run_id, status=RunStatus.cancelled, finished_at=utcnow(),
                         error=f"{why} during {run.phase.value}")
    except Exception:  # the store is the record: when it cannot say so, the run is reaped as crashed later
        run = None
    if run is None:
        _exit_interrupted(f"run {run_id[:8]}", log_path)
    how = (f"`assay rerun {run_id[:8]}` analyses its areas from the stored exploration"
           if run.exploration_finished else "its exploration had not finished: start a new discovery")
    _exit_interrupted(f"run {run_id[:8]} cancelled during {run.phase.value} ({run.steps_done}/{run.max_steps} "
                      f"steps); {how}", log_path)


def _exit_interrupted(what: str, log_path: Path) -> None:
    """One line and the log's path, then the process ends now (the flow's daemon thread with it)."""
    err.print(f"[bold red]interrupted:[/] {escape(what)}", soft_wrap=True, highlight=False)
    err.print(f"[dim]log: {log_path}[/]", highlight=False, soft_wrap=True)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def _watch_flow_logged(run_id: str | None, start, log_path: Path, move_log=None, settings=None,
                       rerun: bool = False) -> dict:
    import asyncio
    import contextlib

    from .models import RunStatus
    from .run.lifecycle import fail_run

    result: dict = {"run_id": run_id}
    known = threading.Event()
    id_from_flow_run = run_id is None

    def ready(rid: str) -> None:
        result["run_id"] = rid
        known.set()

    def target() -> None:
        try:
            with (settings or contextlib.nullcontext)():
                state = asyncio.run(start(ready) if id_from_flow_run else start())
            result["state"] = state
        except BaseException as exc:  # reported by the main thread
            result["error"] = exc

    store = _store()
    th = threading.Thread(target=target, daemon=True)
    th.start()
    notes = _ProgressNotes()
    logging.getLogger("assay").addHandler(notes)
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TextColumn("[dim]{task.fields[note]}"), TimeElapsedColumn(), console=err,
                      transient=True) as prog:
            task = prog.add_task("starting Prefect", total=1, note="")
            while th.is_alive():
                th.join(0.5)
                if run_id is None and notes.current():
                    prog.update(task, note=notes.current())
                if run_id is None and known.is_set():
                    run_id = result["run_id"]
                    if move_log is not None:
                        log_path = run_log_path(run_id)
                        move_log(log_path)
                if run_id is None:
                    continue
                try:
                    run = store.get_run(run_id)
                except UserError:
                    continue
                prog.update(task, description=run.phase.value, total=run.max_steps,
                            completed=min(run.steps_done, run.max_steps), note=notes.current() or run.analyst)
    except KeyboardInterrupt:
        _interrupted(store, run_id or result.get("run_id"), log_path, rerun=rerun)
    finally:
        logging.getLogger("assay").removeHandler(notes)
    if run_id is None and result.get("run_id"):
        run_id = result["run_id"]
        if move_log is not None:
            log_path = run_log_path(run_id)
            move_log(log_path)
    if "error" in result:
        exc = result["error"]
        if run_id is None:  # the flow run was never created (Prefect did not start)
            logging.getLogger("assay").error("the run did not start", exc_info=exc)
            if isinstance(exc, KeyboardInterrupt):
                raise exc
            first = (str(exc).strip().splitlines() or [""])[0]
            fail(f"the run did not start: {type(exc).__name__}: {first}", 1, log=log_path)
        fail_run(store, run_id, str(exc))
        if isinstance(exc, KeyboardInterrupt):
            raise exc
        logging.getLogger("assay").error("run %s failed", run_id, exc_info=exc)
        if isinstance(exc, UserError):
            fail(str(exc), log=log_path)
        first = (str(exc).strip().splitlines() or [""])[0]
        fail(f"run {run_id[:8]} failed: {type(exc).__name__}: {first}", 1, log=log_path)
    state = result["state"]
    try:
        run = store.get_run(run_id)
    except UserError:
        fail(state.message or "the run did not start", log=log_path)
    if run.status == RunStatus.failed and not store.has_result(run_id):
        fail(run.error or state.message or "the run failed", 1, log=log_path)
    return {"state": state, "run": run, "run_id": run_id}


@app.command()
@_guarded
def estimate(
    project: str = typer.Argument(..., help="project id"),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1,
                                            help="exploration steps (default: the project's max_steps)"),
    model: Optional[str] = typer.Option(None, "--model", help="price this model instead of the project's (a "
                                        "project that runs the statistical analyst: Claude's default model)"),
    as_json: bool = typer.Option(False, "--json", help="the estimate as JSON"),
) -> None:
    """Predict a discovery's LLM tokens and cost per phase (and the warehouse's cost where it can tell)."""
    from .estimate import render_estimate
    from .services.estimate import estimate_project

    est = estimate_project(project, max_steps=max_steps, model=model)
    if as_json:
        sys.stdout.write(json.dumps(est.as_dict(), indent=2) + "\n")
        return
    from rich.markdown import Markdown

    out.print(Markdown(render_estimate(est)))


@app.command()
@_guarded
def rerun(
    run: str = typer.Argument(..., help="run id or a unique prefix"),
    area: list[str] = typer.Option(None, "--area", help="an area to analyse again (repeatable; default: the "
                                   "areas that have no analysis: failed, or never reached)"),
) -> None:
    """Analyse some areas of a finished run again from its stored exploration (in place)."""
    from .run.lifecycle import check_rerun, unfinished_areas

    store = _store()
    checked = check_rerun(store, run, area or [])  # one line before Prefect starts
    rid = checked.id
    area = area or unfinished_areas(store, checked)
    _prefect_env()
    from .vectors.embedder import warm_up_if_cold

    # the discovery's vectors are cached: no model (no torch) unless this host never embedded with it
    warm_up_if_cold()
    server = _PrefectServer()
    from assay_flows.flows.rerun import RerunParams, rerun_flow

    params = RerunParams(run=rid, areas=area)
    server.join()
    done = _watch_flow(rid, lambda: rerun_flow(params, return_state=True), settings=server.flow_settings, rerun=True)
    if not done["state"].is_completed():
        err.print(f"[red]{escape(str(done['state'].message))}[/]", soft_wrap=True)
    show_result(rid)
    if not done["state"].is_completed() or store.get_result(rid).run_type.value == "failed":
        raise typer.Exit(1)


@app.command()
@_guarded
def discover(
    project: str = typer.Argument(None, help="project id"),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1,
                                            help="exploration steps (default: the project's max_steps)"),
    min_steps: Optional[int] = typer.Option(None, "--min-steps", min=0,
                                            help="refuse the model's `done` before this many steps (default: the "
                                            "project's)"),
    area: list[str] = typer.Option(None, "--area", help="only these areas (repeatable)"),
    warehouse: Optional[str] = typer.Option(None, "--warehouse", help="a DuckDB file, for goal-driven discovery"),
    goal: Optional[str] = typer.Option(None, "--goal", help="what to find out: this run's goal for a project, "
                                       "or with --warehouse a one-off pack"),
) -> None:
    """Run a discovery for a project (or a goal on a warehouse file)."""
    if goal is not None and not goal.strip():
        fail("--goal: give the question this run should answer")
    if warehouse and min_steps is not None:  # before the goal's project is saved: a refused run changes nothing
        from .models import Project
        from .run.lifecycle import step_bounds

        step_bounds(Project(id="goal"), max_steps, min_steps)
    if warehouse:
        project, goal = _goal_project(project, warehouse, goal)  # the goal: carried by a one-off project, or the run's
    elif goal and not project:
        fail("goal-driven discovery needs a project id, or both --warehouse FILE and --goal TEXT")
    if not project:
        fail("give a project id, or --warehouse FILE [--goal TEXT]")
    p = _store().get_project(project)  # unknown project: one line, before Prefect starts
    from .config import check_project

    check_project(p)  # the checks of `project apply` on what is stored: one line each, before Prefect starts
    from .run.lifecycle import step_bounds

    step_bounds(p, max_steps, min_steps)  # --min-steps above the run's max: one line, before Prefect starts
    if area:  # an unknown area: one line, before Prefect starts a flow run that would fail on it
        from .packs import pack_for_project

        valid = [a.id for a in pack_for_project(p).areas]
        unknown = [a for a in area if a not in valid]
        if unknown:
            fail(f"unknown area {unknown[0]!r} for pack {p.pack} (valid: {', '.join(valid)})")
    if p.state.value != "ready":
        fail(f"project {p.id} is in state {p.state.value}; discovery needs 'ready' (draft a pack with "
             f"`assay pack generate {p.id}`, then `assay pack accept {p.id}`)")
    from .llm.resolve import HOW_TO_ADD_AN_LLM
    from .run.analyst import analyst_choice

    chosen, first = analyst_choice(p)
    out.print(first, soft_wrap=True)  # the run's first line: which analyst and model, and why
    if chosen == "statistical" and "(no LLM)" in first:
        out.print(f"[dim]to use an LLM analyst, {HOW_TO_ADD_AN_LLM}[/]", soft_wrap=True, highlight=False)
    done = _run_flow(project, max_steps, min_steps, area or None, goal=goal)
    run_id = done["run_id"]
    result = _store().get_result(run_id)
    if result.run_type.value == "failed":  # its error and its log, nothing of a result it does not have
        why = "; ".join(result.errors) or "the run failed"
        fail(why, 1, log=run_log_path(run_id))  # the log's name is the run's id
    show_result(run_id, done["run"].analyst)
    if not (done["run"].goal or p.goal):  # an open discovery: how to ask the warehouse a question of one's own
        out.print(f'[dim]a question of your own: assay discover {project} --goal "..."[/]', highlight=False,
                  soft_wrap=True)
    if result.run_type.value == "partial":  # saved, but not whole: a script must not read it as a full discovery
        left = [a for a in done["run"].areas if _store().area_done(run_id, a) is None]
        err.print(f"[yellow]partial: {len(left)} area(s) have no analysis ({', '.join(left)}); "
                  f"`assay rerun {run_id[:8]}` analyses them again[/]", soft_wrap=True, highlight=False)
        raise typer.Exit(PARTIAL_EXIT)


def _file_project_id(path: Path) -> str:
    """The project of a warehouse file run without a project id: the one already made for that file (whatever its
    id: earlier ones were ``goal-<hash>``), else one named after the file (``shop`` for ``shop.duckdb``; with a
    short hash of its path when another project has that name), not ``goal-7e79d752a1``."""
    import hashlib
    import re

    projects = _store().list_projects()
    for p in projects:
        if p.pack in ("goal", "generic") and p.warehouse.kind == "duckdb" \
                and str(p.warehouse.settings.get("path")) == str(path):
            return p.id
    base = re.sub(r"[^a-z0-9_-]+", "-", path.stem.lower()).strip("-")[:40] or "warehouse"
    taken = {p.id for p in projects}
    return base if base not in taken else f"{base}-{hashlib.sha1(str(path).encode()).hexdigest()[:6]}"


def _goal_project(project: Optional[str], warehouse: Optional[str], goal: Optional[str]) -> tuple[str, str | None]:
    """The project a ``--warehouse FILE`` run uses, and the goal left for the run itself: the file's one-off
    project (made here, its pack and goal set to this run's), or a project of the same file made otherwise (applied
    from a file, scheduled), which is never rewritten: the goal is this run's alone (a new user's weekly scheduled
    project became the one-off goal's, session 26)."""
    from .models import Project, WarehouseConfig

    if not warehouse:
        fail("goal-driven discovery needs --warehouse FILE (and optionally --goal TEXT)")
    path = Path(warehouse).expanduser().resolve()
    if not path.is_file():
        fail(f"{warehouse}: no such warehouse file")
    from .warehouse.duckdb import is_duckdb_file

    if not is_duckdb_file(path):  # before a project is saved: a wrong file leaves nothing behind
        fail(f"{warehouse}: not a DuckDB database file (--warehouse takes a .duckdb file; for PostgreSQL, "
             "Snowflake and the others write a project file and `assay project apply -f` it)")
    # one project per warehouse file: each --goal run (failed ones too) reuses it with that goal;
    # without a goal the generic pack runs
    pid = project or _file_project_id(path)
    try:
        old = _store().get_project(pid)
    except UserError:
        old = None
    same = old is not None and old.pack in ("goal", "generic") and old.warehouse.kind == "duckdb" \
        and str(old.warehouse.settings.get("path")) == str(path)
    if old is not None and not same:  # a project that is not this file's goal project is never replaced
        fail(f"project {pid} already exists (pack {old.pack}, {old.warehouse.kind}); --warehouse would "
             f"replace it: run `assay discover {pid}`, or give --warehouse without a project id")
    run = dict(name=(goal or path.name)[:60], pack="goal" if goal else "generic", goal=goal or None)
    one_off = old is None or (not old.schedule and (old.pack == "goal" or old.name == path.name[:60]))
    if not one_off:  # a project of its own: kept as it is, the goal given to this run only
        return pid, goal
    if old is not None:
        # the run's goal and pack only: what the project says besides (tenant filter, PII columns, analyst, LLM)
        # is kept, never reset to the defaults by a one-off run
        p = old.model_copy(update=run)
    else:
        p = Project(id=pid, **run, warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(path)},
                                                             **_file_protections(path)))
    _store().save_project(p)
    return pid, None


def _file_protections(path: Path) -> dict:
    """The tenant filter and PII columns other projects of the same file declare: they belong to the data, so a
    one-off ``--warehouse FILE`` project takes them (a new user's tenant-filtered project's file was read whole,
    its PII unmasked, by a new project made without a word). Projects that disagree stop the run."""
    def same_file(o) -> bool:  # a path applied relative, through a link or with ~ is the same file
        try:
            return o.warehouse.kind == "duckdb" and bool(o.warehouse.settings.get("path")) and \
                Path(str(o.warehouse.settings["path"])).expanduser().resolve() == path
        except (OSError, RuntimeError):
            return False

    others = [o for o in _store().list_projects()
              if (o.warehouse.tenant_filter is not None or o.warehouse.pii_columns) and same_file(o)]
    if not others:
        return {}
    tenants = {o.warehouse.tenant_filter.model_dump_json() for o in others if o.warehouse.tenant_filter}
    if len(tenants) > 1:
        fail(f"projects {', '.join(sorted(o.id for o in others if o.warehouse.tenant_filter))} read {path.name} "
             f"with different tenant filters: run one of them with `assay discover PROJECT --goal TEXT`")
    tenant = next((o.warehouse.tenant_filter for o in others if o.warehouse.tenant_filter), None)
    pii = sorted({c for o in others for c in o.warehouse.pii_columns})
    said = " and ".join(x for x in ((f"tenant filter {tenant.column} = {tenant.value!r}" if tenant else ""),
                                    (f"PII columns {', '.join(pii)}" if pii else "")) if x)
    err.print(f"[dim]{escape(path.name)}: {escape(said)} from project {', '.join(sorted(o.id for o in others))}[/]",
              highlight=False)
    return {"tenant_filter": tenant, "pii_columns": pii}


# ---------------------------------------------------------------------------- results


def show_result(run_id: str, analyst: str | None = None) -> None:
    """A run in the terminal. ``analyst`` is given when the run's first line already said which analyst
    ran and why (`assay discover`), so it is not said twice."""
    from .llm.resolve import HOW_TO_ADD_AN_LLM
    from .models import ValidationStatus
    from .report.claims import checked_summary, claim_line, insight_notes

    store = _store()
    result = store.get_result(store.resolve_run_id(run_id))
    colour = {"full": "green", "partial": "yellow", "failed": "red"}[result.run_type.value]
    out.print(f"\n[bold]Discovery {result.run_id[:8]}[/] of [bold]{result.project_id}[/] · "
              f"[{colour}]{result.run_type.value}[/] · analyst [bold]{result.analyst}[/] · "
              f"{result.total_steps} steps · {result.duration_s:.0f}s", soft_wrap=True)  # one line, never cut
    goal = store.get_run(result.run_id).goal
    if goal:  # the question this run was given (`--goal`): said nowhere else (a new user, session 26)
        out.print(f"[dim]goal:[/] {escape(goal)}", soft_wrap=True, highlight=False)
    failed = result.run_type.value == "failed"
    if result.analyst == "statistical" and not failed:  # a failed run: its error, not which analyst would have run
        recs = "" if result.recommendations else " Recommendations need an LLM and were not generated."
        if analyst is None:  # `assay show`: which analyst ran and why, once
            note = store.get_run(result.run_id).analyst_note or "no LLM was configured"
            why = note.split(" because ", 1)[-1].rstrip(".")
            how = ("set analyst: auto in the project to use an LLM analyst when one is configured"
                   if "analyst: statistical" in why else f"to use an LLM analyst, {HOW_TO_ADD_AN_LLM}")
            out.print(f"[yellow]The statistical analyst ran: {why}; {how}.{recs}[/]", soft_wrap=True)
        elif recs:
            out.print(f"[yellow]{recs.strip()}[/]", soft_wrap=True)
    elif not failed and result.recommendation_note and not result.recommendations:
        out.print(f"[yellow]{escape(result.recommendation_note)}[/]", soft_wrap=True)
    for e in result.errors:
        out.print(f"[red]error:[/] {escape(e)}", soft_wrap=True)
    badge = {ValidationStatus.confirmed: "[green]confirmed[/]", ValidationStatus.adjusted: "[yellow]adjusted[/]",
             ValidationStatus.rejected: "[red]rejected[/]", ValidationStatus.error: "[red]not verified[/]",
             ValidationStatus.not_verifiable: "[dim]no number checked[/]"}
    sev = {"critical": "[bold red]critical[/]", "high": "[red]high[/]", "medium": "[yellow]medium[/]",
           "low": "[dim]low[/]"}
    from .report.markdown import links

    by_area = links(result)[1]  # most severe first, as the reports order them
    if not result.insights:
        out.print("\n[dim]No insights: the run failed (the error above).[/]" if failed else "\n[dim]No insights.[/]")
    else:
        out.print(f"[dim]{escape(checked_summary(result.insights))}[/]", soft_wrap=True)
    # a repeat of an insight the team disliked says so (`assay feedback`): {run8/insight: feedback}
    disliked = {f"{f.run_id[:8]}/{f.insight_id}": f for f in store.feedback(result.project_id)
                if f.rating == "dislike"}
    for area, items in by_area.items():
        out.rule(f"[bold]{area}[/]", align="left")
        for i in items:
            v = i.validation
            check = badge[v.status] if v else "[dim]unverified[/]"
            if v and v.verified_count is not None and v.status != ValidationStatus.confirmed:
                check += f" (warehouse: {v.verified_count:,})"
            count = f"{i.affected_count:,} affected · " if i.affected_count is not None else ""
            dup = f" · [dim]repeats {i.duplicate_of}[/]" if i.duplicate_of else ""
            if i.duplicate_of in disliked:  # the team's word on what it repeats (the statistical analyst reads none)
                fb = disliked[i.duplicate_of]
                dup += " · [yellow]you disliked it[/]" + (f" [dim]({escape(fb.comment)})[/]" if fb.comment else "")
            if i.merged_from:  # the ids a reader finds missing from the run (conversion-1, -2, -4)
                dup += f" · [dim]merged {', '.join(i.merged_from)} into it[/]"
            if v and v.refutation and v.status in (ValidationStatus.confirmed, ValidationStatus.adjusted):
                check += f", [dim]{escape(v.refutation)}[/]" if v.refutation.startswith("survives") else \
                    f", [yellow]{escape(v.refutation)}[/]"
            out.print(f"[bold]{i.id}[/] {sev.get(i.severity.value, i.severity.value)} · {count}{check}{dup}",
                      soft_wrap=True)
            for line in (f"[bold]{escape(i.name)}[/]", f"[dim]{escape(i.description)}[/]"):  # one block each: no padding to
                out.print(Padding(line, (0, 0, 0, 2), expand=False))         # the other's width
            for line in insight_notes(i) + [claim_line(c) for c in i.claims]:
                out.print("    " + escape(line), soft_wrap=True)
            for h in i.verdict_history[1:]:
                out.print(f"    [dim]re-verified {h.at:%Y-%m-%d %H:%M}: {h.status.value}[/]", soft_wrap=True)
    for log in result.analysis_log:
        if log.ok and log.note and log.area not in by_area:
            out.print(f"[dim]{escape(log.area)}: {escape(log.note)}[/]", soft_wrap=True)
    if result.context_notes:  # reported by the analysis, kept out of the insights (findings.split_context)
        out.print("\n[bold]Context notes[/] [dim](no difference, or a fact of the data's shape: not findings)[/]")
        for n in result.context_notes:
            out.print(f"  {escape(n.area)}: {escape(n.name)} [dim]· {escape(n.context_reason or '')}[/]",
                      soft_wrap=True)
    if result.recommendations:
        out.print("\n[bold]Recommendations[/]")  # a title line, not a centred table title padded to the width
        r = Table(expand=True)
        for c in ("id", "prio", "recommendation", "addresses"):
            r.add_column(c)
        for rec in sorted(result.recommendations, key=lambda x: x.priority):
            r.add_row(escape(rec.id), str(rec.priority), f"[bold]{escape(rec.title)}[/]\n[dim]{escape(rec.description)}[/]",
                      escape(", ".join(rec.related_insight_ids)))
        out.print(r)
    out.print(f"[dim]details: assay show {result.run_id[:8]} --json · report: assay report {result.run_id[:8]}[/]")


RUN_ARG = typer.Argument(..., help="a run id, or a unique prefix of one (`assay runs` lists them)")


@app.command()
@_guarded
def show(run: str = RUN_ARG,
         as_json: bool = typer.Option(False, "--json", help="the whole discovery as JSON"),
         steps: bool = typer.Option(False, "--steps", help="also every exploration step: what it queried, how many "
                                                          "rows came back, what failed (what was looked at and not "
                                                          "reported)")) -> None:
    """Show a run's insights, their validation, and recommendations."""
    store = _store()
    rid = store.resolve_run_id(run)
    if as_json:
        if not steps:
            sys.stdout.write(store.get_result(rid).model_dump_json(indent=2) + "\n")
            return
        body = {**store.get_result(rid).model_dump(mode="json"), "steps": [_step_row(st) for st in store.steps(rid)]}
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
        return
    show_result(rid)
    if steps:
        out.print("\n[bold]Exploration steps[/] (what was looked at, reported or not)")
        for row in (_step_row(st) for st in store.steps(rid)):
            colour = "dim" if row["outcome"] == "ok" else "red"
            out.print(f"{row['step']:>3} {row['action']:<6} {row['rows']:>9,} rows [{colour}]{escape(row['outcome'])}[/] "
                      f"{escape(row['purpose'])}", soft_wrap=True, highlight=False)


def _step_row(st) -> dict:
    """One exploration step as `assay show --steps` lists it."""
    outcome = (f"refused: {st.refused}" if st.refused else f"error: {st.error}" if st.error else "ok")
    return {"step": st.shown if st.shown is not None else st.step, "action": st.action.value, "purpose": st.purpose or st.query.split("\n", 1)[0],
            "query": st.query, "rows": st.row_count, "outcome": outcome.splitlines()[0] if outcome else ""}


@app.command()
@_guarded
def runs(project: Optional[str] = typer.Option(None, "--project", help="only this project's runs"),
         limit: int = typer.Option(20, "--limit", min=1, help="at most this many runs, newest first"),
         watch: bool = typer.Option(False, "--watch", help="refresh every 2 s until runs finish"),
         as_json: bool = typer.Option(False, "--json", help="the runs as JSON lines")) -> None:
    """List recent runs (live progress with --watch). A run's id is its Prefect flow run's id, and its state
    is the one its flow run shows (Running, Completed, Partial, Failed, Crashed, Cancelled)."""
    from .explore.leads import _one_line
    from .liveness import state_name

    store = _store()

    def reap() -> None:  # runs whose process is gone are crashed, here and on the Prefect server
        from .liveness import reap_gone_runs

        crashed = reap_gone_runs(store)
        if crashed:
            _prefect_env()
            from assay_flows.flows.runstate import mirror_crashed

            mirror_crashed(crashed)

    def table() -> Table:
        t = Table(title="Runs")
        for c in ("run", "project", "state", "phase", "steps", "analyst", "started"):
            t.add_column(c, no_wrap=True)  # an id or a date cut in two is no longer one to copy
        t.add_column("error", overflow="fold")
        for r in store.list_runs(project, limit):
            t.add_row(r.id[:8], r.project_id, state_name(r), r.phase.value, f"{r.steps_done}/{r.max_steps}",
                      r.analyst, r.started_at.strftime("%Y-%m-%d %H:%M"), escape(_one_line(r.error or "", 60)))
        return t

    if project is not None and not store.list_runs(project, 1):
        store.get_project(project)  # a misspelt project: one line with the known ones, not an empty table
    reap()
    if as_json:  # what the table shows, and what it cannot (full ids, the flow run, where it runs)
        for r in store.list_runs(project, limit):
            sys.stdout.write(json.dumps({"run": r.id, "flow_run": r.flow_run_id, "project": r.project_id,
                                         "state": state_name(r), "phase": r.phase.value,
                                         "steps": r.steps_done, "max_steps": r.max_steps, "analyst": r.analyst,
                                         "goal": r.goal, "started_at": r.started_at.isoformat(), "error": r.error,
                                         "host": r.host, "pid": r.pid}) + "\n")
        return
    if not watch:
        _table_console().print(table())
        return
    from rich.live import Live

    # off a terminal, the same wide console as the plain table (rich fit the live one in 80 columns: "Complet…")
    with Live(table(), console=_table_console(), refresh_per_second=1) as live:
        while any(r.status.value in ("pending", "running") for r in store.list_runs(project, limit)):
            time.sleep(2)
            reap()
            live.update(table())


@app.command()
@_guarded
def feedback(run: str = RUN_ARG, insight: str = typer.Argument(..., help="an insight id of that run (conversion-1)"),
             rating: str = typer.Argument(..., help="like | dislike"),
             comment: str = typer.Option("", "--comment", help="why, in a few words (kept with the feedback)")) -> None:
    """Like or dislike an insight: an LLM analyst's next runs are told to avoid (dislike) or watch (like) it, and
    any later run that repeats a disliked insight says so."""
    from .models import Feedback

    if rating not in ("like", "dislike"):
        fail("rating must be 'like' or 'dislike'")
    store = _store()
    rid = store.resolve_run_id(run)
    result = store.get_result(rid)
    found = next((i for i in result.insights if i.id == insight), None)
    keeper = next((i for i in result.insights if insight in i.merged_from), None)
    if found is None and keeper is not None:  # a gap in the ids is an insight merged into another
        fail(f"{insight} of run {rid[:8]} was merged into {keeper.id} (the same finding): rate {keeper.id}")
    if found is None:
        fail(f"run {rid[:8]} has no insight {insight!r} (ids: {', '.join(i.id for i in result.insights)})")
    store.add_feedback(Feedback(project_id=result.project_id, run_id=rid, insight_id=insight, rating=rating,
                                comment=comment, insight_name=found.name, area=found.area))
    out.print(f"recorded: {rating} {insight} of run {rid[:8]}")


@app.command()
@_guarded
def report(run: str = RUN_ARG, output: Optional[Path] = typer.Option(
        None, "-o", "--output", help="the HTML file (the Markdown is written beside it, .md)")) -> None:
    """Write the run's report: a self-contained HTML page with charts, and the same in Markdown."""
    from .report.html import render_html
    from .report.markdown import render_markdown

    store = _store()
    rid = store.resolve_run_id(run)
    result = store.get_result(rid)
    html_path = output or load_settings().reports_dir / f"{rid[:8]}.html"
    if html_path.suffix.lower() not in (".html", ".htm"):
        fail(f"{html_path}: the report is HTML; give a path ending in .html")
    html_path.parent.mkdir(parents=True, exist_ok=True)
    steps = {st.step: st for st in store.steps(rid)}
    html_path.write_text(render_html(result, steps))  # charts from the stored, masked results only
    md_path = html_path.with_suffix(".md")
    md_path.write_text(render_markdown(result))
    out.print(f"wrote {html_path}\nwrote {md_path}")


# ---------------------------------------------------------------------------- sql check


@sql_app.command("check")
@_guarded
def sql_check(file: Path, project: Optional[str] = typer.Option(
                  None, "--project", "-p", help="check with exactly the guard this project's runs use (its catalog, "
                  "schemas, tenant filter and PII columns)"),
              dialect: str = typer.Option("duckdb", "--dialect",
                                          help="SQL dialect the statements are written in (without --project)"),
              tenant: Optional[str] = typer.Option(None, "--tenant", help="column=value"),
              schemas: Optional[str] = typer.Option(None, "--schemas", help="a,b")) -> None:
    """Check a JSON list of SQL statements with the guard; prints verdicts as JSON.

    With --project, the guard is the run's own. Without it, the guard has no catalog and refuses
    what it cannot prove (every relation needs the tenant predicate; file-like names are refused).
    Exit codes, as a linter's: 0 every statement allowed, 1 the guard refused one or more (the verdicts are
    printed all the same), 2 the check could not run (bad input, an unknown project, a warehouse that fails)."""
    from .models import TenantFilter
    from .warehouse.guard import SQLGuard

    try:
        stmts = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        fail(f"{file}: not a JSON list of SQL strings ({exc})")
    if not isinstance(stmts, list) or not all(isinstance(s, str) for s in stmts):
        fail(f"{file}: must be a JSON list of SQL strings")
    if project:
        if tenant or schemas:
            fail("--project checks with the project's own tenant filter and schemas; drop --tenant/--schemas")
        try:
            guard = _project_guard(project)
        except AssayError as exc:  # could not check (schema discovery failed): 2, never the refusals' 1
            fail(str(exc), 2)
    else:
        tf = None
        if tenant:
            if "=" not in tenant:
                fail("--tenant must be column=value")
            col, val = tenant.split("=", 1)
            tf = TenantFilter(column=col, value=int(val) if val.isdigit() else val)
        guard = SQLGuard(dialect, schemas=schemas.split(",") if schemas else None, tenant=tf)
    verdicts = []
    for s in stmts:
        v = guard.check(s)
        d = v.as_dict()
        if v.allowed:
            d.update(masked_outputs=v.masked_outputs, touches_pii=v.touches_pii)
        verdicts.append(d)
    sys.stdout.write(json.dumps(verdicts, indent=2) + "\n")
    refused = [i for i, v in enumerate(verdicts, 1) if not v["allowed"]]
    if refused:
        err.print(f"refused: {len(refused)} of {len(verdicts)} statement(s) (number "
                  f"{', '.join(map(str, refused))})", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _project_guard(project_id: str):
    """The guard a run of this project builds: same warehouse, same (cached) catalog, same config."""
    from .schema.discovery import discover_schema
    from .warehouse import build_guard, open_warehouse

    store = _store()
    p = store.get_project(project_id)
    wh = open_warehouse(p.warehouse)
    try:
        tables = discover_schema(store, p, wh)
        return build_guard(wh, p.warehouse, tables)
    finally:
        wh.close()


# ---------------------------------------------------------------------------- demo


@app.command()
@_guarded
def demo(scale: float = typer.Option(1.0, "--scale", min=0.01, help="multiply the demo's rows"),
         which: str = typer.Option("ecommerce", "--which", help="ecommerce | gaming | both"),
         generate_only: bool = typer.Option(False, "--generate-only",
                                            help="only build the demo warehouses; run no discovery"),
         postgres: Optional[str] = typer.Option(None, "--postgres", help="also load the demo into this "
                                                "PostgreSQL DSN (schema assay_demo_ecommerce or _gaming) and run there"),
         mysql: Optional[str] = typer.Option(None, "--mysql", help="also load the demo into this MySQL/"
                                             "MariaDB DSN, mysql://user@host:3306/db (database "
                                             "assay_demo_ecommerce or _gaming) and run there"),
         force: bool = typer.Option(False, "--force", help="regenerate even if the files exist"),
         max_steps: int = typer.Option(60, "--max-steps", min=1, help="exploration steps per discovery")) -> None:
    """Generate the demo warehouses, register their projects and run a discovery."""
    from .demo import generate
    from .models import Project, WarehouseConfig

    settings = load_settings()
    if postgres and mysql:
        fail("--postgres and --mysql: choose one warehouse for the demo")
    if which not in ("ecommerce", "gaming", "both"):
        fail(f"--which {which}: choose ecommerce, gaming or both")
    names = ["ecommerce", "gaming"] if which == "both" else [which]
    for n in ("ecommerce", "gaming"):
        db = settings.demo_dir / f"{n}.duckdb"
        if force or not db.is_file() or not (settings.demo_dir / f"{n}_truth.json").is_file() or scale != 1.0:
            t0 = time.perf_counter()
            generate(n, settings.demo_dir, scale=scale)
            err.print(f"generated {db} in {time.perf_counter() - t0:.1f}s")
        truth = json.loads((settings.demo_dir / f"{n}_truth.json").read_text())
        p = Project(id=f"demo-{n}", name=f"Demo {n}", pack=truth["pack"], category=truth["category"],
                    warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)},
                                              pii_columns=["email", "full_name"]),
                    max_steps=max_steps)
        if postgres:
            from .demo.postgres import load_into_postgres

            schema = f"assay_demo_{n}"
            load_into_postgres(db, postgres, schema)
            err.print(f"loaded {n} into PostgreSQL schema {schema}")
            pg_settings, note = _demo_postgres_settings(postgres)
            if note:
                err.print(note, highlight=False, soft_wrap=True)
            p = p.model_copy(update={"warehouse": WarehouseConfig(
                kind="postgres", settings=pg_settings, schemas=[schema], pii_columns=["email", "full_name"])})
        if mysql and n in names:  # only the demos asked for (--which): each load takes a while
            p = _demo_mysql(p, db, n, mysql)
        _store().save_project(p)
    if generate_only:
        out.print(f"demo warehouses are in {settings.demo_dir}; projects demo-ecommerce and demo-gaming")
        return
    for n in names:
        discover(project=f"demo-{n}", max_steps=max_steps, min_steps=None, area=None, warehouse=None, goal=None)


def _demo_postgres_settings(dsn: str) -> tuple[dict, str]:
    """The demo's PostgreSQL settings: a password in the DSN is not stored; it is read from an
    environment variable (set for this process; the note tells the user to set it for later runs)."""
    from .config import DEMO_PASSWORD_ENV, strip_dsn_password

    clean, password = strip_dsn_password(dsn)
    if password is None:
        return {"dsn": clean}, ""
    os.environ[DEMO_PASSWORD_ENV] = password
    return ({"dsn": clean, "password_env": DEMO_PASSWORD_ENV},
            f"the DSN's password is not stored: later runs read it from {DEMO_PASSWORD_ENV} "
            f"(export {DEMO_PASSWORD_ENV}=... before `assay discover`)")


def _demo_mysql(p, db: Path, name: str, dsn: str):
    """Load demo ``name`` into MySQL/MariaDB and point the project there; a password in the DSN is
    not stored (later runs read it from an environment variable, as with --postgres)."""
    from urllib.parse import urlparse, urlunparse

    from .config import DEMO_MYSQL_PASSWORD_ENV
    from .demo.mysql import load_into_mysql
    from .models import WarehouseConfig
    from .warehouse.mysql import parse_dsn

    parts = parse_dsn(dsn)  # a bad DSN is one clear line before anything is loaded
    password = parts.get("password")
    u = urlparse(dsn.strip())
    netloc = (f"{u.username}@" if u.username else "") + u.netloc.rsplit("@", 1)[-1]
    clean = urlunparse(u._replace(netloc=netloc)) if password else dsn.strip()
    database = f"assay_demo_{name}"
    try:
        counts = load_into_mysql(db, dsn, database)
    except Exception as exc:
        from .errors import WarehouseUnreachable

        raise WarehouseUnreachable(f"mysql: could not load the demo into {parts['host']}:{parts['port']} "
                                   f"({type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''})"
                                   ) from None
    err.print(f"loaded {name} into MySQL database {database} ({sum(counts.values()):,} rows)")
    settings = {"dsn": clean}
    if password:
        os.environ[DEMO_MYSQL_PASSWORD_ENV] = password
        settings["password_env"] = DEMO_MYSQL_PASSWORD_ENV
        err.print(f"the DSN's password is not stored: later runs read it from {DEMO_MYSQL_PASSWORD_ENV} "
                  f"(export {DEMO_MYSQL_PASSWORD_ENV}=... before `assay discover`)", highlight=False, soft_wrap=True)
    return p.model_copy(update={"warehouse": WarehouseConfig(
        kind="mysql", settings=settings, schemas=[database], pii_columns=["email", "full_name"])})


@app.command()
@_guarded
def serve() -> None:
    """Serve a scheduled discovery deployment per project in this process (no work pool)."""
    _prefect_env()
    server = _prefect_server_for_deployments("assay serve")
    from assay_flows.deployments.serve import main as serve_main

    def announce(deployments) -> None:
        from prefect.settings import PREFECT_API_URL

        out.print(f"serving {len(deployments)} deployments on the Prefect server at {PREFECT_API_URL.value()}:",
                  highlight=False, soft_wrap=True)
        for d in deployments:
            when = ", ".join(escape(str(getattr(s.schedule, "cron", None) or s.schedule)) for s in d.schedules or [])
            out.print(f"  {escape(d.full_name)}" + (f" [dim]({when})[/]" if when else ""), highlight=False,
                      soft_wrap=True)
        if server.url:  # the local server: no UI
            out.print("[dim]run one: prefect deployment run NAME · the local server has no UI (for the Prefect UI: "
                      "`prefect server start`, then set PREFECT_API_URL) · Ctrl-C stops and pauses them[/]",
                      highlight=False, soft_wrap=True)
        else:
            out.print("[dim]run one: prefect deployment run NAME, or from the Prefect UI · Ctrl-C stops and pauses "
                      "them[/]", highlight=False, soft_wrap=True)

    with server.flow_settings():
        served = serve_main(announce)
    out.print(f"stopped serving; {len(served)} deployments paused", highlight=False, soft_wrap=True)


@app.command()
@_guarded
def deploy(pool: str = typer.Option(..., "--pool", help="Prefect work pool (`prefect work-pool create NAME "
                                                     "--type process`)")) -> None:
    """Create each project's scheduled discovery, rerun-areas and maintenance on a work pool."""
    _prefect_env()
    server = _prefect_server_for_deployments("assay deploy")
    from assay_flows.deployments.pool import deploy_to_pool

    with server.flow_settings():
        names = deploy_to_pool(pool, warn=lambda line: err.print(line, highlight=False, soft_wrap=True))
    for name in names:
        out.print(f"{name} on work pool {pool}", highlight=False, soft_wrap=True)
    out.print(f"start a worker: prefect worker start --pool {pool}", highlight=False, soft_wrap=True)


@app.command("local-server")
@_guarded
def local_server_cmd(action: str = typer.Argument("status", help="status | stop")) -> None:
    """The local Prefect server that `assay discover` and `assay rerun` start and later commands reuse
    (in this PREFECT_HOME; it exits by itself after ASSAY_PREFECT_SERVER_IDLE seconds unused)."""
    from assay_flows import local_server

    if action not in ("status", "stop"):
        fail("action must be 'status' or 'stop'")
    home = local_server.prefect_home()
    if action == "stop":
        pid = local_server.stop(home)
        out.print(f"stopped the local Prefect server (pid {pid})" if pid else "no local Prefect server running",
                  highlight=False)
        return
    st = local_server.status(home)
    if st is None:
        out.print(f"no local Prefect server running in {home}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    out.print(f"{st['url']} · pid {st['pid']} · exits after {st['idle_s']:.0f} s unused · log "
              f"{home / local_server.LOG}", highlight=False, soft_wrap=True)


@app.command()
@_guarded
def ask(project: str = typer.Argument(..., help="a project id (`assay project list`)"),
        question: str = typer.Argument(..., help="the question, in quotes"),
        turns: Optional[int] = typer.Option(None, "--turns", min=1, max=50,
                                            help="at most this many turns (queries) for the answer; default: by "
                                            "the question")) -> None:
    """Answer one question from the project's earlier findings or the warehouse; cites insight ids and SQL."""
    from rich.syntax import Syntax

    from .ask import ask as run_ask

    store = _store()
    p = store.get_project(project)
    try:
        ans = run_ask(store, p, question, turns=turns)
    except MissingKey:
        # no LLM to answer: what the project's discoveries found closest to the question, then why there is no
        # answer (the insight search needs no LLM: MCP's search_insights offers it as well)
        _closest_findings(store, p.id, question)
        raise
    out.print(f"[bold]{escape(ans.answer)}[/]", soft_wrap=True)
    out.print(f"[dim]answered from: {escape(str(ans.sources))}[/]")
    for h in ans.cited_insights():
        out.print(f"\n[dim]{h.kind} {escape(h.cite())} · {h.verdict or 'recommendation'}:[/] {escape(h.title)}",
                  soft_wrap=True)
    from .explore.numbering import name

    for s in ans.cited():  # under the number the answer cites it by (explore/numbering.py), not the stored one
        out.print(f"\n[dim]{name(s)}: {escape(s.purpose or '')} ({s.row_count:,} rows)[/]")
        out.print(Syntax(without_controls(s.query), "sql", word_wrap=True))  # rich keeps ESC (red team 14)


def _closest_findings(store, project_id: str, question: str, k: int = 3) -> None:
    from .insight_search import search_insights

    if not store.recent_results(project_id, limit=1):
        return
    try:
        hits = search_insights(store, project_id, question, top_k=k)
    except Exception:  # the search is a courtesy here: the error below is what the command says
        return
    if hits:
        out.print("[dim]no LLM to answer; the project's findings closest to the question:[/]", highlight=False)
        for h in hits:
            out.print(f"[dim]{h.kind} {escape(h.cite())} · {h.verdict or 'recommendation'}:[/] {escape(h.title)}",
                      soft_wrap=True)


@app.command()
@_guarded
def verify(run: str = RUN_ARG, insights: Optional[list[str]] = typer.Argument(
        None, help="insight ids (default: every insight that does not repeat an earlier run's)")) -> None:
    """Re-verify a run's insights against today's warehouse; keeps the history of verdicts.

    Exits 1 when the warehouse backs an insight less than its last verdict did (confirmed then, adjusted, rejected
    or in error now), so a scheduled check can alert on it; 0 otherwise."""
    import textwrap

    from .reverify import reverify
    from .validate.compare import ORDER

    store = _store()
    rows = reverify(store, run, insights or None)
    repeats = [] if insights else [i.id for i in store.get_result(store.resolve_run_id(run)).insights
                                   if i.duplicate_of]
    t = Table(title=f"Re-verified {len(rows)} insight(s)")
    t.add_column("insight", overflow="fold")
    for c in ("at discovery", "today"):
        t.add_column(c, no_wrap=True)
    t.add_column("why", overflow="fold")  # a number cut in two reads as another number
    for r in rows:
        now = f"[bold]{r.now}[/]" if r.changed else r.now
        # shortened at a space, never inside a number ("claimed 0.163 vs 0" read as a baseline of 0)
        t.add_row(escape(f"{r.insight} {textwrap.shorten(r.title, 60, placeholder=' …')}"), r.before, now,
                  escape(textwrap.shorten(r.reasoning, 240, placeholder=" …")))
    _table_console().print(t)
    changed = [r.insight for r in rows if r.changed]
    rank = {s.value: n for n, s in enumerate(ORDER)}  # worst first
    worse = [r.insight for r in rows if r.changed and rank.get(r.now, 99) < rank.get(r.before, 99)]
    out.print(f"{len(changed)} verdict(s) changed" + (f": {', '.join(changed)}" if changed else "") +
              f" · history: assay show {run} --json (verdict_history)")
    if repeats:  # a second run of the same project repeats the first's findings: say why they were left out
        out.print(f"{len(repeats)} insight(s) repeat an earlier run's and were not re-verified (verify that run, "
                  f"or name them: assay verify {run} {' '.join(repeats[:3])}{' ...' if len(repeats) > 3 else ''})")
    if worse:
        err.print(f"the warehouse backs {len(worse)} insight(s) less than their last verdict: {', '.join(worse)}",
                  highlight=False, soft_wrap=True)
        raise typer.Exit(1)


@app.command()
@_guarded
def mcp(http: bool = typer.Option(False, "--http", help="serve streamable HTTP instead of stdio"),
        host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (HTTP transport)"),
        port: int = typer.Option(8000, "--port", help="port to listen on (HTTP transport)"),
        allow_discover: bool = typer.Option(False, "--allow-discover",
                                            help="let clients start discoveries (off by default)")) -> None:
    """Serve assay to MCP clients (agents, editors): projects, runs, insights, ask, guarded SQL."""
    from .mcp_server import AssayTools, build_server

    server = build_server(AssayTools(allow_discover=allow_discover))
    if http:
        print(f"assay MCP server on http://{host}:{port}/mcp", file=sys.stderr)
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("stdio")


eval_app = typer.Typer(no_args_is_help=True, help="Measure discovery quality.")
app.add_typer(eval_app, name="eval")


@eval_app.command("demo")
@_guarded
def eval_demo(max_steps: int = typer.Option(60, "--max-steps", min=1, help="exploration steps per discovery"),
              scale: float = typer.Option(1.0, "--scale", min=0.01, help="size of the demo warehouses (1.0: about "
                                          "50,000 customers and 30,000 players)")) -> None:
    """Recall and precision of the planted patterns on both demo warehouses (statistical analyst)."""
    from .demo import generate
    from .evaluate import score_demo, scratch_store
    from .models import Project, WarehouseConfig
    from .run.lifecycle import new_run_id, run_discovery_inline
    from .store import open_store

    settings = load_settings()
    totals = {"patterns": 0, "found": 0, "insights": 0, "matching": 0, "critical_wrong": 0}
    with scratch_store(settings) as scratch:  # its projects and runs are gone when it ends
        for n in ("ecommerce", "gaming"):
            # the warehouses are written to the user's demo folder, as before; only the store is the scratch one
            db, truth_path = generate(n, settings.demo_dir / f"eval-{scale:g}", scale=scale)
            truth = json.loads(truth_path.read_text())
            p = Project(id=f"eval-{n}", pack=truth["pack"], category=truth["category"], analyst="statistical",
                        max_steps=max_steps, warehouse=WarehouseConfig(kind="duckdb", settings={"path": str(db)}))
            open_store(scratch).save_project(p)
            result = run_discovery_inline(p.id, new_run_id(), settings=scratch)
            s = score_demo(result.insights, truth["patterns"])
            out.print(f"{n}: found {len(s.found)}/{s.patterns} patterns"
                      + (f" (missed: {', '.join(s.missed)})" if s.missed else "")
                      + f"; {s.matching_insights}/{s.insights} insights match a pattern; critical wrong: "
                      f"{s.critical_wrong}")
            totals["patterns"] += s.patterns
            totals["found"] += len(s.found)
            totals["insights"] += s.insights
            totals["matching"] += s.matching_insights
            totals["critical_wrong"] += s.critical_wrong
    print(f"recall: {totals['found'] / totals['patterns']:.3f}")
    print(f"precision: {totals['matching'] / max(totals['insights'], 1):.3f}")
    print(f"critical_wrong: {totals['critical_wrong']}")


@eval_app.command("insightbench")
@_guarded
def eval_insightbench(
    directory: Path = typer.Argument(..., help="an InsightBench folder (csvs/ and flags/)"),
    tasks: str = typer.Option("1-30", "--tasks", help="task numbers: 1-30 or 1,4,9-12"),
    analyst: str = typer.Option("statistical", "--analyst", help="statistical | llm | auto"),
    max_steps: int = typer.Option(60, "--max-steps", min=1, help="exploration steps per task"),
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="per-task CSV (default: ASSAY_HOME/insightbench.csv)"),
) -> None:
    """Goal-driven discovery on InsightBench tasks, scored against their ground truth."""
    from . import insightbench as ib
    from .vectors.embedder import get_embedder

    if analyst not in ("statistical", "llm", "auto"):
        fail(f"--analyst {analyst!r}: expected statistical, llm or auto")
    settings = load_settings()
    ids = ib.parse_task_ids(tasks)
    ib.scorable(ib.load_tasks(directory, ids))  # a bad folder or task fails here, before any run
    skipped: list[int] = []

    def skip(task: int, why: str) -> None:
        skipped.append(task)
        out.print(f"task {task:>3}: skipped ({why})", highlight=False, soft_wrap=True)

    def line(s: "ib.TaskScore") -> None:
        out.print(f"task {s.task:>3}: rouge1 {s.rouge1:.3f} · cosine {s.cosine:.3f} · precision {s.precision:.2f} "
                  f"· {s.predictions} insights for {s.truths} truths · {s.seconds:.1f}s", highlight=False,
                  soft_wrap=True)

    scores = ib.evaluate(directory, ids, settings=settings, store=_store(), embed=get_embedder().embed,
                         analyst=analyst, max_steps=max_steps, on_task=line, on_skip=skip)
    path = csv_out or settings.home / "insightbench.csv"
    ib.write_csv(scores, path)
    out.print(f"[dim]per-task scores: {path}[/]")
    summ = ib.summary(scores)
    print(f"tasks: {summ['tasks']}")
    print(f"tasks_skipped: {len(skipped)}")
    for k in ("rouge1", "rouge1_description", "cosine", "precision"):
        print(f"{k}: {summ[k]:.3f}")
    print(f"seconds_per_task: {summ['seconds_per_task']:.1f}")


# ---------------------------------------------------------------------------- doctor


@app.command()
@_guarded
def doctor(project: str = typer.Argument(..., help="project id, or a project YAML file"),
           llm_timeout: float = typer.Option(30.0, "--llm-timeout", min=1, help="seconds the LLM check may take")
           ) -> None:
    """Check in one screen that the project's warehouse, LLM, store and vector index are reachable."""
    from .doctor import FAIL, OK, run_checks
    from .settings import load_project_file

    settings = load_settings()
    path = Path(project)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        p = load_project_file(path)
    else:
        p = _store().get_project(project)
    checks = run_checks(p, settings, llm_timeout_s=llm_timeout)
    t = Table(title=f"assay doctor · {p.id}", show_lines=False)
    t.add_column("part")
    t.add_column("", justify="center")
    t.add_column("detail", overflow="fold")
    t.add_column("s", justify="right")
    marks = {OK: "[green]ok[/]", FAIL: "[bold red]FAIL[/]"}
    for c in checks:
        t.add_row(c.part, marks.get(c.status, "[dim]—[/]"), escape(c.detail), f"{c.seconds:.1f}")
    out.print(t)
    failed = [c.part for c in checks if c.status == FAIL]
    if failed:
        # a check fails for more than reachability (a pii_columns entry no column has, a missing table): say which
        # part failed and leave the why to its row
        err.print(f"[bold red]not ready:[/] the {' and '.join(failed)} check{'s' if len(failed) > 1 else ''} failed "
                  f"(see above)", highlight=False)
        raise typer.Exit(1)
    out.print("[green]ready[/]: everything this project needs answered")


if __name__ == "__main__":  # `python -m assay.cli` ran nothing and exited 0
    main()
