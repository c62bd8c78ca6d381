"""Execution-accuracy scoring on small hand-made cases: values, columns, order, ties, nulls, floats."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.evaluation.scoring import normalise_value, rows_match, sort_columns

UNORDERED = "MATCH (m:Movie) RETURN m.title AS title, m.released AS year"
ORDERED = "MATCH (m:Movie) RETURN m.title AS title, m.released AS year ORDER BY year DESC"
TOP = "MATCH (p:Person)-[:ACTED_IN]->(m) RETURN p.name AS name, count(m) AS n ORDER BY n DESC LIMIT 3"


def match(gold_cypher, gold_columns, gold_rows, columns, rows):
    return rows_match(gold_cypher, gold_columns, gold_rows, columns, rows)


def test_rows_compare_as_multisets_when_the_gold_does_not_sort():
    gold = [["A", 1999], ["B", 2003], ["B", 2003]]
    assert match(UNORDERED, ["title", "year"], gold, ["t", "y"], [["B", 2003], ["A", 1999], ["B", 2003]])
    assert not match(
        UNORDERED, ["title", "year"], gold, ["t", "y"], [["B", 2003], ["A", 1999], ["A", 1999]]
    )  # multiplicity
    assert not match(UNORDERED, ["title", "year"], gold, ["t", "y"], [["B", 2003], ["A", 1999]])


def test_numbers_compare_as_numbers_and_booleans_stay_booleans():
    assert match(UNORDERED, ["x"], [[2]], ["y"], [[2.0]])
    assert match(UNORDERED, ["x"], [[1 / 3]], ["y"], [[0.3333333333]])  # 9 significant digits
    assert not match(UNORDERED, ["x"], [[0.33]], ["y"], [[0.34]])
    assert not match(UNORDERED, ["x"], [[True]], ["y"], [[1]])
    assert normalise_value(float("nan")) is None


def test_nulls_match_only_nulls_and_empty_answers_match_each_other():
    assert match(UNORDERED, ["x", "y"], [["A", None]], ["a", "b"], [["A", None]])
    assert not match(UNORDERED, ["x", "y"], [["A", None]], ["a", "b"], [["A", ""]])
    assert not match(UNORDERED, ["x"], [[None]], ["x"], [])  # one null row is not no rows
    assert match(UNORDERED, ["x"], [], ["a", "b"], [])


def test_column_names_do_not_matter_but_their_number_does_and_order_is_aligned():
    gold = [["A", 1999], ["B", 2003]]
    assert match(UNORDERED, ["title", "year"], gold, ["m.year", "m.title"], [[1999, "A"], [2003, "B"]])  # by name
    assert match(UNORDERED, ["title", "year"], gold, ["released", "name"], [[1999, "A"], [2003, "B"]])  # by permutation
    assert not match(UNORDERED, ["title", "year"], gold, ["title", "year", "extra"], [["A", 1999, 0], ["B", 2003, 0]])


def test_lists_and_maps_compare_by_content():
    assert match(UNORDERED, ["x", "y"], [[[1, 2], {"a": 1, "b": 2}]], ["x", "y"], [[[1.0, 2], {"b": 2.0, "a": 1}]])
    assert not match(UNORDERED, ["x"], [[[1, 2]]], ["x"], [[[2, 1]]])


def test_order_matters_when_the_gold_sorts():
    gold = [["B", 2003], ["A", 1999]]
    assert match(ORDERED, ["title", "year"], gold, ["t", "y"], [["B", 2003], ["A", 1999]])
    assert not match(ORDERED, ["title", "year"], gold, ["t", "y"], [["A", 1999], ["B", 2003]])


def test_rows_tied_on_the_sort_key_may_come_in_any_order():
    gold = [["B", 2003], ["C", 2003], ["A", 1999]]
    assert match(ORDERED, ["title", "year"], gold, ["t", "y"], [["C", 2003], ["B", 2003], ["A", 1999]])
    assert not match(ORDERED, ["title", "year"], gold, ["t", "y"], [["A", 1999], ["C", 2003], ["B", 2003]])


def test_ties_cut_by_limit_may_keep_any_of_the_tied_rows():
    gold = [["Tom", 12], ["Keanu", 7], ["Hugo", 5]]
    assert match(TOP, ["name", "n"], gold, ["actor", "movies"], [["Tom", 12], ["Keanu", 7], ["Carrie", 5]])
    assert not match(TOP, ["name", "n"], gold, ["actor", "movies"], [["Tom", 12], ["Hugo", 7], ["Keanu", 5]])
    assert not match(TOP, ["name", "n"], gold, ["actor", "movies"], [["Tom", 12], ["Keanu", 7], ["Carrie", 4]])
    # without LIMIT a tie group must hold the same rows
    assert not match(
        TOP.replace(" LIMIT 3", ""), ["name", "n"], gold, ["a", "b"], [["Tom", 12], ["Keanu", 7], ["Carrie", 5]]
    )


@pytest.mark.parametrize(
    "cypher, columns, keys",
    [
        (UNORDERED, ["title", "year"], None),
        (ORDERED, ["title", "year"], [1]),
        (TOP, ["name", "n"], [1]),
        ("MATCH (m) RETURN m.title ORDER BY m.title", ["m.title"], [0]),
        ("MATCH (m) RETURN m.title AS t ORDER BY m.released", ["t"], []),
    ],
)
def test_sort_columns_are_read_from_the_final_order_by(cypher, columns, keys):
    assert sort_columns(cypher, columns) == keys
