"""Markdown from run files turned into HTML that is safe to put in the page.

Texts come from the files a run wrote (TensorBoard's text plugin), so they are untrusted.
They are rendered with markdown-it in CommonMark mode plus GitHub's tables and
strikethrough, with raw HTML off (``<img onerror=...>`` stays text), links only to
http(s), mailto or relative addresses (any other scheme leaves the link as its source
text) and images never loaded: an image becomes a link to it, so a text cannot make the
page fetch anything. The page sanitises what it is given once more
(``static/widgets/markdown.js``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from html import escape

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

RenderRule = Callable[[RendererHTML, Sequence[Token], int, OptionsDict, EnvType], str]
REL = "noopener noreferrer"
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):")
_IGNORED = re.compile(r"[\x00-\x20\x7f]+")  # what browsers drop from a URL before its scheme


def safe_link(url: str) -> bool:
    """Whether ``url`` may be a link's target: http(s), mailto, or relative (no scheme)."""
    found = _SCHEME.match(_IGNORED.sub("", url).lower())
    return found is None or found.group(1) in SAFE_SCHEMES


def _image_as_link(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image as a link to it, named by its alt text: never loaded by the page."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    source = str(token.attrGet("src") or "")
    return f'<a href="{escape(source)}" rel="{REL}">image: {escape(alt or source)}</a>'


def _link_open(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A link's opening tag with its target only (no title) and ``rel`` against the opener."""
    href = str(tokens[idx].attrGet("href") or "")
    return f'<a href="{escape(href)}" rel="{REL}">'


def _tag(name: str) -> RenderRule:
    """A render rule writing ``<name>`` (GitHub's strikethrough is ``<del>``)."""
    return lambda renderer, tokens, idx, options, env: f"<{name}>"


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.validateLink = safe_link  # type: ignore[method-assign]
    parser.add_render_rule("image", _image_as_link)
    parser.add_render_rule("link_open", _link_open)
    parser.add_render_rule("s_open", _tag("del"))
    parser.add_render_rule("s_close", _tag("/del"))
    return parser


_MARKDOWN = _parser()


def render_markdown(text: str) -> str:
    """``text`` as HTML: markdown without raw HTML, unsafe links or loaded images."""
    return _MARKDOWN.render(text)
