"""The ``archdiff`` console script: argument parsing, progress and exit codes, nothing else.

Exit codes: 0 success; 1 differences found (``compare --fail-on``) or an internal failure;
2 bad user input (a spec of no known form, a missing ref, a corrupt evidence file, ...), or an
output or cache directory that cannot take what must be written (full, read-only).
"""

from __future__ import annotations

import atexit
import importlib
import json
import logging
import os
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

import click

from archdiff.outputs import writable_dir
from archdiff.progress import echo_above, open_progress
from extractor.errors import ArchdiffError
from extractor.support.toolversion import archdiff_version

_STARTED = time.perf_counter()  # the command's clock starts when the CLI is imported

# The objects of the extraction a console-script process makes, which :func:`main` leaves to the
# end of the process rather than freeing them; None where the command runs inside another program
# (click's CliRunner in tests), which goes on after it and must get its memory back.
_LEFT_TO_EXIT: list[object] | None = None


class _Group(click.Group):
    """Turns archdiff's own errors into one line on stderr and the right exit code; imports a
    plugged sub-command's module (:data:`_PLUGGED`) when it is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_PLUGGED})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _PLUGGED:
            module_name, attr = _PLUGGED[cmd_name]
            self.add_command(getattr(importlib.import_module(module_name), attr), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except ArchdiffError as err:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"archdiff: error: {err}", err=True)
            sys.exit(err.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # --help, usage errors (click exits 2 for those) and aborts are click's to report
        except KeyboardInterrupt:
            click.echo("archdiff: interrupted", err=True)
            sys.exit(130)
        except Exception as err:  # a bug: say so in one line unless --debug
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"archdiff: internal error: {type(err).__name__}: {err} (run with --debug for a traceback)",
                       err=True)
            sys.exit(1)


def _version(ctx: click.Context, _param: click.Parameter, asked: bool) -> None:
    """``--version``: the installed distribution's version, looked up only when asked (every other
    command starts without importlib.metadata)."""
    if asked and not ctx.resilient_parsing:
        click.echo(f"archdiff {archdiff_version()}")
        ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="Print archdiff's version (a CI job pins and logs it) and exit.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """archdiff: architecture evidence from source repositories, and side-by-side comparisons."""
    ctx.obj = {"debug": debug or bool(os.environ.get("ARCHDIFF_DEBUG"))}
    _warnings_to_stderr()


class _EachWarningOnce(logging.Handler):
    """The library's warnings (a cache turned off, ...) on stderr, each message once per run."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message not in self.seen:
            self.seen.add(message)
            line = f"archdiff: warning: {message}"
            if not echo_above(line):
                click.echo(line, err=True)


def _warnings_to_stderr() -> None:
    log = logging.getLogger("archdiff")
    for handler in log.handlers:
        if isinstance(handler, _EachWarningOnce):
            handler.seen.clear()
            return
    log.addHandler(_EachWarningOnce())
    log.propagate = False


@cli.command()
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option("--name", default="", help="System name (default: from the first source).")
@click.option("--version", "version_", default="", help="System version (default: the ref or package version).")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("out"),
              callback=writable_dir,
              show_default=True, help="Directory for evidence.json and the run log.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=os.cpu_count() or 1, show_default=True,
              help="Worker processes for parsing.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Cache for downloads, clones and parsed facts (default: $ARCHDIFF_CACHE or ~/.cache/archdiff).")
@click.option("--binary", "binaries", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="An ELF file with DWARF whose struct layouts join the evidence (repeatable).")
@click.option("--no-probes", is_flag=True, help="Do not compile header probes for struct layouts.")
@click.option("--graph-format", "graph_formats", multiple=True, type=click.Choice(["graphml", "gexf", "json"]),
              help="Also export the symbol graph in this format next to evidence.json (repeatable).")
