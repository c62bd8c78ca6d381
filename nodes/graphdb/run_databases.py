"""`RunDatabases`: which database a run queries, shared by the knowledge-graph agent and the flows.

An agent or flow has a database of its own (given as an object, named by connection arguments,
or the environment's default), and a run's context may name another (`database_url`, `graph`)
if the operator allows it. Each database is opened once, on first use, so a database that is
down is a typed stop of the run that needs it, never a crash when the agent is built.
"""

from __future__ import annotations

from typing import Any

from reflexion_agents.nodes.graphdb.connect import open_database, opened
from reflexion_agents.nodes.graphdb.locations import (
    backend_of,
    default_connection_args,
    run_database_args,
    with_url_read,
)
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.keyed_cache import KeyedCache

OWN = "own"  # the key of the owner's database in its cache of one


class RunDatabases:
    """The owner's own database and those its runs name, each opened once."""

    def __init__(self, connection_args: dict[str, Any] | None = None, database: GraphDatabase | None = None) -> None:
        self.connection_args = with_url_read(connection_args)  # a FalkorDB `url` read as what it names
        self.given = database  # a database object the caller owns (never closed here)
        self._own = KeyedCache(size=1)  # the owner's own database, opened on first use: never evicted
        self._opened = KeyedCache()  # those runs name, by connection arguments

    def args_for(self, run: Any) -> dict[str, Any] | None:
        """The connection arguments of the database `run` (a run context) names; None: the owner's own."""
        return run_database_args(run, self.connection_args, given_object=self.given is not None, own_db=self.given)

    def for_run(self, run: Any) -> GraphDatabase:
        """The database `run` queries, opened on first use."""
        args = self.args_for(run)
        if args is None and self.given is not None:
            return self.given
        if args is None:  # the owner's own: one key, so no run reads the environment again to find it
            return self._own.get(OWN, self._open_own)
        return self._opened.get(repr(sorted(args.items())), lambda: opened(lambda: open_database(args), args))

    def opened_for(self, run: Any) -> GraphDatabase | None:
        """The database `run` queries if it is open already, else None: nothing is opened."""
        args = self.args_for(run)
        found: GraphDatabase | None
        if args is None:
            found = self.given if self.given is not None else self._own.peek(OWN)
        else:
            found = self._opened.peek(repr(sorted(args.items())))
        return found

    def _open_own(self) -> GraphDatabase:
        own = self.connection_args or default_connection_args()
        return opened(lambda: open_database(own), own)

    def dialect_for(self, run: Any) -> str:
        """The dialect of the database `run` queries, known without connecting."""
        args = self.args_for(run)
        if args is None and self.given is not None:
            return self.given.dialect
        return backend_of(args or self.connection_args or default_connection_args())

    def close(self) -> None:
        """Close the databases opened here (a given database stays open: its owner closes it)."""
        for cache in (self._own, self._opened):
            for db in cache.values():
                db.close()
            cache.clear()
