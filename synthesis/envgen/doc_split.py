"""Split API documents into the sections a search index ranks and an agent reads.

A whole README is too coarse to rank (every term of a 40-operation API matches it) and too
long for an agent to read at once, so each format is cut where its authors cut it:
Markdown and reStructuredText at headings, HTML at `<h1>`..`<h6>`, an OpenAPI/Swagger
document (JSON or YAML) into one section per operation and per component schema. Any
other file is one section. Parsing problems raise `DocumentError` naming the file, so the
index can skip that file and report it instead of failing the whole corpus.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import PurePath
from typing import Any

import yaml

from envs.schemas import ref_target

__all__ = ["SUFFIXES", "DocumentError", "Section", "split_document"]

#: file suffixes the corpus indexes
SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".json", ".yaml",
                      ".yml"})
_HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
#: libyaml's safe loader when PyYAML was built with it (~10x faster on OpenAPI documents)
_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: how deep `$ref`s and nested schemas are followed when an operation is written out
_SCHEMA_DEPTH = 3


class DocumentError(ValueError):
    """A file that cannot be split (bad JSON/YAML, not text); the message names the file."""


@dataclass(frozen=True)
class Section:
    """One retrievable unit: a heading path (or operation) and its text."""

    title: str
    text: str


def split_document(path: PurePath, text: str) -> list[Section]:
    """The sections of one file, by its suffix; empty sections are dropped."""
    suffix = path.suffix.lower()
    if suffix in (".md", ".markdown"):
        sections = _split_markdown(text, path.stem)
    elif suffix == ".rst":
        sections = _split_rst(text, path.stem)
    elif suffix in (".html", ".htm"):
        sections = _split_html(text, path.stem)
    elif suffix in (".json", ".yaml", ".yml"):
        sections = _split_data(path, text)
    else:
        sections = [Section(path.stem, text)]
    return [s for s in sections if s.text.strip() or s.title.strip()]


# -- Markdown and reStructuredText ------------------------------------------------------

_ATX = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


class _Outline:
    """Collects sections under a stack of headings ("Events > Create an event")."""

    def __init__(self, intro: str) -> None:
        self.stack: list[tuple[int, str]] = []
        self.title = intro
        self.lines: list[str] = []
        self.sections: list[Section] = []

    def heading(self, level: int, text: str) -> None:
        self.flush()
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, text))
        self.title = " > ".join(t for _, t in self.stack)

    def line(self, text: str) -> None:
        self.lines.append(text)

    def flush(self) -> None:
        body = "\n".join(self.lines).strip()
        if body:
            self.sections.append(Section(self.title, body))
        self.lines = []


def _split_markdown(text: str, stem: str) -> list[Section]:
    outline = _Outline(stem)
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _ATX.match(line)
        if heading:
            outline.heading(len(heading.group(1)), heading.group(2))
        else:
            outline.line(line)
    outline.flush()
    return outline.sections


_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+<>:.])\1{2,}\s*$")


def _split_rst(text: str, stem: str) -> list[Section]:
    """Headings are a line underlined (optionally also overlined) with one punctuation
    character; levels follow the order in which adornment styles first appear."""
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []
    outline = _Outline(stem)
    i = 0
    while i < len(lines):
        line = lines[i]
        over = bool(_RST_ADORNMENT.match(line))
        title_at = i + 1 if over else i
        under_at = title_at + 1
        if (under_at < len(lines) and lines[title_at].strip()
                and not _RST_ADORNMENT.match(lines[title_at])
                and (m := _RST_ADORNMENT.match(lines[under_at]))
                and (not over or lines[i][0] == m.group(1))
                and len(lines[under_at].rstrip()) >= len(lines[title_at].strip())):
            style = (m.group(1), over)
            if style not in styles:
                styles.append(style)
            outline.heading(styles.index(style) + 1, lines[title_at].strip())
            i = under_at + 1
            continue
        outline.line(line)
        i += 1
    outline.flush()
    return outline.sections


# -- HTML -------------------------------------------------------------------------------

class _HtmlSections(HTMLParser):
    _SKIP = frozenset({"script", "style", "noscript", "template"})
    _BLOCK = frozenset({"p", "div", "li", "tr", "br", "pre", "table", "ul", "ol", "dt", "dd",
                        "section", "article"})

    def __init__(self, stem: str) -> None:
        super().__init__(convert_charrefs=True)
        self.outline = _Outline(stem)
        self.skipping = 0
        self.heading_level = 0
        self.heading_text: list[str] = []
        self.buffer: list[str] = []
        self.in_title = False
        self.page_title: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self._SKIP:
            self.skipping += 1
        elif tag == "title":
            self.in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self._end_line()
            self.heading_level, self.heading_text = int(tag[1]), []
        elif tag in self._BLOCK:
            self._end_line()

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag == "title":
            self.in_title = False
            if self.page_title:
                self.outline.title = " ".join("".join(self.page_title).split())
        elif self.heading_level and tag == f"h{self.heading_level}":
            title = " ".join("".join(self.heading_text).split())
            self.outline.heading(self.heading_level, title or f"h{self.heading_level}")
            self.heading_level = 0
        elif tag in self._BLOCK:
            self._end_line()

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        if self.in_title:
            self.page_title.append(data)
        elif self.heading_level:
            self.heading_text.append(data)
        else:
            self.buffer.append(data)

    def _end_line(self) -> None:
        line = " ".join("".join(self.buffer).split())
        if line:
            self.outline.line(line)
        self.buffer = []

    def sections(self) -> list[Section]:
        self._end_line()
        self.outline.flush()
        return self.outline.sections


def _split_html(text: str, stem: str) -> list[Section]:
    parser = _HtmlSections(stem)
    parser.feed(text)
    parser.close()
    return parser.sections()


# -- JSON / YAML, OpenAPI -----------------------------------------------------------------

def _split_data(path: PurePath, text: str) -> list[Section]:
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.load(text, _YAML)
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
        raise DocumentError(f"{path}: not valid {kind}: {' '.join(str(e).split())}") from None
    if isinstance(data, Mapping) and ("openapi" in data or "swagger" in data) \
            and isinstance(data.get("paths"), Mapping):
        return _split_openapi(data)
    return [Section(path.stem, "\n".join(_flatten(data, "")))]


def _flatten(node: Any, prefix: str) -> Iterator[str]:
    """`key.path: value` lines for every scalar of a JSON-like document."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _flatten(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(node, list):
        for value in node:
            yield from _flatten(value, prefix)
    elif node is not None:
        yield f"{prefix}: {node}" if prefix else str(node)


