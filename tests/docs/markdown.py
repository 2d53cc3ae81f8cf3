"""The parts of a Markdown page the doc test reads: its ```sql blocks, each with the
doctest annotation just before it, and its tables.

An annotation is an HTML comment, which Markdown shows to nobody but a reader of the
source, ending on the line just before a block's fence:

    <!-- doctest skip: needs a Citus cluster (tests/reliability/14-citus.sh runs it) -->
    <!-- doctest server: preload -->
    <!-- doctest params: $1 = 42, $2 = 'a pen' -->
    <!-- doctest
    before: CREATE TABLE customers (...);
    replace: host 'registry.example' => host '{host}'
    -->

Each directive starts a line of the comment (the first may follow `doctest`) and runs
until the next one: `skip: REASON`, `server: NAME`, `params: $N = VALUE, ...`,
`before: SQL` and `replace: OLD => NEW` (blocks.py says what each does). A doctest
comment anywhere else is an error, so that none is left behind by a moved block."""

import re
from dataclasses import dataclass, field

DIRECTIVES = ("skip", "server", "params", "before", "replace")
DIRECTIVE_RE = re.compile(r"^\s*(%s):\s?" % "|".join(DIRECTIVES))
FENCE_RE = re.compile(r"^(\s*)```(\w*)\s*$")  # indented too, as in a list item


@dataclass
class Block:
    """A ```sql block: the line of its fence, its text, and its annotation."""

    line: int
    text: str
    directives: dict = field(default_factory=dict)


class PageError(Exception):
    pass


def sql_blocks(path, lines):
    """The ```sql blocks of a page, in order."""
    blocks, annotation, annotation_end, i = [], None, None, 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("<!-- doctest"):
            start = i
            while "-->" not in lines[i]:
                i += 1
                if i == len(lines):
                    raise PageError(f"{path}:{start + 1}: a doctest comment without its -->")
            annotation = parse_annotation(path, start, "\n".join(lines[start:i + 1]))
            annotation_end = i
        fence = FENCE_RE.match(line)
        if fence:
            indent, language = fence.groups()
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            directly_after = annotation is not None and annotation_end == i - 1
            if annotation is not None and not (directly_after and language == "sql"):
                raise PageError(f"{path}:{annotation[0]}: a doctest comment not just before a ```sql block")
            if language == "sql":
                text = "\n".join(line[len(indent):] for line in lines[i + 1:end])
                blocks.append(Block(i + 1, text, annotation[1] if annotation else {}))
            annotation, i = None, end
        i += 1
    if annotation is not None:
        raise PageError(f"{path}:{annotation[0]}: a doctest comment not just before a ```sql block")
    return blocks


def parse_annotation(path, start, comment):
    """(line, {directive: value}) of a doctest comment; replace may come more than once."""
    body = comment.strip()[len("<!-- doctest"):-len("-->")]
    directives, name = {}, None
    for line in body.split("\n"):
        match = DIRECTIVE_RE.match(line)
        if match:
            name = match.group(1)
            directives.setdefault(name, []).append(line[match.end():])
        elif name:
            directives[name][-1] += "\n" + line
        elif line.strip():
            raise PageError(f"{path}:{start + 1}: a doctest comment says {line.strip()!r}, no directive")
    values = {key: [value.strip() for value in found] for key, found in directives.items()}
    for key, found in values.items():
        if key != "replace" and len(found) > 1:
            raise PageError(f"{path}:{start + 1}: {key} given twice")
    return start + 1, {key: found if key == "replace" else found[0] for key, found in values.items()}


def tables(lines):
    """Every table of a page: (line of its header, header cells, [(line, cells), ...])."""
    found, i = [], 0
    while i + 1 < len(lines):
        if FENCE_RE.match(lines[i]):  # a code block's lines are no table's
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            i += 1
        elif lines[i].startswith("|") and re.match(r"^\|(\s*-+\s*\|)+\s*$", lines[i + 1]):
            header, rows, j = cells(lines[i]), [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append((j + 1, cells(lines[j])))
                j += 1
            found.append((i + 1, header, rows))
            i = j
        else:
            i += 1
    return found


def cells(row):
    """The cells of a table row, split at the pipes that are not escaped (`\\|`)."""
    parts = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [part.strip().replace("\\|", "|") for part in parts]
