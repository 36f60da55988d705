"""The Jinja2 environments of the reports: HTML (autoescaped) and Markdown (every value escaped for GitHub); in
both, every value is first made visible (`scalecheck.text.visible`).

The templates live in the project's top-level `templates/` folder; the wheel installs that folder as
`scalecheck/templates/` (see pyproject.toml), so a report renders the same from a checkout and from
`pip install .`. Undefined variables are errors in both environments.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from scalecheck import __version__
from scalecheck.text import visible


def templates_dir() -> Path:
    """The installed templates (inside the package) or, in a source checkout, the top-level folder."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "templates", package.parent / "templates"):
        if (candidate / "base.html.j2").is_file():
            return candidate
    raise FileNotFoundError(f"scalecheck's report templates are missing (looked in {package / 'templates'} and "
                            f"{package.parent / 'templates'}); reinstall scalecheck")


def html_value(value: object) -> object:
    """What an HTML template prints of `value`: made visible (`scalecheck.text.visible`), then autoescaped; markup
    the renderer built itself (a plot, the page script) is printed as it is."""
    return value if hasattr(value, "__html__") else visible(str(value))


@functools.lru_cache(maxsize=None)
def html_environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir()), autoescape=True,
                              undefined=jinja2.StrictUndefined, finalize=html_value, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)


def render_html(template: str, **values: object) -> str:
    """Render an HTML template with the page script inlined and allowed by the page's Content-Security-Policy
    through its hash (so no other script, injected or not, can run)."""
    environment = html_environment()
    script = environment.loader.get_source(environment, "report.js")[0]  # type: ignore[union-attr]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return environment.get_template(template).render(script=Markup(script), script_hash=f"sha256-{digest}",
                                                     version=__version__, **values)


# --- Markdown ----------------------------------------------------------------------------------------------------

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~:])")  # '>' becomes &gt;: no quote either


def md_text(value: object) -> str:
    """Untrusted text as inert Markdown: HTML special characters as entities, Markdown punctuation escaped, and
    '@' broken up so that no name mentions a user or team."""
    if isinstance(value, Markup):
        return str(value)
    # Markdown punctuation first, then HTML: the other way round, the '#' of an entity such as &#39; is escaped
    # too, and GitHub shows the entity as typed ("it&#39;s")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", visible(str(value)))
    text = str(escape(text))
    return text.replace("@", "@\u2060")  # a word joiner: shown as '@', never a mention


def md_code(value: object) -> Markup:
    """Untrusted text in code style: `md_text` inside an HTML `<code>` element (GitHub parses and unescapes its
    content, unlike a backtick code span, in which an entity would show as typed)."""
    return Markup(f"<code>{md_text(value)}</code>")


@functools.lru_cache(maxsize=None)
def markdown_environment() -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir()), autoescape=False,
                                     undefined=jinja2.StrictUndefined, finalize=md_text, trim_blocks=True,
                                     lstrip_blocks=True, keep_trailing_newline=True)
    environment.filters["code"] = md_code
    environment.filters["raw"] = Markup
    return environment
