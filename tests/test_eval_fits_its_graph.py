"""`reflexion eval` scores a dataset only on a graph it was written for, names every excluded
construct correctly, and lists every exclusion group."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.evaluation.gold import PATTERN_AS_VALUE, reason_for
from reflexion_agents.nodes.evaluation.report import markdown
from reflexion_agents.nodes.graphdb.demo_data import SHOP_QUESTIONS_CSV
from reflexion_agents.schemas.errors import ConfigurationError, CypherSyntaxError, QueryError


async def test_a_dataset_written_for_another_graph_is_refused_unless_forced(movies_db, shop_db):
    movies_items = load_dataset()[::40]
    with pytest.raises(ConfigurationError, match=r"does not fit the graph 'shop'.*ACTED_IN.*--force"):
        await evaluate(agent="reflexion", model="oracle", items=movies_items, db=shop_db)
    with pytest.raises(ConfigurationError, match=r"does not fit the graph 'movies'.*Product"):
        await evaluate(agent="naive", model="oracle", items=load_dataset(SHOP_QUESTIONS_CSV), db=movies_db)
    forced = await evaluate(
        agent="reflexion", model="oracle", items=load_dataset(SHOP_QUESTIONS_CSV), db=movies_db, force=True
    )
    assert forced.overall.scored == 80  # scored as asked: mostly empty gold results, and empty answers


def test_the_cli_refuses_with_exit_2_and_the_reason(shop_db, falkordb_server, tmp_path, capsys):
    out = tmp_path / "results"
    code = main(
        [
            "--data-dir",
            str(falkordb_server.data_dir),
            "eval",
            "--model",
            "oracle",
            "--graph",
            "shop",
            "--limit",
            "30",
            "--out",
            str(out),
        ]
    )
    assert code == 2 and "does not fit the graph 'shop'" in capsys.readouterr().err
    assert not out.exists()  # refused before any question ran: no empty results folder is left


def test_exclusion_reasons_name_the_real_construct():
    collected = (
        "MATCH (m:Movie)<-[:ACTED_IN]-(p) WITH m, collect(p.born) AS xs WHERE ALL(x IN xs WHERE x > 1950) RETURN m"
    )
    assert reason_for(collected, CypherSyntaxError("Unable to resolve filtered alias 'xs'")) != PATTERN_AS_VALUE
    sized = "MATCH (m:Movie) WHERE size((m)<-[:REVIEWED]-()) > 1 RETURN m"
    assert (
        reason_for(sized, CypherSyntaxError("Unable to resolve filtered alias '(m)<-[:REVIEWED]-()'"))
        == PATTERN_AS_VALUE
    )
    grouped = "MATCH (m:Movie) RETURN m.released, count(*) GROUP BY m.released"
    assert reason_for(grouped, CypherSyntaxError("Invalid input 'G'")).startswith("SQL-style")
    assert "Unable" not in reason_for("RETURN 1", QueryError("Unable to locate a value with alias x within the record"))


async def test_the_summary_lists_every_exclusion_group(movies_db):
    report = await evaluate(agent="reflexion", model="oracle", items=load_dataset()[:5], db=movies_db)
    many = report.model_copy(update={"excluded_reasons": {f"reason {i}": 10 - i for i in range(10)}, "excluded": 55})
    text = markdown(many)
    assert all(f"reason {i} ({10 - i})" in text for i in range(10))


def test_mostly_empty_gold_results_are_refused_even_with_the_graphs_own_names():
    from reflexion_agents.nodes.evaluation.fit import Fit

    assert not Fit(queries=20, foreign=0, unknown_names=[], runnable=20, empty=11).fits
    assert Fit(queries=20, foreign=0, unknown_names=[], runnable=20, empty=10).fits
    assert Fit(queries=3, foreign=0, unknown_names=[], runnable=3, empty=2).fits  # too few to judge
    assert not Fit(queries=3, foreign=2, unknown_names=["Movie"], runnable=3, empty=0).fits
