"""``FORMATS``, the one table of what poimen reads: a format's name, its reader, what joins its records in a chunk,
and the file suffixes it is the default for."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from poimen.errors import SourceError
from poimen.inputs.readers import (bundle, chat, feed, html, jsonrecords, log, mail, markdown, mediawiki, shell, text,
                                   tickets, wiki)
from poimen.inputs.readers.fields import Fields
from poimen.inputs.records import Record


@dataclass(frozen=True)
class ReadOptions:
    max_chars: int = 80_000  # a piece with no boundary is cut past this many characters (a 200 MB line)
    fields: Fields = field(default_factory=Fields)


@dataclass(frozen=True)
class Format:
    name: str
    read: Callable[[Path, ReadOptions], Iterator[Record]]
    separator: str  # what joins its records in a chunk: a blank line between paragraphs, a newline between lines
    suffixes: tuple[str, ...]
    about: str


FORMATS: dict[str, Format] = {f.name: f for f in (
    # (reStructuredText and AsciiDoc pages, a wiki's postmortems, are text with underlined titles and indented blocks)
    Format("text", text.read, "\n\n", (".txt", ".text", ".rst", ".rest", ".adoc", ".asciidoc"),
           "plain text, paragraphs a blank line apart"),
    Format("markdown", markdown.read, "\n\n", (".md", ".markdown"), "sections, tables, fenced blocks"),
    Format("wiki", wiki.read, "\n\n", (".wiki",), "Jira/Confluence wiki markup: h2. headings, ||tables||, {code}"),
    Format("mediawiki", mediawiki.read, "\n\n", (".mediawiki", ".wikitext"),
           "MediaWiki markup: == headings ==, {| tables |}, <pre> blocks"),
    Format("html", html.read, "\n\n", (".html", ".htm", ".xhtml"), "a page: a wiki's HTML export, a saved page"),
    Format("mail", mail.read, "\n\n", (".eml",), "an e-mail saved as .eml: its subject, sender and body"),
    Format("bundle", bundle.read, "\n\n", (), "files printed one after another under tail's ==> name <== banners"),
    Format("feed", feed.read, "\n\n", (".atom", ".rss"), "an Atom or RSS feed: a status page's incident history"),
    Format("log", log.read, "\n", (".log",), "log lines with their multi-line traces"),
    Format("shell", shell.read, "\n", (".cast",), "a terminal session: prompts, commands, output, # notes"),
    Format("jsonl", jsonrecords.read_jsonl, "\n", (".jsonl", ".ndjson"), "JSON Lines: chat turns or any records"),
    Format("json", jsonrecords.read_json, "\n\n", (), "a JSON array (or object) of records: issues, events"),
    Format("chat", chat.read, "\n", (".json",), "a Slack or Mattermost export (JSON; Mattermost bulk JSONL)"),
    Format("csv", tickets.read, "\n\n", (".csv",), "a CSV export: tickets with comments (Jira, GitHub), or rows"),
)}
SUFFIXES: dict[str, str] = {s: f.name for f in FORMATS.values() for s in f.suffixes}


class UnknownFormat(SourceError):
    """A file whose format is neither named nor recognised."""


def known_formats() -> str:
    return ", ".join(FORMATS)


def format_named(name: str, path: Path | None = None) -> Format:
    if name not in FORMATS:
        where = f"{path}: " if path is not None else ""
        raise UnknownFormat(f"{where}unknown format {name!r}; poimen reads {known_formats()}")
    return FORMATS[name]
