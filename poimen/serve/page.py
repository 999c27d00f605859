"""The ``/show/<sha>`` page: a lineage's display tree as nested lists, each node linking to its own page.

Read-only and self-contained (inline CSS, no script): every node that names a sha is a link to
``/show/<sha>?kind=<what it is>``, so the chain can be walked down (memory → line → evidence) and back up
(the "derived from this" and "held by" sections). All text is escaped.
"""

from __future__ import annotations

from html import escape

from poimen.read.lineage import Lineage
from poimen.read.lineage_tree import TreeNode, tree

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #222; max-width: 72em; }
h1 { font-size: 1.1em; } code, pre { font: 12.5px ui-monospace, monospace; }
ul.tree { list-style: none; padding-left: 1.4em; border-left: 1px solid #ccc; margin: .2em 0; }
ul.tree li { margin: .35em 0; }
pre { white-space: pre-wrap; margin: .2em 0 .2em .2em; color: #555; background: #f6f6f6; padding: .3em .5em; }
.kind { display: inline-block; min-width: 6.5em; color: #888; font-size: .85em; }
a { color: #0645ad; text-decoration: none; } a:hover { text-decoration: underline; }
"""


def _node(n: TreeNode) -> str:
    label = escape(n.label)
    head = f'<a href="{escape(n.link())}">{label}</a>' if n.sha else label
    body = f"<pre>{escape(n.text)}</pre>" if n.text else ""
    kids = f'<ul class="tree">{"".join(_node(c) for c in n.children)}</ul>' if n.children else ""
    sha = f' data-sha="{escape(n.sha)}"' if n.sha else ""
    return f'<li data-kind="{escape(n.kind)}"{sha}><span class="kind">{escape(n.kind)}</span>{head}{body}{kids}</li>'


def _page(title: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{_STYLE}</style></head><body>{body}</body></html>")


def lineage_page(lin: Lineage) -> str:
    root = tree(lin)
    title = f"poimen · {lin.kind.replace('_', ' ')} {lin.sha[:12]}"
    body = (f'<h1 id="title">{escape(title)}</h1><p><code id="sha">{escape(lin.sha)}</code></p>'
            f'<ul class="tree" id="lineage">{_node(root)}</ul>')
    return _page(title, body)


def error_page(message: str) -> str:
    return _page("poimen · not found", f'<h1 id="title">not shown</h1><p id="error">{escape(message)}</p>')
