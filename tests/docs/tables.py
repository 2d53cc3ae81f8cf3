"""The README's reference tables against the catalogs of the installed extension.

The function table (header `function | returns | labels | notes`): every function of the
extension a user calls has one row, and no row names a function that does not exist. A
row's signature names the function and its arguments: `name type`, a name or a type
alone, `DEFAULT value` and `OUT name` as PostgreSQL prints them; its `returns` cell
starts with the result type (`setof` for a set), and may list the result's columns after
it: `snowflake_parts` (`ts, node_id, ...`); its labels are the volatility, `strict` and
`parallel safe` (or `parallel restricted`) of pg_proc. A row `view NAME` is a view of the
extension.

The settings table (header `setting | default | meaning | who may change it`): every
snowflake.* setting of a preloading server has one row; its default is pg_settings'
boot_val (`empty` for ''); who may change it starts with what its context means
(superuser: superuser, configuration file and reload: sighup, server restart:
postmaster); and the settings that a stock server has read-only (context internal) after
LOAD are the ones said to need shared_preload_libraries."""

import re

# Functions of the extension that no user calls, so the table leaves them out.
INTERNAL = {
    "snowflake_claim_node": "the claims helper that snowflake_next() calls as the extension's owner "
                            "(revoked from PUBLIC)",
    "snowflake_server_status": "the function behind the view snowflake_status",
}
VOLATILITY = {"v": "volatile", "s": "stable", "i": "immutable"}
PARALLEL = {"s": "parallel safe", "r": "parallel restricted", "u": None}
# The words "who may change it" starts with, by the context pg_settings shows.
CONTEXT = {"superuser": "superuser", "configuration file and reload": "sighup", "server restart": "postmaster"}
MEMBERS = """JOIN pg_depend d ON d.objid = {alias}.oid AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake_pg')"""
FUNCTIONS_SQL = """
SELECT p.oid::regprocedure::text AS signature, p.proname AS name,
       coalesce(p.proargnames, '{}') AS arg_names, coalesce(p.proargmodes::text[], '{}') AS arg_modes,
       ARRAY(SELECT format_type(t, NULL) FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]))
             WITH ORDINALITY u(t, n) ORDER BY n) AS arg_types,
       pg_get_function_arguments(p.oid) AS arguments, p.provolatile AS volatility,
       p.proisstrict AS strict, p.proparallel AS parallel, p.proretset AS returns_set,
       format_type(p.prorettype, NULL) AS result,
       ARRAY(SELECT a.attname FROM pg_attribute a JOIN pg_type t ON a.attrelid = t.typrelid
             WHERE t.oid = p.prorettype AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum)
         AS result_columns
  FROM pg_proc p """ + MEMBERS.format(alias="p") + " AND d.classid = 'pg_proc'::regclass"
VIEWS_SQL = "SELECT c.relname FROM pg_class c " + MEMBERS.format(alias="c") + \
    " AND d.classid = 'pg_class'::regclass WHERE c.relkind = 'v'"
SETTINGS_SQL = "SELECT name, boot_val, context FROM pg_settings WHERE name LIKE 'snowflake.%'"


def backticked(cell):
    return re.findall(r"`([^`]*)`", cell)


def split_top(text):
    """text split at the commas outside quotes and parentheses."""
    parts, depth, quoted, current = [], 0, False, ""
    for char in text:
        if char == "'":
            quoted = not quoted
        elif not quoted and char in "()":
            depth += 1 if char == "(" else -1
        elif not quoted and depth == 0 and char == ",":
            parts.append(current.strip())
            current = ""
            continue
        current += char
    return parts + [current.strip()] if current.strip() else parts


def parse_argument(text):
    """(mode, words, default) of an argument as a signature shows it."""
    match = re.match(r"^(?:(IN|OUT|INOUT|VARIADIC)\s+)?(.*?)(?:\s+DEFAULT\s+(.*))?$", text.strip())
    return (match.group(1) or "IN"), match.group(2).split(), match.group(3)


