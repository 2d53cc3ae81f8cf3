"""A running server of the doc test, reached through psql on its socket as postgres."""

import json
import subprocess

TIMEOUT_S = 300


class Server:
    def __init__(self, name, host, port, psql):
        self.name, self.host, self.port, self.psql = name, host, port, psql
        self.databases = set()

    def psql_args(self, database):
        # footer off: the docs show a table without its "(N rows)" line.
        return [self.psql, "-X", "-q", "-P", "footer=off", "-h", self.host, "-p", str(self.port),
                "-U", "postgres", "-d", database]

    def session(self, database, script):
        """Runs script in one psql session, going on after errors, as a user pasting it
        would; returns (stdout, stderr)."""
        done = subprocess.run(self.psql_args(database) + ["-v", "ON_ERROR_STOP=0"], input=script,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        return done.stdout, done.stderr

    def query(self, database, sql, first=None):
        """The one value sql returns, after statement first if given; fails on any error."""
        before = ["-c", first] if first else []
        done = subprocess.run(self.psql_args(database) + ["-v", "ON_ERROR_STOP=1", "-At"] + before + ["-c", sql],
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(f"{self.name} server, database {database}: {done.stderr.strip()}")
        return done.stdout.rstrip("\n")

    def query_json(self, database, sql, first=None):
        """The rows of sql as a list of dicts, through json_agg."""
        return json.loads(self.query(database, f"SELECT coalesce(json_agg(q), '[]') FROM ({sql}) q", first))

    def database(self, name):
        """Database name, created empty the first time it is asked for."""
        if name not in self.databases:
            self.query("postgres", f'CREATE DATABASE "{name}"')
            self.databases.add(name)
        return name