@click.option("--taxonomy", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Your own role taxonomy (YAML, the shape of extractor/layers/roles.yaml).")
@click.option("--detectors", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Your own concept detectors (YAML, the shape of extractor/concepts/detectors.yaml).")
@click.option("--compile-commands", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A compile_commands.json: each header is probed with its nearest translation unit's "
                   "include directories, defines and standard.")
@click.option("--include-dir", "include_dirs", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="A directory the struct probes search for #include (repeatable).")
@click.option("--define", "defines", multiple=True, metavar="NAME[=VALUE]",
              help="A macro defined for every struct probe (repeatable).")
@click.option("--headers-from", "headers_from", multiple=True, metavar="SPEC",
              help="pypi:NAME[==VERSION] or an installed distribution whose include directories the struct "
                   "probes use; a wheel is downloaded into the cache, never installed or run (repeatable).")
def extract(sources, name, version_, out_dir, jobs, cache_dir, binaries, no_probes, graph_formats, taxonomy,
            detectors, compile_commands, include_dirs, defines, headers_from) -> None:
    """Extract architecture evidence from SOURCE... (one system).

    SOURCE is [label=]spec, where spec is a git URL with optional @ref, a local directory,
    pypi:NAME==VERSION, or a .tar.gz/.zip path or URL. Several sources make one system. A single
    SOURCE may instead be a system file (YAML: name, version, sources, and optionally build, whose
    settings the command-line options extend).
    """
    startup_cpu = time.process_time()  # what starting Python, importing the CLI and parsing arguments cost
    from extractor.buildsettings import BuildSettings
    from extractor.context import ExtractOptions
    from extractor.run.pipeline import extract_system
    from extractor.presets import system_or_sources
    from extractor.support.storage import write_atomic

    build = BuildSettings(tuple(str(d) for d in include_dirs), tuple(defines),
                          str(compile_commands) if compile_commands else "", tuple(headers_from))
    sources, name, version_, build = system_or_sources(sources, name, version_, build)
    extra = {key: str(path) for key, path in (("taxonomy", taxonomy), ("detectors", detectors)) if path}
    options = ExtractOptions(jobs=jobs, cache_dir=cache_dir, binaries=tuple(binaries), probe_structs=not no_probes,
                             extra=extra, build=build)
    with open_progress() as progress:
        result = extract_system(sources, name=name, version=version_, options=options, progress=progress,
                                keep=_LEFT_TO_EXIT)
        progress.section("")
        progress.phase("writing evidence.json")
        written = time.perf_counter()
        path = result.write(out_dir)
        if graph_formats:
            from extractor.evidence.graph import export_graph  # networkx: a tenth of a second to import

            for fmt in graph_formats:
                export_graph(result.bundle, fmt, out_dir / f"graph.{fmt}")
        written = time.perf_counter() - written
    command = {"name": "extract", "wall_s": round(time.perf_counter() - _STARTED, 3),
               "write_s": round(written, 3), "startup_cpu_s": round(startup_cpu, 3)}
    log = {**result.log, "command": command,
           "timings_s": {k: round(v, 3) for k, v in result.timings.items()}, "cache": result.cache}
    write_atomic(out_dir / "run-log.json", json.dumps(log, indent=2, sort_keys=True) + "\n")
    report_extraction(path, result.summary, result.cache)


def report_extraction(path: Path, summary: dict, cache: dict) -> None:
    """The result on stdout (counts, then one line per kind of problem, with what fixes it);
    errors of single files on stderr. Counts come from the summary: a warm run never parses its
    48 MB bundle only to count it."""
    errors = [d for d in summary["diagnostics"] if d["severity"] == "error"]
    for d in errors[:ERRORS_SHOWN]:
        click.echo(f"{d['path']}:{d['line']}: error: {d['message']} [{d['code']}]", err=True)
    if len(errors) > ERRORS_SHOWN:
        click.echo(f"... {len(errors) - ERRORS_SHOWN} more errors in {path} (\"diagnostics\")", err=True)
    click.echo(f"{path}: {summary['nodes']} nodes, {summary['edges']} edges from {summary['files']} files; "
               f"{len(summary['diagnostics'])} diagnostics "
               f"({cache['hits']} cached, {cache['misses']} parsed)")
    from extractor.acquire.inventory import not_read_notes  # listed already: no import paid here

    for note in not_read_notes(summary["diagnostics"]):
        click.echo(f"  {note}")
    groups = [g for g in summary.get("groups", ()) if g["severity"] != "error"]
    for g in groups:
        fix = f"; fix: {g['fix']}" if g["fix"] else ""
        click.echo(f"  {g['severity']}: {g['what']}{fix} [{g['code']}]")
    if groups:
        click.echo(f"  each with its file and line: {path}, \"diagnostics\"")


ERRORS_SHOWN = 10  # errors of single files printed one by one, the rest counted


# Sub-commands that live in their own modules, by command name: a module is imported when its
# command runs (or help lists it), so ``archdiff structs`` does not pay for the comparator's and
# release tracking's imports (0.15 s of CPU, half of pahole's whole run on libpython), and a
# missing optional one never breaks the rest of the CLI.
_PLUGGED = {
    "structs": ("archdiff.commands.structs", "structs"),
    "telemetry": ("archdiff.commands.telemetry", "telemetry"),
    "presets": ("archdiff.commands.presets", "presets"),
    "compare": ("archdiff.commands.compare", "compare"),
    "battle": ("archdiff.commands.compare", "battle"),
    "releases": ("archdiff.commands.releases", "releases"),
    "graph": ("archdiff.commands.graph", "graph"),
    "check": ("archdiff.commands.check", "check"),
}


def main() -> None:
    global _LEFT_TO_EXIT
    _LEFT_TO_EXIT = []
    try:
        code = cli.main(prog_name="archdiff", standalone_mode=False)
    except click.UsageError as err:
        # One line like every other error, naming where the help is: click's own block is three
        # (usage, a hint, the message) with a blank line in between.
        where = err.ctx.command_path if err.ctx else "archdiff"
        click.echo(f"archdiff: error: {err.format_message().rstrip('.')} (see {where} --help)", err=True)
        sys.exit(err.exit_code)
    except click.ClickException as err:
        click.echo(f"archdiff: error: {err.format_message()}", err=True)
        sys.exit(err.exit_code)
    except click.Abort:
        click.echo("archdiff: interrupted", err=True)
        sys.exit(130)
    code = code if isinstance(code, int) else 0  # --help and the like return click's exit code
    if _LEFT_TO_EXIT:
        _exit_without_freeing(code)
    sys.exit(code)


def _exit_without_freeing(code: int) -> NoReturn:
    """End the process as Python's exit would, except that the objects it holds are not freed one
    by one (vLLM's extraction: 3 million, 0.13 s of CPU spent only for the process to end). What
    the exit does that matters is done first: other threads joined, exit handlers run (log
    handlers flushed, temporary files removed), stdout and stderr flushed."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