def without_casts(value):
    return re.sub(r"::[a-z_ ]+$", "", value) if value is not None else None


class Catalog:
    """The functions, views and settings of the extension, read from the servers."""

    def __init__(self, stock, database, preload):
        self.stock, self.database = stock, database
        self.functions = stock.query_json(database, FUNCTIONS_SQL)
        self.views = {row["relname"] for row in stock.query_json(database, VIEWS_SQL)}
        self.settings = {row["name"]: row for row in preload.query_json("postgres", SETTINGS_SQL)}
        self.stock_settings = {row["name"]: row for row in
                               stock.query_json("postgres", SETTINGS_SQL, "LOAD 'snowflake_pg'")}
        self.types = {}

    def type_name(self, text):
        """The name PostgreSQL prints for type text (timestamptz: timestamp with time zone)."""
        if text not in self.types:
            literal = text.replace("'", "''")
            self.types[text] = self.stock.query(self.database, f"SELECT format_type(to_regtype('{literal}'), NULL)")
        return self.types[text]


def arguments(function):
    """The arguments of a catalog function: (mode, name, type, default), TABLE columns left out."""
    modes = function["arg_modes"] or ["i"] * len(function["arg_types"])
    names = function["arg_names"] or [""] * len(function["arg_types"])
    mode_names = {"i": "IN", "o": "OUT", "b": "INOUT", "v": "VARIADIC"}
    shown = [parse_argument(text) for text in split_top(function["arguments"])]
    found = [(mode_names[mode], name, kind) for mode, name, kind in zip(modes, names, function["arg_types"])
             if mode != "t"]
    return [(mode, name, kind, without_casts(default))
            for (mode, name, kind), (_, _, default) in zip(found, shown)]


def argument_problem(catalog, shown, actual):
    """What is wrong with an argument as the table shows it, against pg_proc's, or None."""
    (_, words, shown_default), (mode, name, kind, default) = shown, actual
    if not words:
        return f"an argument without a name or type: pg_proc has {mode} {name} {kind}"
    if len(words) == 1 and words[0] != name and catalog.type_name(words[0]) != kind:
        return f"{words[0]}: neither the name nor the type of {name} {kind}"
    if len(words) > 1 and (words[0] != name or catalog.type_name(" ".join(words[1:])) != kind):
        return f"{' '.join(words)}: pg_proc has {name} {kind}"
    if without_casts(shown_default) != default:
        return f"{name}: DEFAULT {shown_default}, pg_proc has {default}"
    return None


def function_row_problems(catalog, function, signature, cells):
    """What is wrong with a row of the function table, against pg_proc: its arguments,
    result and labels."""
    problems = []
    inner = signature[signature.index("(") + 1:signature.rindex(")")]
    shown = [parse_argument(text) for text in split_top(inner)]
    actual = arguments(function)
    for mode in ("IN", "OUT"):
        pairs = ([s for s in shown if s[0] == mode], [a for a in actual if a[0] == mode])
        if mode == "OUT" and not pairs[0]:
            continue  # the OUT arguments may go unnamed here: the returns cell says them
        if len(pairs[0]) != len(pairs[1]):
            problems.append(f"{len(pairs[0])} {mode} arguments, pg_proc has {len(pairs[1])}")
            continue
        problems += filter(None, (argument_problem(catalog, s, a) for s, a in zip(*pairs)))
    result = ("setof " if function["returns_set"] else "") + function["result"]
    returns = re.match(r"^`([^`]+)`(?:\s*\(`([^`]+)`\))?", cells[1])
    if not returns or returns.group(1) != result:
        problems.append(f"returns {cells[1]!r}, pg_proc says {result}")
    elif returns.group(2):
        columns = function["result_columns"] or [a[1] for a in actual if a[0] in ("OUT", "INOUT")] or \
            [n for n, m in zip(function["arg_names"], function["arg_modes"]) if m == "t"]
        if [c.strip() for c in returns.group(2).split(",")] != columns:
            problems.append(f"result columns {returns.group(2)}, pg_proc has {', '.join(columns)}")
    labels = {label.strip() for label in cells[2].split(",") if label.strip()}
    wanted = {VOLATILITY[function["volatility"]], PARALLEL[function["parallel"]]} - {None}
    wanted |= {"strict"} if function["strict"] else set()
    if labels != wanted:
        problems.append(f"labels {', '.join(sorted(labels))}; pg_proc says {', '.join(sorted(wanted))}")
    return problems


