"""Runs the ```sql blocks of one page as a reader would, and judges each: `ok`, `skip`
(its annotation says why) or `FAIL` (a statement failed that shows no error, or psql
printed other than the output shown).

A page's blocks run in order in one psql session per server, in a database of the page's
own (doc_readme, doc_migrating, ...), so a block may use what earlier ones made. The
annotation's directives (markdown.py) adapt a block to the test, visibly in the source:
  skip: REASON       the block is not run (it needs more than the servers of the test)
  server: NAME       it runs on that server (tests/docs.sh starts them) instead of `stock`
  params: $N = V, …  a client's parameters, substituted as literal SQL
  before: SQL        runs first, unshown (tables the page describes in words); it may use
                     {host}, {port} and {db}: the server's socket, port and the database
  replace: A => B    text of the block swapped before it runs (a host name of an example
                     for this server: B may use {host}, {port} and {db} too)"""

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from statements import BlockError, matches, statements

SEVERITY_RE = re.compile(r"^(ERROR|FATAL|PANIC|WARNING|NOTICE|INFO|LOG|DEBUG\d?):  ")
# The lines psql prints under a message: its fields, and the query with its caret.
CONTINUATION_RE = re.compile(r"^((DETAIL|HINT|CONTEXT|QUERY|STATEMENT|LINE \d+):|\s)")
DEFAULT_SERVER = "stock"


@dataclass
class Result:
    status: str  # ok, skip or FAIL
    line: int
    subject: str = ""  # the reason of a skip
    details: list = field(default_factory=list)  # what failed


def run_page(path, blocks, servers):
    """The Result of each block of the page, in order."""
    database = "doc_" + re.sub(r"\W", "_", Path(path).stem.lower())
    results, scripts, checks = {}, {}, []
    for index, block in enumerate(blocks):
        directives = block.directives
        if "skip" in directives:
            results[index] = Result("skip", block.line, directives["skip"])
            continue
        server = servers.get(directives.get("server", DEFAULT_SERVER))
        if server is None:
            results[index] = Result("FAIL", block.line, details=[f"no server {directives['server']!r} in this test"])
            continue
        places = {"host": server.host, "port": str(server.port), "db": server.database(database)}
        try:
            text = replaced(block.text, directives.get("replace", []), places)
            found = statements(text, block.line + 1, params(directives.get("params", "")))
        except BlockError as error:
            results[index] = Result("FAIL", block.line, details=[str(error)])
            continue
        script = scripts.setdefault(server.name, [])
        if "before" in directives:
            checks.append((index, server.name, len(script), None))
            script.append(fill(directives["before"], places))
        for statement in found:
            checks.append((index, server.name, len(script), statement))
            script.append(statement.sql)
    outputs = {name: run(servers[name], database, script) for name, script in scripts.items()}
    failures = {}
    for index, name, number, statement in checks:
        problem = judge(statement, *[stream.get(number) for stream in outputs[name]])
        if problem:
            failures.setdefault(index, []).append(problem)
    for index, block in enumerate(blocks):
        if index not in results:
            results[index] = Result("FAIL" if index in failures else "ok", block.line,
                                    details=failures.get(index, []))
    return [results[index] for index in range(len(blocks))]


def params(text):
    """{N: value} of a params directive: `$1 = '2026-11-22', $2 = 17`."""
    found = dict(re.findall(r"\$(\d+)\s*=\s*('(?:[^']|'')*'|[^,]+)", text))
    return {number: value.strip() for number, value in found.items()}


def fill(text, places):
    return re.sub(r"\{(host|port|db)\}", lambda match: places[match.group(1)], text)


def replaced(text, replacements, places):
    for replacement in replacements:
        old, arrow, new = replacement.partition("=>")
        if not arrow or old.strip() not in text:
            raise BlockError(f"replace: {old.strip()!r} is not in the block")
        text = text.replace(old.strip(), fill(new.strip(), places))
    return text


def mark(number):
    return f"@@doctest {number}@@"


def run(server, database, script):
    """Runs the script's pieces in one session; ({piece: stdout lines}, {piece: stderr
    lines}). A marker before each piece, on both streams, tells whose output is whose."""
    text = "".join(f"\\echo '{mark(n)}'\n\\warn '{mark(n)}'\n{piece}\n" for n, piece in enumerate(script))
    return tuple(split(stream, len(script)) for stream in server.session(database, text))


def split(stream, pieces):
    found, current = {}, None
    marks = {mark(n): n for n in range(pieces)}
    for line in stream.splitlines():
        if line in marks:
            current = marks[line]
            found[current] = []
        elif current is not None:
            found[current].append(line.rstrip())
    return found


def judge(statement, out, err):
    """What is wrong with a statement's output (or a before's, statement None), or None."""
    where = f"line {statement.line}" if statement else "before"
    if out is None or err is None:
        return f"{where}: psql stopped before it"
    errors = error_lines(err)
    if statement is None or statement.shown is None:
        return f"{where}: " + "\n".join(errors) if errors else None
    actual = err + out
    while actual and not actual[-1]:  # the blank line psql prints after a table
        actual.pop()
    if matches(statement.shown, actual):
        return None
    diff = difflib.unified_diff(statement.shown, actual, "shown", "psql printed", lineterm="", n=2)
    return f"{where}:\n" + "\n".join(list(diff)[2:])


def error_lines(err):
    """The lines of err that belong to an error: a message of severity ERROR, FATAL or
    PANIC, or a line of psql's own (such as `no rows returned for \\gset`)."""
    errors, in_error = [], False
    for line in err:
        severity = SEVERITY_RE.match(line)
        if severity:
            in_error = severity.group(1) in ("ERROR", "FATAL", "PANIC")
        elif line and not CONTINUATION_RE.match(line):
            in_error = True
        if in_error and line:
            errors.append(line)
    return errors
