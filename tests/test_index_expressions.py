"""A filter on a chained property access (`f.d.year`) answers the same with a range index on `f.d` as
without: FalkorDB would search the index for the outer key and drop the filter (nodes/graphdb/
index_expressions.py). Unit cases for the rewrite, then queries on a server of this module's own,
each compared with the same query on an identical graph without indexes."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

from reflexion_agents.nodes.graphdb import FalkorDBGraph, load_cypher_script
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.nodes.graphdb.index_expressions import guard_index_expressions
from reflexion_agents.schemas.errors import QueryError


@pytest.mark.parametrize(
    ("query", "sent"),
    [
        (
            "MATCH (f:F) WHERE f.d.year = 2016 RETURN count(*)",
            "MATCH (f:F) WHERE coalesce(f.d.year) = 2016 RETURN count(*)",
        ),
        (
            "MATCH (f:F) WHERE 3 >= f . d . month AND f.i IN [1] RETURN f",
            "MATCH (f:F) WHERE 3 >= coalesce(f . d . month) AND f.i IN [1] RETURN f",
        ),
        (  # brackets do not hide the access from the planner
            "MATCH (f:F) WHERE (f.d).year = 1 OR (f).d.day < 2 OR ((f.d)).month IN [3] OR NOT (f.d.year <> 4) RETURN f",
            "MATCH (f:F) WHERE coalesce((f.d).year) = 1 OR coalesce((f).d.day) < 2 OR coalesce(((f.d)).month) IN [3] "
            "OR NOT (coalesce(f.d.year) <> 4) RETURN f",
        ),
        (  # backtick names, comments inside the access
            "MATCH (`my f`:F) WHERE `my f`.`d`.`year` = 1 AND `my f`.d./* c */day = 2 RETURN 1",
            "MATCH (`my f`:F) WHERE coalesce(`my f`.`d`.`year`) = 1 AND coalesce(`my f`.d./* c */day) = 2 RETURN 1",
        ),
        (  # every WHERE: after WITH, OPTIONAL MATCH, in a subquery, a quantifier, a relationship's
            "MATCH (g) OPTIONAL MATCH (g)-[r:R]->(f) WHERE r.d.year = 1 WITH f WHERE f.t.hour > 2 "
            "CALL { MATCH (h:F) WHERE any(x IN h.l WHERE h.p.latitude > x) RETURN h } RETURN f, h",
            "MATCH (g) OPTIONAL MATCH (g)-[r:R]->(f) WHERE coalesce(r.d.year) = 1 WITH f WHERE coalesce(f.t.hour) > 2 "
            "CALL { MATCH (h:F) WHERE any(x IN h.l WHERE coalesce(h.p.latitude) > x) RETURN h } RETURN f, h",
        ),
        (  # the WHERE ends at its clause: projections, ORDER BY and SET keep their text
            "MATCH (f:F) WHERE f.s STARTS WITH 'a' WITH f, f.d.year AS y WHERE f.d.day = 1 "
            "SET f.y = f.d.year RETURN f.d.year ORDER BY f.d.month",
            "MATCH (f:F) WHERE f.s STARTS WITH 'a' WITH f, f.d.year AS y WHERE coalesce(f.d.day) = 1 "
            "SET f.y = f.d.year RETURN f.d.year ORDER BY f.d.month",
        ),
        (
            "MATCH (order:Order) WHERE order.date.year = 2016 RETURN order",
            "MATCH (order:Order) WHERE coalesce(order.date.year) = 2016 RETURN order",
        ),
        (
            "MATCH (f:F) WHERE toLower(f.s.x) = 'a' AND exists(f.d.year) RETURN f",
            "MATCH (f:F) WHERE toLower(coalesce(f.s.x)) = 'a' AND exists(coalesce(f.d.year)) RETURN f",
        ),
        ("MATCH (f:F) WHERE f.name = 'x' AND f.d >= date('2016-01-01') RETURN f.d.year", None),  # one key: indexed
        ("MATCH (f:F) WHERE f.name = 'f.d.year' // WHERE f.d.year = 1\nRETURN 1", None),  # text, not code
        ('MATCH (f:F) WHERE f.s = "a WHERE f.d.year = 1" /* f.d.year */ RETURN 1', None),
        ("MATCH (f:F) WHERE f.`d.year` = 1 AND f.l[0].x.y = 2 RETURN 1", None),  # one key; a list element
        ("MATCH (f:F) WHERE date.truncate('month', f.d) = x AND apoc.coll.sum(f.l) > 1 RETURN 1", None),  # functions
        ("MATCH (f:F) WHERE $p.a.b = f.i AND f.x < .5 AND 1.5e3 > f.y AND f.l[1..2] = [] RETURN 1", None),
        ("MATCH (f:F {i: g.d.year}) RETURN f.d.year AS y ORDER BY f.d.year", None),  # no WHERE
        ("MATCH (f:F) RETURN [x IN [f] WHERE x.d.year = 1 | x.d.year] AS ys", None),  # a comprehension: no index
        ("RETURN 1", None),
    ],
)
def test_chained_accesses_in_where_are_wrapped_and_nothing_else(query: str, sent: str | None) -> None:
    assert guard_index_expressions(query) == (sent or query)


def _lines_run(query: str) -> int:
    """Python lines executed to guard `query`: a measure of the work that does not depend on the
    machine's speed."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        guard_index_expressions(query)
    finally:
        sys.settrace(None)
    return count


