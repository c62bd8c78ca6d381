"""Neo4j import scripts load on FalkorDB with Neo4j's meaning (nodes/graphdb/row_functions.py,
java_dates.py): `point()` of a row missing its coordinates is null, APOC's date functions and
`datetime()` over a row's fields are computed for each row, one-digit days and empty fields read as
Neo4j reads them. The script below is written in the forms public import scripts use (a conference
schedule: `datetime({epochMillis: apoc.date.parse(...)})`, the key in lower case, `Date(Datetime(
{epochSeconds: ...}))` capitalised, the default pattern, a time of day alone)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reflexion_agents.nodes.graphdb import load_cypher_script
from reflexion_agents.nodes.graphdb.java_dates import format_date, parse_date, parse_pattern
from reflexion_agents.nodes.graphdb.row_functions import computed_in_rows, null_safe_points, with_computed
from reflexion_agents.schemas.errors import QueryError, ScriptError

SCHEDULE = """// venues, some without coordinates
CREATE CONSTRAINT FOR (v:Venue) REQUIRE v.name IS UNIQUE;
CREATE (:Conference {name: 'GraphSummit', opens: datetime('2019-03-07T08:00:00')});
LOAD CSV WITH HEADERS FROM 'https://example.org/data/venues.csv' AS row
MERGE (v:Venue {name: row.name})
SET v.location = point({latitude: toFloat(row.lat), longitude: toFloat(row.lng)});

// sessions: US dates with one-digit days, some empty
LOAD CSV WITH HEADERS FROM 'https://example.org/data/sessions.csv' AS row
MERGE (s:Session {title: row.title})
SET s.startsAt = datetime({ epochmillis: apoc.date.parse(row.start, 'ms', 'M/d/yyyy h:mm a') }),
    s.day = Date(Datetime({epochSeconds: apoc.date.parse(row.start, 's', 'M/d/yyyy h:mm a')})),
    s.doors = apoc.date.parse(row.doors, 'm', 'HH:mm'),
    s.added = apoc.date.parse(row.added),
    s.label = apoc.date.format(apoc.date.parse(row.start, 'ms', 'M/d/yyyy h:mm a'), 'ms', 'EEE d MMM yyyy'),
    s.speaker = apoc.text.capitalize(row.speaker)
