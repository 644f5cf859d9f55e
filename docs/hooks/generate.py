"""mkdocs hook: the reference pages that are built from the code, so they cannot drift from it.

A page holds a marker, an HTML comment on a line of its own, and the build replaces it by Markdown:

- `<!-- generated: cli -->`: every `masc-ui` command (the subparsers of `masc_ui.cli.build_parser()`, nested ones
  too), its help, usage, and every option with its help and default;
- `<!-- generated: settings -->`: every field of `masc_ui.settings.Settings` with its environment variable(s), default,
  command-line flag(s) and its attribute docstring;
- `<!-- generated: metric-family NAME -->`: the registry's specs of the metrics of family NAME
  (`masc_ui.metrics.base.FAMILIES`): name, display name, range, direction, needs, media, backbone settings,
  convention and paper;
- `<!-- generated: metric-families -->`: one row per family with its page and its metrics;
- `<!-- generated: profiles -->`: the checkpoints of the `paper` and `fast` model profiles.

`expand(markdown)` is what the build calls on every page; tests call it too.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- generated: (?P<what>[a-z-]+)(?: (?P<arg>[a-z_]+))? -->$", re.M)
PROG = "masc-ui"
USAGE_WIDTH = 100


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 (mkdocs hook signature)
    """mkdocs event: replace every generation marker of a page."""
    return expand(markdown)


def expand(markdown: str) -> str:
    """`markdown` with every generation marker replaced by its generated Markdown; an unknown marker raises."""

    def replace(match: re.Match) -> str:
        what, arg = match.group("what"), match.group("arg")
        if what == "cli":
            return cli_reference()
        if what == "settings":
            return settings_reference()
        if what == "metric-family" and arg:
            return metric_family(arg)
        if what == "metric-families":
            return metric_families()
        if what == "profiles":
            return profiles_table()
        raise ValueError(f"unknown generation marker {match.group(0)!r}")

    return MARKER.sub(replace, markdown)


# --- Markdown helpers ------------------------------------------------------------------------------------------

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
_SPECIAL = re.compile(r"([\\*_<>\[\]|])")


def text(value: str) -> str:
    """Plain text (help strings, docstrings) made safe for a Markdown table cell: one line, Markdown's special
    characters escaped outside code spans (a `|` inside a code span is left alone: tables ignore it there)."""
    value = " ".join(str(value).split())
    out, last = [], 0
    for span in _CODE_SPAN.finditer(value):
        out.append(_SPECIAL.sub(r"\\\1", value[last : span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(_SPECIAL.sub(r"\\\1", value[last:]))
    return "".join(out)


def code(value: object) -> str:
    """`value` as a code span (backticks inside it handled)."""
    value = str(value)
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# --- command line ----------------------------------------------------------------------------------------------


def command_parsers(
    parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """(command path, its parser, its one-line help) for every subcommand, depth first, nested ones included."""
    if parser is None:
        from masc_ui.cli import build_parser

        parser = build_parser()
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append(((*path, name), sub, helps.get(name, "")))
                found += command_parsers(sub, (*path, name))
    return found


def action_forms(path: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    """`masc-ui db check`, ...: a command whose first positional argument is a choice (an action word)."""
    for action in parser._actions:
        if not action.option_strings and action.choices and not isinstance(action, argparse._SubParsersAction):
            return [" ".join((PROG, *path, str(choice))) for choice in action.choices]
    return []


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    formatter = argparse.HelpFormatter(parser.prog)
    return formatter._expand_help(action)


def _option(action: argparse.Action) -> str:
    if not action.option_strings:
        name = action.metavar or action.dest
        return code(name if not action.choices else f"{name} {{{','.join(map(str, action.choices))}}}")
    if action.nargs == 0:
        return ", ".join(code(s) for s in action.option_strings)
    if action.metavar:
        metavar = action.metavar
    elif action.choices:
        metavar = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        metavar = action.dest.upper()
    return ", ".join(code(f"{s} {metavar}") for s in action.option_strings)


def _default(action: argparse.Action) -> str:
    default = action.default
    if action.nargs == 0 or default is None or default == argparse.SUPPRESS or action.required:
        return ""
    return code(default)


def _command_section(path: tuple[str, ...], parser: argparse.ArgumentParser, help_line: str) -> str:
    name = " ".join((PROG, *path))
    anchor = "cmd-" + "-".join(path)
    parts = [f"### `{name}` {{#{anchor}}}", ""]
    if help_line:
        parts += [text(help_line[0].upper() + help_line[1:]) + ".", ""]
    if parser.description:
        parts += [text(parser.description), ""]
    forms = action_forms(path, parser)
    if forms:
        parts += ["Forms: " + ", ".join(code(f) for f in forms) + ".", ""]
    parts += ["```text", _usage(parser), "```", ""]
    for group in parser._action_groups:
        actions = [
            a
            for a in group._group_actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and a.help != argparse.SUPPRESS
        ]
        if not actions:
            continue
        title = group.title or "arguments"
        parts += [f"**{text(title[0].upper() + title[1:])}**", ""]
        rows = [
            [
                _option(a),
                text(_help(parser, a)) + (" (required)" if a.required and a.option_strings else ""),
                _default(a),
            ]
            for a in actions
        ]
        parts += [table(["argument", "what it does", "default"], rows), ""]
    return "\n".join(parts)


def cli_reference() -> str:
    """Markdown: a summary table of every command, then one section per command."""
    commands = command_parsers()
    summary = table(
        ["command", "what it does"],
        [
            [f"[{code(' '.join((PROG, *path)))}](#cmd-{'-'.join(path)})", text(help_line)]
            for path, _, help_line in commands
        ],
    )
    sections = [_command_section(path, parser, help_line) for path, parser, help_line in commands]
    return "\n\n".join([summary, *sections])


# --- settings --------------------------------------------------------------------------------------------------


def settings_docstrings() -> dict[str, str]:
    """Settings field -> its attribute docstring (the string literal right below the field)."""
    from masc_ui import settings as module

    tree = ast.parse(inspect.getsource(module))
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Settings")
    docs = {}
    for stmt, following in zip(cls.body, cls.body[1:]):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(following.value.value)
    return docs


def settings_env_names() -> dict[str, list[str]]:
    """Settings field -> the environment variables it is read from, in the order `Settings.from_env` tries them."""
    from masc_ui import settings as module

    plain = getattr(module, "_PLAIN_ENV", {})
    names = {}
    for f in dataclasses.fields(module.Settings):
        names[f.name] = [module.ENV.get(f.name, f"MASC_{f.name.upper()}")]
        if f.name in plain:
            names[f.name].append(plain[f.name])
    return names


def settings_flags() -> dict[str, list[str]]:
    """Settings field -> the `masc-ui` options that set it (an option whose destination is the field's name)."""
    from masc_ui.settings import Settings

    fields = {f.name for f in dataclasses.fields(Settings)}
    flags: dict[str, list[str]] = {}
    for _, parser, _ in command_parsers():
        for action in parser._actions:
            if action.dest in fields and action.option_strings:
                for option in action.option_strings:
                    if option.startswith("--") and option not in flags.setdefault(action.dest, []):
                        flags[action.dest].append(option)
    return flags


def _setting_default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return ""
    if value is None:
        return "none"
    shown = str(value).replace(str(Path.home()), "~")
    return code(shown)


def settings_reference() -> str:
    """Markdown table: setting, environment variable(s), default, flags, meaning; one row per `Settings` field."""
    from masc_ui.settings import Settings

    docs, env, flags = settings_docstrings(), settings_env_names(), settings_flags()
    rows = []
    for f in dataclasses.fields(Settings):
        rows.append(
            [
                f'<span id="setting-{f.name}"></span>{code(f.name)}',
                " or ".join(code(name) for name in env[f.name]),
                _setting_default(f),
                ", ".join(code(flag) for flag in flags.get(f.name, [])),
                text(docs.get(f.name, "")),
            ]
        )
    return table(["setting", "environment variable", "default", "flag", "meaning"], rows)


# --- metrics ---------------------------------------------------------------------------------------------------


def _range(lo: float, hi: float) -> str:
    def bound(x: float) -> str:
        return "∞" if x == math.inf else "−∞" if x == -math.inf else f"{x:g}"

    if math.isinf(lo) and math.isinf(hi):
        return "unbounded"
    return f"[{bound(lo)}, {bound(hi)}]"


_MASKS = {"none": "", "out": "output mask", "ref": "reference masks", "both": "output and reference masks"}


def _needs(spec) -> str:
    needs = [_MASKS[spec.needs_masks]] if _MASKS[spec.needs_masks] else []
    if spec.needs_reference:
        needs.append("reference")
    if spec.needs_prompt:
        needs.append("prompt")
    return ", ".join(needs) or "output only"


def family_specs() -> dict[str, list]:
    """Family name -> the registered metric specs of that family (registry order), every family of `FAMILIES`."""
    from masc_ui.metrics.base import FAMILIES
    from masc_ui.metrics.registry import list_metrics

    grouped: dict[str, list] = {family: [] for family in FAMILIES}
    for spec in list_metrics(None):
        grouped.setdefault(spec.family, []).append(spec)
    return grouped


def metric_family(family: str) -> str:
    """Markdown: the family's one line, then its metrics' declarations (two tables) from the registry."""
    from masc_ui.metrics.base import FAMILIES

    if family not in FAMILIES:
        raise ValueError(f"unknown metric family {family!r}; families: {', '.join(FAMILIES)}")
    title, line = FAMILIES[family]
    specs = family_specs()[family]
    parts = [f"*{text(line)}*", ""]
    if not specs:
        parts.append(
            "No metric of this family is registered: its metrics are declared when their values are "
            "imported (see below)."
        )
        return "\n".join(parts)
    parts.append(
        table(
            ["metric", "name", "range", "better", "needs", "media", "backbone settings"],
            [
                [
                    f'<span id="metric-{s.name}"></span>{code(s.name)}',
                    text(s.display_name),
                    _range(*s.range),
                    "higher" if s.higher_is_better else "lower",
                    _needs(s),
                    s.media,
                    "<br>".join(f"[{code(name)}](../settings.md#setting-{name})" for name in s.backbone_settings),
                ]
                for s in specs
            ],
        )
    )
    parts += [
        "",
        table(["metric", "convention", "paper"], [[code(s.name), text(s.convention), text(s.paper)] for s in specs]),
    ]
    return "\n".join(parts)


def metric_families() -> str:
    """Markdown table: one row per family (title linking its page, one line, its registered metrics)."""
    from masc_ui.metrics.base import FAMILIES

    grouped = family_specs()
    rows = [
        [
            f"[{text(title)}]({family}.md)",
            text(line),
            ", ".join(code(s.name) for s in grouped[family]) or "declared on import",
        ]
        for family, (title, line) in FAMILIES.items()
    ]
    return table(["family", "what it measures", "metrics"], rows)


# --- model profiles --------------------------------------------------------------------------------------------


def profiles_table() -> str:
    """Markdown table: one row per model of `masc_ui.models.profiles.ModelIds`, its `paper` and `fast` checkpoint."""
    from masc_ui.models import profiles

    docs = {}
    tree = ast.parse(inspect.getsource(profiles))
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "ModelIds")
    for stmt, following in zip(cls.body, cls.body[1:]):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(following, ast.Expr)
            and isinstance(getattr(following, "value", None), ast.Constant)
        ):
            docs[stmt.target.id] = inspect.cleandoc(following.value.value)
    rows = []
    for f in dataclasses.fields(profiles.ModelIds):
        paper, fast = getattr(profiles.PAPER, f.name), getattr(profiles.FAST, f.name)
        rows.append(
            [
                code(f.name),
                text(docs.get(f.name, "")),
                code(paper) if paper else "official download",
                "same" if fast == paper else code(fast),
            ]
        )
    return table(["model", "what for", "paper", "fast"], rows)
