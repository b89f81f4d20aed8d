"""The shell commands a report prints: how to reproduce one claim's audit, and an index's.

Every word is shell-quoted (a saved record's fields must not become shell syntax); a
command an audit recorded is printed only when it is one
:func:`dpaudit.claims.registry.reproduce_command` writes, for the page's own claim (it
names the ``--plugin`` a claim from outside dpaudit needs, or is a note saying how a script's
claim is reproduced, where the bare command would fail as pasted).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

__all__ = ["reproduce_command", "needed_plugins", "recorded_command", "index_reproduce_command"]


def _alpha_text(alpha: Any) -> str:
    """alpha as the pages print it (4 significant digits, as ``view.format_value``)."""
    return f"{float(alpha):.4g}"


def reproduce_command(record: Mapping[str, Any]) -> str:
    """How to recompute this claim's audit bit for bit: the command the registry recorded when it
    is a valid one (it names the ``--plugin`` a claim from outside dpaudit needs, or is a note
    saying how a script's claim is reproduced, since the bare command fails
    as pasted for those), else the bare ``dpaudit audit`` command of the record's settings. Every word is
    shell-quoted: a saved record's fields must not become shell syntax."""
    import shlex

    recorded = recorded_command(record.get("reproduce"))
    if recorded.startswith("(") or shlex.split(recorded)[:3] == ["dpaudit", "audit", record["id"]]:
        return recorded  # a note, or a command for this claim (not another's)
    return _shell_words("dpaudit", "audit", record['id'], "--budget",
                        record.get('budget', 'standard'), "--seed", record.get('seed', 0),
                        "--alpha", _alpha_text(record.get('alpha', 0.05)))


def needed_plugins(record: Mapping[str, Any]) -> list[str] | None:
    """The ``--plugin`` specs the claim's reproduce command names (``[]`` for a claim dpaudit
    registers itself); None when no command reproduces it (a script's or an interactive claim:
    the recorded text is a note)."""
    import shlex

    command = reproduce_command(record)
    if command.startswith("("):
        return None
    words = shlex.split(command)
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--plugin"]


def _shell_words(*words: Any) -> str:
    import shlex

    return " ".join(shlex.quote(str(w)) for w in words)


def recorded_command(text: Any) -> str:
    """A command an audit function recorded (a saved record's ``reproduce``), or "" when it is not
    one that :func:`dpaudit.claims.registry.reproduce_command` writes: words shell-quoted as
    ``shlex.quote`` does, starting with ``dpaudit``, or a parenthesised note free of shell syntax.
    A crafted record cannot put ``$(...)`` into the command a report tells readers to paste."""
    import shlex

    text = str(text or "").strip()
    if not text or "\n" in text or "\r" in text:
        return ""
    if text.startswith("(") and text.endswith(")"):
        return text if not re.search(r"[$`;|&<>\\]", text) else ""
    try:
        words = shlex.split(text)
    except ValueError:
        return ""
    ok = words[:1] == ["dpaudit"] and " ".join(shlex.quote(w) for w in words) == text
    return text if ok else ""


def index_reproduce_command(records: Sequence[Mapping[str, Any]], out: str = "DIR",
                            registered: Sequence[str] | None = None) -> str:
    """The command regenerating an index, when all its claims share budget, seed and alpha.

    ``--all`` instead of the ids when the index holds exactly the ``registered`` claims.
    """
    keys = {(r.get("budget"), r.get("seed"), r.get("alpha")) for r in records}
    if len(keys) != 1:
        return ""
    plugins: list[str] = []
    for r in records:
        needed = needed_plugins(r)
        if needed is None:  # a claim no command reproduces: neither does one for the index
            return ""
        plugins += [p for p in needed if p not in plugins]
    budget, seed, alpha = next(iter(keys))
    ids = " ".join(r["id"] for r in records)
    if registered is not None and set(registered) == {r["id"] for r in records}:
        ids = "--all"
    words = ["--all"] if ids == "--all" else [r["id"] for r in records]
    plugin_words = [w for p in plugins for w in ("--plugin", p)]
    return _shell_words("dpaudit", "audit-claims", *words, "--budget", budget, "--seed", seed,
                        "--alpha", _alpha_text(alpha), "--out", out, *plugin_words)