WITH s, row
MATCH (v:Venue {name: row.venue})
MERGE (s)-[:HELD_AT]->(v);
"""
VENUES = "name,lat,lng\nHall A,52.52,13.405\nAnnex,,\n"
SESSIONS = (
    "title,start,doors,added,speaker,venue\n"
    "Keynote,3/7/2019 9:30 AM,09:00,2019-01-02 03:04:05,ada,Hall A\n"
    "Workshop,10/5/2019 2:05 PM,13:45,,grace,Annex\n"
    "Open space,,,,,Annex\n"
)


@pytest.mark.unit
def test_java_patterns_read_one_digit_days_and_write_as_java_does():
    pattern = parse_pattern("M/d/yyyy h:mm a")
    assert pattern is not None
    moment = parse_date("3/7/2019 9:30 PM", pattern)
    assert moment == datetime(2019, 3, 7, 21, 30, tzinfo=UTC)
    assert format_date(moment, parse_pattern("yyyy-MM-dd'T'HH:mm:ss.SSSX") or []) == "2019-03-07T21:30:00.000Z"
    assert format_date(moment, parse_pattern("EEE d MMM yy") or []) == "Thu 7 Mar 19"
    assert parse_date("09:30", parse_pattern("HH:mm") or []) == datetime(1970, 1, 1, 9, 30, tzinfo=UTC)
    assert parse_pattern("yyyy-ww") is None  # a week number: not read, never guessed
    with pytest.raises(ValueError, match="'2019/03/07' does not fit the pattern"):
        parse_date("2019/03/07", parse_pattern("yyyy-MM-dd") or [])


@pytest.mark.unit
def test_only_calls_over_the_rows_fields_are_computed():
    body, computed = computed_in_rows(
        "WITH row, trim(row.d) AS t SET n.a = apoc.date.parse(t), n.b = apoc.date.parse(row.d, 'ms', $fmt), "
        "n.c = datetime(t), n.d = x.datetime(row.d), n.e = 'apoc.date.parse(row.d)'",
        "row",
    )
    assert computed == [] and "apoc.date.parse(t)" in body and "datetime(t)" in body
    guarded = null_safe_points("RETURN point({x: row.x, y: row.y}) AS p, point.distance(a, b) AS d")
    assert guarded.count("point(") == 1 and "point.distance(a, b)" in guarded
    assert null_safe_points(guarded) == guarded  # a guarded point is left alone


@pytest.fixture
def scratch(movies_db):
    graph = movies_db.sibling("neo4j_import_meaning")
    yield graph
    graph.clear()


def test_a_neo4j_schedule_import_loads_unchanged_with_neo4js_values(scratch, tmp_path):
    (tmp_path / "venues.csv").write_text(VENUES)
    (tmp_path / "sessions.csv").write_text(SESSIONS)
    (tmp_path / "import.cypher").write_text(SCHEDULE)
    report = load_cypher_script(scratch, tmp_path / "import.cypher", csv_dir=tmp_path)
    assert report.csv_rows == 5

    venues = dict(scratch.query("MATCH (v:Venue) RETURN v.name, v.location").rows)
    assert venues["Annex"] is None  # no coordinates: null, as in Neo4j
    assert venues["Hall A"] == {"latitude": pytest.approx(52.52), "longitude": pytest.approx(13.405)}

    rows = scratch.query(
        "MATCH (s:Session)-[:HELD_AT]->(v:Venue) RETURN s.title, toString(s.startsAt), toString(s.day), "
        "s.doors, s.added, s.label, s.speaker, v.name ORDER BY s.title"
    ).rows
    added = int(datetime(2019, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp() * 1000)  # the default pattern, in ms
    assert rows == [
        ["Keynote", "2019-03-07T09:30:00", "2019-03-07", 540, added, "Thu 7 Mar 2019", "Ada", "Hall A"],
        ["Open space", None, None, None, None, None, None, "Annex"],
        ["Workshop", "2019-10-05T14:05:00", "2019-10-05", 825, None, "Sat 5 Oct 2019", "Grace", "Annex"],
    ]
    assert scratch.query(
        "MATCH (s:Session {title: 'Keynote'}) RETURN s.startsAt < localdatetime('2019-03-08T00:00:00')"
    ).rows == [[True]]
    assert not scratch.query("MATCH (s:Session) RETURN [k IN keys(s) WHERE k STARTS WITH '__']").rows[0][0]
    # a question in Neo4j's words reads them: datetime() without an offset is the same UTC instant
    after_opening = scratch.query(
        "MATCH (c:Conference), (s:Session) WHERE s.startsAt > c.opens AND s.startsAt < datetime('2019-06-01T00:00:00') "
        "RETURN s.title"
    )
    assert after_opening.rows == [["Keynote"]]


def test_a_date_not_in_its_pattern_is_the_datas_fault_naming_the_value(scratch, tmp_path):
    (tmp_path / "venues.csv").write_text(VENUES)
    (tmp_path / "sessions.csv").write_text(SESSIONS.replace("10/5/2019 2:05 PM", "5 Oct 2019"))
    (tmp_path / "import.cypher").write_text(SCHEDULE)
    with pytest.raises(ScriptError) as refused:
        load_cypher_script(scratch, tmp_path / "import.cypher", csv_dir=tmp_path)
    assert refused.value.fault == "data" and "'5 Oct 2019' does not fit the pattern 'M/d/yyyy h:mm a'" in str(
        refused.value
    )
    assert refused.value.statement == 4


@pytest.mark.unit
def test_computed_values_read_as_java_and_neo4j_read_them():
    assert parse_date("15/03/55", parse_pattern("dd/MM/yy") or []).year == 1955  # 80 years back, 20 ahead
    assert parse_date("15/03/05", parse_pattern("dd/MM/yy") or []).year == 2005
    assert parse_pattern("HH:mm:ss.S") is None  # S alone is milliseconds to Java: not guessed
    _, computed = computed_in_rows(
        "SET n.day = date(datetime(row.at)), n.name = apoc.text.replace(row.name, '(o)', '\\\\$$1'), "
        "n.first = apoc.text.capitalize(row.first)",
        "row",
    )
    row = with_computed({"at": "2019-03-07T23:00:00-05:00", "name": "Bob", "first": "ßen"}, computed)
    values = {key: row[key] for key in row if key.startswith("__")}
    assert {"year": 2019, "month": 3, "day": 7} in values.values()  # the date where the offset says, as Neo4j
    assert "B$ob" in values.values() and "ßen" in values.values()


@pytest.mark.unit
def test_a_value_a_guard_may_drop_is_null_instead_of_failing_the_statement():
    """Neo4j never evaluates a call for a row its WHERE drops: a value that cannot be computed after a
    WHERE (or in a CASE) is null, for the guard to decide; without a guard it fails the statement."""
    _, computed = computed_in_rows(
        "WITH row WHERE row.d <> 'N/A' SET n.t = apoc.date.parse(row.d, 'ms', 'MM/dd/yyyy')", "row"
    )
    assert with_computed({"d": "N/A"}, computed)[computed[0].key] is None
    _, unguarded = computed_in_rows("SET n.t = apoc.date.parse(row.d, 'ms', 'MM/dd/yyyy')", "row")
    with pytest.raises(QueryError, match="'N/A' does not fit"):
        with_computed({"d": "N/A"}, unguarded)
