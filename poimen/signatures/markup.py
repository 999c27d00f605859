"""Markup that wraps a failure in a ticket, a chat message or a web page, removed before keying.

A trace pasted into JIRA inside ``{code}``, into Markdown inside a fence, or
into a page inside ``<pre>`` must give the keys the bare trace gives: the
readers anchor headers and frames at line starts, so a marker glued to the
first line (``{code}java.io.IOException: ...``) would hide the header, and a
``}}`` glued to a message would change its shape. Block markers become line
breaks (the wrapped text starts on its own line); inline markers vanish; the
HTML entities a page escapes a trace with (``&lt;init&gt;``) are decoded, and a non-breaking space (``&nbsp;``
or U+00A0, how a tracker's web page keeps a pasted trace's indentation) becomes a space, or the frames
indented with it are not read as frames.
Only markup is removed: the text between the markers is kept as it is.
"""

from __future__ import annotations

import re

# JIRA block macros with their options ({code:java}, {noformat:title=x}); Markdown fence lines with
# their info string; HTML-ish block and code tags with attributes.
_BLOCK = re.compile(
    r"\{(?:code|noformat|quote|panel)(?::[^{}\n]*)?\}"
    r"|^[ \t]*(?:```|~~~)[^\n`]*$|```"
    r"|</?(?:pre|code|tt|samp|blockquote)(?:\s[^<>\n]*)?>",
    re.MULTILINE | re.IGNORECASE,
)
# JIRA inline monospace ({{...}}) and colour ({color:red}...{color}).
_INLINE = re.compile(r"\{\{|\}\}|\{color(?::[^{}\n]*)?\}", re.IGNORECASE)
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&", "&nbsp;": " ", "\xa0": " "}
_ENTITY = re.compile("|".join(map(re.escape, _ENTITIES)))


def strip_markup(text: str) -> str:
    """``text`` without the markup around pasted code; text without markup comes back unchanged."""
    text = _BLOCK.sub("\n", text)
    text = _INLINE.sub("", text)
    return _ENTITY.sub(lambda m: _ENTITIES[m.group()], text)
