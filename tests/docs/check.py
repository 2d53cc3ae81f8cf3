"""The doc test's checker: runs every ```sql block of the pages given on the servers given
(blocks.py), checks the README's function and settings tables against the catalogs
(tables.py), prints `ok`, `skip (reason)` or `FAIL` with what differs for each, and a
count line; exits 1 on any FAIL.

Python (standard library only) rather than bash: cutting SQL into statements around
quotes, dollar quotes and comments, matching output with `…` in it, and reading
Markdown tables are parsers, which bash would make long and fragile. tests/docs.sh starts
the servers and calls this.

Usage: check.py --psql PSQL --server stock=SOCKET_DIR:PORT --server preload=SOCKET_DIR:PORT PAGE..."""

import argparse
import sys

from blocks import run_page
from markdown import PageError, sql_blocks, tables
from server import Server
from tables import CHECKS, Catalog, INTERNAL


class Report:
    """The ok, skip and FAIL lines, counted; under a FAIL, what failed, indented."""

    def __init__(self):
        self.counts = {"ok": 0, "skip": 0, "FAIL": 0}

    def __call__(self, status, where, subject="", details=()):
        self.counts[status] += 1
        print(f"{status} {where}" + (f" ({subject})" if status == "skip" else f" {subject}" if subject else ""))
        for line in "\n".join(details).split("\n") if details else []:
            print(f"    {line}")


def run_blocks(pages, servers, report):
    for path, lines in pages.items():
        try:
            blocks = sql_blocks(path, lines)
        except PageError as error:
            report("FAIL", path, details=[str(error)])
            continue
        for result in run_page(path, blocks, servers):
            report(result.status, f"{path}:{result.line}", result.subject, result.details)


def check_tables(pages, servers, report):
    """The tables of CHECKS, found by their headers, against the catalogs: the stock
    server's (a database of its own with the extension) and the preloading one's."""
    stock = servers["stock"]
    try:
        stock.query(stock.database("doc_catalog"), "CREATE EXTENSION snowflake_pg")
        catalog = Catalog(stock, "doc_catalog", servers["preload"])
    except RuntimeError as error:
        report("FAIL", "(catalogs)", "the catalogs could not be read", [str(error)])
        return
    for name, why in INTERNAL.items():
        print(f"-- not in the function table, by design: {name}, {why}")
    found = set()
    for path, lines in pages.items():
        for header_line, header, rows in tables(lines):
            check = CHECKS.get(tuple(header))
            found.add(tuple(header))
            for status, line, subject, problems in check(header_line, rows, catalog) if check else []:
                report(status, f"{path}:{line}", subject, problems)
    for header in set(CHECKS) - found:
        report("FAIL", "(no page)", f"no table with the header | {' | '.join(header)} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--psql", required=True)
    parser.add_argument("--server", action="append", required=True, help="NAME=SOCKET_DIR:PORT")
    parser.add_argument("pages", nargs="+")
    args = parser.parse_args()
    servers = {}
    for given in args.server:
        name, _, place = given.partition("=")
        host, _, port = place.rpartition(":")
        servers[name] = Server(name, host, int(port), args.psql)
    pages = {}
    for path in args.pages:
        with open(path, encoding="utf-8") as page:
            pages[path] = page.read().split("\n")

    report = Report()
    run_blocks(pages, servers, report)
    check_tables(pages, servers, report)
    counts = report.counts
    print(f"docs: {counts['ok']} ok, {counts['skip']} skipped, {counts['FAIL']} failed")
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