def test_the_guard_does_work_in_proportion_to_the_query() -> None:
    def query(n: int) -> str:  # long accesses, bracket runs and WHEREs: what a naive scan repeats
        parts = ["n" + ".a" * 20, "(" * 12 + "n.a" + ")" * 12 + ".b", "x IN ((((n.a)))).b", "any(y IN n.l WHERE y.a.b)"]
        return "MATCH (n) WHERE " + " AND ".join(parts[i % 4] for i in range(n)) + " RETURN n"

    assert 4_000 < len(query(120)) < len(query(480)) < 20_000  # past code_depths' cache; under the query cap
    small, large = _lines_run(query(120)), _lines_run(query(480))
    assert large < 5 * small  # four times the text, about four times the work (quadratic: sixteen)


# -- on a FalkorDB server ------------------------------------------------------

DATA = """
UNWIND range(0, 39) AS i
CREATE (:F {i: i, s: 'name' + toString(i),
  d: date({year: 2014 + i % 4, month: 1 + i % 12, day: 1 + i % 28}),
  ldt: localdatetime({year: 2014 + i % 4, month: 1 + i % 12, day: 1 + i % 28, hour: i % 24, minute: i % 60}),
  t: localtime({hour: i % 24, minute: i % 60, second: 7}),
  du: duration({years: i % 3, months: i % 12, days: i % 28, hours: i % 24}),
  p: point({latitude: toFloat(i), longitude: toFloat(-i)})});
UNWIND range(0, 2) AS j CREATE (:G {j: j, y: 2015 + j, dd: date({year: 2015 + j, month: 3, day: 5})});
MATCH (g:G), (f:F) WHERE f.i % 3 = g.j CREATE (g)-[:R {d: f.d}]->(f);
"""
# The import script's own indexes, as a loaded dump would bring them.
INDEXES = """
CREATE INDEX FOR (f:F) ON (f.d, f.ldt, f.t, f.du, f.p, f.i, f.s);
CREATE INDEX FOR (g:G) ON (g.dd);
CREATE INDEX FOR ()-[r:R]-() ON (r.d);
"""


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FalkorDBGraph, FalkorDBGraph]]:
    """(the graph without indexes, the same graph with range indexes) on a server of this module's own."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("REFLEXION_QUERY_MEMORY_MB", "256")
        server = EmbeddedFalkorDB.start(tmp_path_factory.mktemp("index-expressions"))
    try:
        plain = FalkorDBGraph("plain", host=server.host, port=server.port, server=server)
        indexed = plain.sibling("indexed")
        load_cypher_script(plain, DATA)
        load_cypher_script(indexed, INDEXES + DATA)
        yield plain, indexed
    finally:
        server.stop()


# Forms the indexed graph answered wrong before the guard (all of them 0 rows or none).
WRONG_BEFORE = [
    *(f"MATCH (f:F) WHERE f.d.year {op} 2016 RETURN count(*)" for op in ("=", "<", ">", "<=", ">=")),
    "MATCH (f:F) WHERE 2016 < f.d.year RETURN count(*)",
    "MATCH (f:F) WHERE f.d.year IN [2015, 2016] RETURN count(*)",
    "MATCH (f:F) WHERE f.d.month = 3 AND f.d.day > 4 RETURN count(*)",
    "MATCH (f:F) WHERE f.d.quarter = 1 OR f.d.week = 10 OR f.d.dayOfWeek = 3 RETURN count(*)",
    "MATCH (f:F) WHERE f.d.year = 2016 AND f.i > 3 RETURN count(*)",
    "MATCH (f:F) WHERE f.d >= date('2015-03-01') AND f.d.month = 3 RETURN count(*)",
    "MATCH (f:F) WHERE NOT (f.d.year <> 2016) RETURN count(*)",
    "MATCH (f:F) WHERE (f.d).year = 2016 RETURN count(*)",
    "MATCH (f:F) WHERE (f.d.year) = 2016 RETURN count(*)",
    "MATCH (f:F) WHERE f.`d`.`year` = 2016 RETURN count(*)",
    "MATCH (f:F) WITH f WHERE f.d.year = 2016 RETURN count(*)",
    "CALL { MATCH (f:F) WHERE f.d.year = 2016 RETURN count(*) AS c } RETURN c",
    "UNWIND [2016] AS y MATCH (f:F) WHERE y = f.d.year RETURN count(*)",
    "MATCH (g:G) OPTIONAL MATCH (f:F) WHERE f.d.year = 2016 RETURN count(f)",
    "MATCH (g:G {j: 0}) OPTIONAL MATCH (f:F) WHERE f.d.year = g.y RETURN count(f)",
    "MATCH (f:F) WHERE f.d.year = 2016 RETURN f.i ORDER BY f.d.month, f.i LIMIT 3",
    "MATCH (f:F) WHERE f.ldt.year = 2016 AND f.ldt.hour >= 5 AND f.ldt.minute < 30 RETURN count(*)",
    "MATCH (f:F) WHERE f.t.hour = 5 OR f.t.second = 7 RETURN count(*)",
    "MATCH (f:F) WHERE f.du.years = 1 AND f.du.months <= 3 RETURN count(*)",
    "MATCH (f:F) WHERE f.du.days = 5 OR f.du.hours > 20 RETURN count(*)",
    "MATCH (f:F) WHERE f.p.latitude > 5.0 AND f.p.longitude >= -30.0 RETURN count(*)",
    "MATCH (g:G) WHERE g.dd.year = 2016 RETURN count(*)",
    "MATCH (g:G)-[r:R]->(f:F) WHERE g.dd.year = 2016 RETURN count(*)",
    "MATCH ()-[r:R]->() WHERE r.d.year = 2016 RETURN count(*)",
    "MATCH ()-[r:R]->() WHERE r.d.month < 3 RETURN count(*)",
]


@pytest.mark.integration
@pytest.mark.parametrize("query", WRONG_BEFORE)
def test_an_index_does_not_change_the_answer(graphs: tuple[FalkorDBGraph, FalkorDBGraph], query: str) -> None:
    plain, indexed = graphs
    expected = plain.query(query).rows
    assert expected not in ([], [[0]])  # a test that could not tell a wrong answer from a right one
    assert indexed.query(query).rows == expected


@pytest.mark.integration
@pytest.mark.parametrize(
    "query",
    [
        "MATCH (f:F) WHERE f.i.i = 5 RETURN count(*)",  # the index would answer as for f.i = 5
        "MATCH (f:F) WHERE f.s.foo = 'name3' RETURN count(*)",
        "MATCH (f:F) WHERE f.d.year.x = 2016 RETURN count(*)",
    ],
)
def test_an_access_the_value_does_not_have_fails_as_it_does_without_the_index(
    graphs: tuple[FalkorDBGraph, FalkorDBGraph], query: str
) -> None:
    plain, indexed = graphs
    with pytest.raises(QueryError, match="Type mismatch") as without:
        plain.query(query)
    with pytest.raises(QueryError, match="Type mismatch") as indexed_error:
        indexed.query(query)
    assert str(indexed_error.value) == str(without.value)


def _plan(db: FalkorDBGraph, query: str) -> str:
    return str(db._session.graph.explain(guard_index_expressions(query)))


@pytest.mark.integration
def test_the_guarded_filter_is_not_an_index_scan_and_ordinary_lookups_still_are(
    graphs: tuple[FalkorDBGraph, FalkorDBGraph],
) -> None:
    _, indexed = graphs
    assert "Index Scan" not in _plan(indexed, "MATCH (f:F) WHERE f.d.year = 2016 RETURN f")
    assert "Index Scan" not in _plan(indexed, "MATCH ()-[r:R]->() WHERE r.d.year = 2016 RETURN r")
    for lookup in (
        "MATCH (f:F) WHERE f.s = 'name5' RETURN f",
        "MATCH (f:F {i: 5}) RETURN f",
        "MATCH (f:F) WHERE f.d >= date('2016-01-01') AND f.d < date('2017-01-01') RETURN f",
        "MATCH (f:F) WHERE f.i = 2 AND f.d.year = 2016 RETURN f",  # the other predicate keeps its index
    ):
        assert "Node By Index Scan" in _plan(indexed, lookup), lookup
    assert indexed.query("MATCH (f:F) WHERE f.i = 2 AND f.d.year = 2016 RETURN f.i AS i").rows == [[2]]


@pytest.mark.integration
def test_columns_keep_the_names_they_were_written_with(graphs: tuple[FalkorDBGraph, FalkorDBGraph]) -> None:
    _, indexed = graphs
    result = indexed.query("MATCH (f:F) WHERE f.d.year = 2016 RETURN f.d.year, count(*) AS n")
    assert result.columns == ["f.d.year", "n"]
    assert result.rows == [[2016, 10]]
    assert result.query == "MATCH (f:F) WHERE f.d.year = 2016 RETURN f.d.year, count(*) AS n"


@pytest.mark.integration
def test_writes_are_guarded_too(graphs: tuple[FalkorDBGraph, FalkorDBGraph]) -> None:
    _, indexed = graphs
    scratch = indexed.sibling("indexed-writes")
    try:
        load_cypher_script(scratch, INDEXES + DATA + "MATCH (f:F) WHERE f.d.year = 2016 SET f.tagged = true;")
        assert scratch.query("MATCH (f:F {tagged: true}) RETURN count(*)").rows == [[10]]
    finally:
        scratch.clear()


@pytest.mark.integration
def test_the_server_still_needs_the_guard(graphs: tuple[FalkorDBGraph, FalkorDBGraph]) -> None:
    """The bug as the server shows it without the guard. Should a FalkorDB release answer right,
    this fails: the guard (and this test) can then go."""
    _, indexed = graphs
    raw = indexed._session.graph.ro_query("MATCH (f:F) WHERE f.d.year = 2016 RETURN count(*)").result_set
    assert raw == [[0]], "FalkorDB now answers chained accesses right with an index: drop the guard"
