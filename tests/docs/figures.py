"""The doc test's figures, which need no server: every figure of a block that a page
marks as quoted from benchmark reports is in one of those reports, as written or rounded.
Prints a FAIL line naming file:line for each figure found in none, and a count line;
exits 1 on any FAIL.

The mark is an HTML comment naming the reports, paths of the tree (bench/results/...),
on the line just before the block it covers, a table or a paragraph, up to the first
blank line. A table's column may have reports of its own ("column N:", N counted from 1,
groups separated by ";"), which its cells' figures are checked against; the other
figures are checked against the reports named without a column (all of them, if none):

    <!-- figures: column 2: bench/results/sql-edition-pg15.txt; column 3: bench/results/sql-edition-pg18.txt -->
    | call | PostgreSQL 15 | PostgreSQL 18 |
    ...

The finer the reports a figure is checked against, and the more of its digits a page
quotes, the surer the check: a figure of two decimals may be found by chance in a long
report.

A figure is a number with a decimal point (1.66, 0.81) or with thousands separators
(33,647); counts, majors and other whole numbers are not checked, nor what a block holds
in code spans or link targets, dates (2026-11-26), times (13:48) and versions (0.3.0). A
figure is found when a number of a report equals it, or rounds to it at its decimal places
(either way of rounding a half); thousands separators are read as nothing (33,647 is
33647).

Usage: figures.py PAGE...   (from anywhere; report paths are read from the tree this file is in)"""

import os
import re
import sys
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARK_RE = re.compile(r"^\s*<!--\s*figures:\s*(.+?)\s*-->\s*$")
# What a block holds that is no figure: code spans, link targets, dates, times, versions.
NOT_FIGURES_RE = re.compile(r"(`+).+?\1|\]\([^)]*\)|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}(:\d{2})?|\d+(\.\d+){2,}")
NUMBER_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)(?![\d.,]*\d)")
REPORT_NUMBER_RE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")


def decimal(text):
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


def report_numbers(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as report:
        numbers = (decimal(match.group(0)) for match in REPORT_NUMBER_RE.finditer(report.read()))
        return {number for number in numbers if number is not None}


def found(figure, numbers):
    """Whether the figure (a quoted number) is one of the numbers, or one rounded to it."""
    value = decimal(figure)
    places = Decimal(1).scaleb(value.as_tuple().exponent)
    if value in numbers:
        return True
    return any(number.quantize(places, rounding=mode) == value
               for number in numbers if number.as_tuple().exponent < value.as_tuple().exponent
               for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN))


def blocks(lines):
    """(line of the mark, {column or None: [report paths]}, [(line, text)] of the block) of
    each mark."""
    for index, line in enumerate(lines):
        mark = MARK_RE.match(line)
        if not mark:
            continue
        groups = {}
        for group in mark.group(1).split(";"):
            column = re.match(r"^\s*column\s+(\d+)\s*:(.*)$", group)
            key, paths = (int(column.group(1)), column.group(2)) if column else (None, group)
            groups.setdefault(key, []).extend(paths.split())
        block = []
        for number in range(index + 1, len(lines)):
            if not lines[number].strip():
                break
            block.append((number + 1, lines[number]))
        yield index + 1, groups, block


def pieces(text):
    """(column or None, text) of a line: a table row's cells, numbered from 1, else the line."""
    if not text.lstrip().startswith("|"):
        return [(None, text)]
    cells = re.split(r"(?<!\\)\|", text.strip().strip("|"))
    return list(enumerate(cells, 1))


def main():
    fails, checked, marks = [], 0, 0
    for page in sys.argv[1:]:
        with open(page, encoding="utf-8") as text:
            lines = text.read().split("\n")
        name = os.path.relpath(os.path.abspath(page), ROOT)
        for mark_line, groups, block in blocks(lines):
            marks += 1
            reports = [report for paths in groups.values() for report in paths]
            missing = [report for report in reports if not os.path.isfile(os.path.join(ROOT, report))]
            if missing or not reports:
                fails.append(f"{name}:{mark_line}: the figures' reports {missing or '(none named)'} are not in the tree")
                continue
            if not block:
                fails.append(f"{name}:{mark_line}: a figures mark with no block after it")
                continue
            numbers = {key: set().union(*(report_numbers(report) for report in paths)) for key, paths in groups.items()}
            if None not in groups:
                groups[None], numbers[None] = reports, set().union(*numbers.values())
            for number, text in block:
                for column, piece in pieces(text):
                    key = column if column in groups else None
                    for figure in NUMBER_RE.findall(NOT_FIGURES_RE.sub(" ", piece)):
                        checked += 1
                        if not found(figure, numbers[key]):
                            where = f" (column {column})" if key is not None else ""
                            fails.append(f"{name}:{number}: {figure}{where} is in none of {', '.join(groups[key])}, "
                                         "as written or rounded")
    for fail in fails:
        print(f"FAIL {fail}")
    print(f"figures: {marks} blocks of {len(sys.argv) - 1} pages marked as quoting benchmark reports, "
          f"{checked} figures checked, {len(fails)} wrong")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
