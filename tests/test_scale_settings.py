"""`reflexion scale`'s settings, checked before anything starts: where the runtime is missing it says
how to get it, and the processes' PostgreSQL pools fit in the local server's connections."""

from __future__ import annotations

import importlib.util

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.cli.scale_out import CONNECTIONS_BESIDE_POOL, LOCAL_POSTGRES_CONNECTIONS, pool_settings
from reflexion_agents.schemas.errors import ConfigurationError


@pytest.mark.skipif(importlib.util.find_spec("langhost") is not None, reason="this environment has the runtime")
def test_without_the_runtime_the_command_says_how_to_get_it(capsys, tmp_path):
    assert main(["scale", "--processes", "2", "--state-dir", str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert "make scale-env" in said and "langhost" in said
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_every_process_fits_in_the_local_postgres(processes):
    pools = pool_settings(processes, local_postgres=True)
    each = int(pools["PG_POOL_SIZE"]) + int(pools["PG_MAX_OVERFLOW"]) + CONNECTIONS_BESIDE_POOL
    assert int(pools["PG_POOL_SIZE"]) >= 2 and processes * each <= LOCAL_POSTGRES_CONNECTIONS


def test_more_processes_than_the_local_postgres_takes_are_refused_and_a_server_of_ones_own_is_left_alone():
    with pytest.raises(ConfigurationError, match="DATABASE_URI"):
        pool_settings(4, local_postgres=True)
    assert pool_settings(8, local_postgres=False) == {}


def test_a_count_of_processes_below_one_is_an_argument_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["scale", "--processes", "0"])
    assert exit_.value.code == 2 and "--processes" in capsys.readouterr().err