def _split_openapi(doc: Mapping[str, Any]) -> list[Section]:
    found = doc.get("info")
    info: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    api = str(info.get("title") or "API")
    sections = [Section(api, "\n".join(str(info[k]) for k in ("title", "description")
                                       if info.get(k)))]
    for route, item in doc["paths"].items():
        if not isinstance(item, Mapping):
            continue
        shared = item.get("parameters") or []
        for method in _HTTP_METHODS:
            op = item.get(method)
            if isinstance(op, Mapping):
                sections.append(_operation(doc, api, method, str(route), op, shared))
    schemas = _components(doc)
    for name, schema in schemas.items():
        lines = [f"schema {name}"] + _schema_lines(doc, schema, "", _SCHEMA_DEPTH)
        sections.append(Section(f"{api} > schema {name}", "\n".join(lines)))
    return sections


def _components(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    comps = doc.get("components")
    found = comps.get("schemas") if isinstance(comps, Mapping) else doc.get("definitions")
    return found if isinstance(found, Mapping) else {}


def _operation(doc: Mapping[str, Any], api: str, method: str, route: str,
               op: Mapping[str, Any], shared: list[Any]) -> Section:
    summary = str(op.get("summary") or "").strip()
    title = f"{api} > {method.upper()} {route}" + (f" ({summary})" if summary else "")
    lines = [f"{method.upper()} {route}"]
    for key in ("operationId", "summary", "description"):
        if op.get(key):
            lines.append(f"{key}: {op[key]}")
    if op.get("tags"):
        lines.append("tags: " + ", ".join(map(str, op["tags"])))
    params = [ref_target(doc, p) for p in [*shared, *(op.get("parameters") or [])]]
    for p in params:
        if isinstance(p, Mapping) and p.get("name"):
            schema = ref_target(doc, p.get("schema") or {})
            kind = schema.get("type", p.get("type", "")) if isinstance(schema, Mapping) else ""
            req = ", required" if p.get("required") else ""
            lines.append(_described(f"parameter {p['name']} ({p.get('in', '?')}, {kind}{req})",
                                    p.get("description")))
    body = ref_target(doc, op.get("requestBody") or {})
    if isinstance(body, Mapping):
        if body.get("description"):
            lines.append(f"request body: {body['description']}")
        for media in (body.get("content") or {}).values():
            if isinstance(media, Mapping) and media.get("schema"):
                lines += _schema_lines(doc, media["schema"], "body", _SCHEMA_DEPTH)
                break
    for code, response in (op.get("responses") or {}).items():
        response = ref_target(doc, response)
        if not isinstance(response, Mapping):
            continue
        lines.append(_described(f"response {code}", response.get("description")))
        for media in (response.get("content") or {}).values():
            if isinstance(media, Mapping) and media.get("schema"):
                lines += _schema_lines(doc, media["schema"], f"response {code}", 1)
                break
    return Section(title, "\n".join(lines))


def _schema_lines(doc: Mapping[str, Any], schema: Any, prefix: str, depth: int) -> list[str]:
    """`prefix.field (type): description` for the properties of a schema, `depth` deep."""
    ref = schema.get("$ref") if isinstance(schema, Mapping) else None
    schema = ref_target(doc, schema)
    if not isinstance(schema, Mapping) or depth <= 0:
        return []
    lines = []
    if isinstance(ref, str):
        lines.append(f"{prefix or 'value'}: {ref.rsplit('/', 1)[-1]}")
    if schema.get("type") == "array" and schema.get("items"):
        return lines + _schema_lines(doc, schema["items"], f"{prefix}[]", depth)
    required = set(schema.get("required") or [])
    for name, prop in (schema.get("properties") or {}).items():
        resolved = ref_target(doc, prop)
        if not isinstance(resolved, Mapping):
            continue
        kind = resolved.get("type", "object")
        enum = f" one of {', '.join(map(str, resolved['enum']))}" if resolved.get("enum") else ""
        req = ", required" if name in required else ""
        where = f"{prefix}.{name}" if prefix else str(name)
        lines.append(_described(f"{where} ({kind}{req}){enum}", resolved.get("description")))
        if kind in ("object", "array"):
            lines += _schema_lines(doc, prop, where, depth - 1)
    return lines


def _described(label: str, description: Any) -> str:
    return f"{label}: {description}" if description else label
