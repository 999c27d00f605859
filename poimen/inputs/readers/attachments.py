"""What a chat message says outside its ``text``: message attachments (Slack's, which Mattermost's webhooks copy)
and Slack's Block Kit blocks, as lines of text.

An alert bot often posts with an empty ``text``: its content is in an attachment (``pretext``, ``title``, ``text``
and ``fields`` of title and value; ``fallback`` when it has none of those) or in blocks (``section``/``header``/
``context`` text and fields, ``rich_text`` elements), or in an Adaptive Card (Teams: its TextBlocks and FactSets). A person's message repeats its text in a ``rich_text``
block, so rich text is read only when the message has no text of its own, and any other block only where its
text is not already in the message.
"""

from __future__ import annotations

import json

from poimen.inputs.readers.fields import as_text

_ATTACHMENT_PARTS = ("pretext", "author_name", "title", "text")


def attachment_lines(attachment: object) -> list[str]:
    if not isinstance(attachment, dict):
        return []
    card = _adaptive(attachment.get("content"))
    if card is not None:
        return card_lines(card)
    lines = [as_text(attachment.get(k)).strip() for k in _ATTACHMENT_PARTS]
    for f in attachment.get("fields") or []:
        if isinstance(f, dict) and (f.get("title") or f.get("value")):
            title, value = as_text(f.get("title")).strip(), as_text(f.get("value")).strip()
            lines.append(f"{title}: {value}" if title and value else title or value)
    lines = [x for x in lines if x]
    if not lines:
        lines = [as_text(attachment.get("fallback")).strip()]
    lines += [x for x in block_lines(attachment.get("blocks"), rich=True) if x not in lines]
    return [x for x in lines if x]


def _rich(element: object) -> str:
    """A rich_text element (a section, list, quote or preformatted run, or one of their pieces) as Slack's own
    markup ("<@U123>", "<url|label>"), which the chat reader renders as it renders a message's text."""
    if not isinstance(element, dict):
        return ""
    kind = element.get("type")
    if kind == "text":
        return as_text(element.get("text"))
    if kind == "emoji":
        return f":{as_text(element.get('name'))}:"
    if kind == "link":
        url, label = as_text(element.get("url")), as_text(element.get("text"))
        return f"<{url}|{label}>" if label and label != url else f"<{url}>"
    if kind in ("user", "channel", "usergroup", "broadcast"):
        mark = {"user": "@", "channel": "#", "usergroup": "!subteam^", "broadcast": "!"}[kind]
        return f"<{mark}{as_text(element.get(kind + '_id') or element.get('range'))}>"
    inner = "".join(_rich(e) for e in element.get("elements") or [])
    if kind == "rich_text_preformatted":
        return f"```{inner}```"
    if kind == "rich_text_list":
        return "\n".join("• " + _rich(e) for e in element.get("elements") or [])
    return inner


def _text_object(value: object) -> str:
    return as_text(value.get("text")).strip() if isinstance(value, dict) else ""


def block_lines(blocks: object, rich: bool) -> list[str]:
    """The text of Block Kit blocks, one entry a block (``rich``: read rich_text blocks too)."""
    out: list[str] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "rich_text":
            if rich:
                out.append("\n".join(_rich(e) for e in block.get("elements") or []).strip())
        elif kind in ("section", "header"):
            out.append(_text_object(block.get("text")))
            out += [_text_object(f) for f in block.get("fields") or []]
        elif kind == "context":
            out.append(" ".join(x for x in (_text_object(e) for e in block.get("elements") or []) if x))
    return [x for x in out if x]


def extra_lines(text: str, message: dict) -> list[str]:
    """The lines a message adds to its ``text``: its blocks (rich text only when it has no text), then its
    attachments, each line once."""
    squashed = " ".join(text.split())
    out: list[str] = []
    for line in block_lines(message.get("blocks"), rich=not text.strip()):
        if " ".join(line.split()) not in squashed:
            out.append(line)
    for a in message.get("attachments") or []:
        out += [x for x in attachment_lines(a) if x not in out and " ".join(x.split()) not in squashed]
    return out


def _adaptive(content: object) -> dict | None:
    """An Adaptive Card (a Teams bot's post: Azure Monitor, Power Automate), which Graph gives as a JSON string."""
    if isinstance(content, str) and content.lstrip().startswith("{"):
        try:
            content = json.loads(content)
        except ValueError:
            return None
    return content if isinstance(content, dict) and content.get("type") == "AdaptiveCard" else None


def card_lines(element: object) -> list[str]:
    """An Adaptive Card's text: its TextBlocks' text and its FactSets' "title: value", in card order."""
    if isinstance(element, list):
        return [x for e in element for x in card_lines(e)]
    if not isinstance(element, dict):
        return []
    if element.get("type") == "TextBlock":
        return [as_text(element.get("text")).strip()] if as_text(element.get("text")).strip() else []
    if element.get("type") == "FactSet":
        return [f"{as_text(f.get('title')).strip()}: {as_text(f.get('value')).strip()}"
                for f in element.get("facts") or [] if isinstance(f, dict)]
    return [x for k in ("body", "items", "columns") for x in card_lines(element.get(k))]


def embed_lines(embed: object) -> list[str]:
    """A Discord embed (a bot's post: DiscordChatExporter's "embeds") as lines: its title, description and fields."""
    if not isinstance(embed, dict):
        return []
    lines = [as_text(embed.get(k)).strip() for k in ("title", "description")]
    for f in embed.get("fields") or []:
        if isinstance(f, dict):
            name, value = as_text(f.get("name")).strip(), as_text(f.get("value")).strip()
            lines.append(f"{name}: {value}" if name and value else name or value)
    return [x for x in lines if x]
