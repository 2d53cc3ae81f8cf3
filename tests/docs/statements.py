"""A ```sql block cut into the statements psql would send, each with the output the page
shows for it.

The cut follows psql's own rules, as far as the docs use them: a statement ends at a `;`
outside quotes, dollar quotes and comments, or at a backslash command (`\\gset` ends the
query before it; `\\c` on a line of its own is one). A block that ends inside a statement
is an error: psql would wait for the rest.

The output shown for a statement is the run of `--` lines just below the line that ends
it, with no blank line between: psql's own output, each line behind `-- `. `…` in a shown
line stands for any text, and a shown line of `…` alone for any number of lines: what
cannot be the same on every run (the time of now, a fresh id) or what is left out.
Comment lines that are not output go after a blank line or before the statement."""

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

PARAM_RE = re.compile(r"\$(\d+)")
DOLLAR_QUOTE_RE = re.compile(r"\$([A-Za-z_]\w*)?\$")


@dataclass
class Statement:
    line: int  # the line of the page it starts on
    sql: str
    shown: list  # the output lines shown, or None when the page shows none


class BlockError(Exception):
    pass


def statements(text, first_line, params):
    """The statements of a block whose first line is line first_line of its page; $N
    outside quotes and comments become params[N]. Raises BlockError on a $N without a
    value, and on text left after the last statement."""
    lines = text.split("\n")
    starts = [0]  # where each line starts in text, and where a line after the last would
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def line_of(pos):
        return bisect.bisect_right(starts, pos) - 1

    found, sql, code_at, pos, used = [], [], None, 0, set()

    def end_statement(end):
        """Ends the statement at end; takes the output shown below its line, if the rest
        of that line holds no other statement. Returns where to go on."""
        nonlocal sql, code_at
        line = line_of(end - 1)
        rest = text[end:starts[line + 1]].strip()
        shown, after = None, end
        if not rest or rest.startswith("--"):
            below = line + 1
            while below < len(lines) and lines[below].startswith("--"):
                below += 1
            if below > line + 1:
                shown = [re.sub(r"^-- ?", "", out) for out in lines[line + 1:below]]
                after = starts[below]
        found.append(Statement(first_line + line_of(code_at), "".join(sql).strip(), shown))
        sql, code_at = [], None
        return after

    while pos < len(text):
        char, two = text[pos], text[pos:pos + 2]
        if two == "--":
            stop = text.find("\n", pos)
            stop = len(text) if stop < 0 else stop
        elif two == "/*":
            stop = text.find("*/", pos)
            if stop < 0:
                raise BlockError("a /* comment is not closed")
            stop += 2
        elif char in "'\"":
            stop = pos + 1
            while True:
                stop = text.find(char, stop)
                if stop < 0:
                    raise BlockError(f"a {char} is not closed (line {first_line + line_of(pos)})")
                if text[stop + 1:stop + 2] != char:
                    break
                stop += 2
            stop += 1
        elif char == "$" and PARAM_RE.match(text, pos):
            number = PARAM_RE.match(text, pos).group(1)
            if number not in params:
                raise BlockError(f"${number} has no value: give it with `params:` in the doctest comment")
            used.add(number)
            code_at = pos if code_at is None else code_at
            sql.append(params[number])
            pos += 1 + len(number)
            continue
        elif char == "$" and DOLLAR_QUOTE_RE.match(text, pos):
            tag = DOLLAR_QUOTE_RE.match(text, pos).group(0)
            stop = text.find(tag, pos + len(tag))
            if stop < 0:
                raise BlockError(f"a {tag} quote is not closed (line {first_line + line_of(pos)})")
            stop += len(tag)
        elif char == "\\":  # a backslash command runs to the end of its line
            stop = text.find("\n", pos)
            stop = len(text) if stop < 0 else stop
            code_at = pos if code_at is None else code_at
            sql.append(text[pos:stop])
            pos = end_statement(stop)
            continue
        elif char == ";":
            code_at = pos if code_at is None else code_at
            sql.append(char)
            pos = end_statement(pos + 1)
            continue
        else:
            stop = pos + 1
        if code_at is None and not char.isspace() and two not in ("--", "/*"):
            code_at = pos
        if code_at is not None:
            sql.append(text[pos:stop])
        pos = stop
    if code_at is not None:
        raise BlockError(f"the block ends inside a statement (line {first_line + line_of(code_at)}): no ; after it")
    unused = set(params) - used
    if unused:
        raise BlockError("params given but not used: " + ", ".join(f"${n}" for n in sorted(unused)))
    return found


def matches(shown, actual):
    """Whether the output shown stands for the actual output (lines, right-stripped): `…`
    for any text within a line, a line of `…` alone for any number of lines."""
    patterns = [None if line.strip() == "…" else
                re.compile(".*".join(re.escape(part) for part in line.rstrip().split("…")))
                for line in shown]

    @lru_cache(maxsize=None)
    def at(i, j):
        if i == len(patterns):
            return j == len(actual)
        if patterns[i] is None:
            return at(i + 1, j) or (j < len(actual) and at(i, j + 1))
        return j < len(actual) and patterns[i].fullmatch(actual[j]) is not None and at(i + 1, j + 1)

    return at(0, 0)