def row(line, subject, problems):
    return ("FAIL" if problems else "ok", line, subject, problems)


def check_functions(header_line, rows, catalog):
    """(status, line, subject, problems) of each row, then of each function no row lists."""
    results, listed, views = [], {}, set()
    for line, cells in rows:
        if cells[0].startswith("view "):
            view = backticked(cells[0])[0]
            views.add(view)
            results.append(row(line, f"view {view}", [] if view in catalog.views else ["no such view of the extension"]))
            continue
        signature = backticked(cells[0])[0]
        name = signature.split("(")[0]
        inner = signature[signature.index("(") + 1:signature.rindex(")")]
        ins = sum(1 for argument in split_top(inner) if parse_argument(argument)[0] == "IN")
        candidates = [f for f in catalog.functions
                      if f["name"] == name and sum(1 for a in arguments(f) if a[0] == "IN") == ins]
        if len(candidates) != 1:
            results.append(row(line, signature, ["no function of the extension with these arguments"]))
        elif candidates[0]["signature"] in listed:
            results.append(row(line, signature, [f"listed already on line {listed[candidates[0]['signature']]}"]))
        else:
            listed[candidates[0]["signature"]] = line
            results.append(row(line, candidates[0]["signature"],
                               function_row_problems(catalog, candidates[0], signature, cells)))
    for function in catalog.functions:
        if function["signature"] not in listed and function["name"] not in INTERNAL:
            results.append(row(header_line, function["signature"], [
                "a function of the extension missing from this table (or, if no user calls it, "
                "one for INTERNAL in tests/docs/tables.py, with why)"]))
    for view in sorted(catalog.views - views):
        results.append(row(header_line, f"view {view}", ["a view of the extension missing from this table"]))
    return results


def check_settings(header_line, rows, catalog):
    """(status, line, subject, problems) of each row, then of each setting no row lists."""
    results, listed = [], set()
    for line, cells in rows:
        name = backticked(cells[0])[0]
        setting = catalog.settings.get(name)
        if setting is None:
            results.append(row(line, name, ["not in pg_settings of a preloading server"]))
            continue
        listed.add(name)
        problems = []
        default = "" if cells[1].startswith("empty") else (backticked(cells[1]) or [cells[1]])[0]
        if default != setting["boot_val"]:
            problems.append(f"default {cells[1]!r}, pg_settings' boot_val is {setting['boot_val']!r}")
        who = [context for words, context in CONTEXT.items() if cells[3].startswith(words)]
        if who != [setting["context"]]:
            problems.append(f"who may change it: {cells[3][:40]!r}..., pg_settings' context is {setting['context']}")
        needs_preload = "only with `shared_preload_libraries" in cells[3]
        stock_context = catalog.stock_settings.get(name, {}).get("context")
        if needs_preload != (stock_context == "internal"):
            problems.append("the table says it " + ("needs" if needs_preload else "does not need") +
                            f" preload, but on a stock server after LOAD its context is {stock_context}")
        results.append(row(line, name, problems))
    for name in sorted(set(catalog.settings) - listed):
        results.append(row(header_line, name, ["a setting missing from this table"]))
    return results


# The tables checked, by their headers.
CHECKS = {("function", "returns", "labels", "notes"): check_functions,
          ("setting", "default", "meaning", "who may change it"): check_settings}
