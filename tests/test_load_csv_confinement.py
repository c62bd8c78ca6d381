"""`reflexion load` reads only files inside its import folders, as Neo4j reads only its import directory.

Hostile scripts, through the real command line on the embedded database: absolute paths,
`file:///` URLs climbing out with `..`, a symlink in `--csv-dir` leading out, /proc, /sys and
/dev (files, and as the folder itself), a FIFO that would block the loader forever. Each is
refused with the rule and the flag, exit 2, and no graph is created. A script written for Neo4j's
import directory (`file:///products.csv`) reads the file from `--csv-dir`. The reader streams: it
yields rows from a source that never ends.
"""

from __future__ import annotations

import itertools
import os
import uuid
from pathlib import Path

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.load_csv import iter_csv_rows

HOST_FILE = "/etc/passwd"
LEAD_OUT = "leads to"
NOT_FOUND = "was not found in the import folders"


@pytest.fixture
def data_dir(falkordb_server) -> str:
    return str(falkordb_server.data_dir)


def graph_names(falkordb_server) -> list[str]:
    return FalkorDBGraph("movies", host=falkordb_server.host, port=falkordb_server.port).graphs()


def load(data_dir: str, script: Path, *extra: str) -> tuple[int, str]:
    """Run `reflexion load` on `script` into a new graph: (exit code, the graph's name)."""
    graph = f"confined_{uuid.uuid4().hex[:8]}"
    return main(["--data-dir", data_dir, "load", str(script), "--graph", graph, *extra]), graph


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"file://{HOST_FILE}", NOT_FOUND),  # Neo4j's reading: <import>/etc/passwd, which is not there
        (HOST_FILE, NOT_FOUND),
        ("file:///../../../../../../../../etc/passwd", LEAD_OUT),
        ("../../../../../../../../etc/passwd", LEAD_OUT),
        ("file:///proc/self/environ", NOT_FOUND),
        ("file:///../../../../../../../../proc/self/environ", LEAD_OUT),
        ("file:///../../../../../../../../dev/zero", LEAD_OUT),
        ("file:///../../../../../../../../sys/devices/system/cpu/online", LEAD_OUT),
    ],
)
def test_a_script_cannot_read_the_host_s_files(data_dir, falkordb_server, tmp_path, capsys, url, said):
    script = tmp_path / "hostile.cypher"
    script.write_text(f"LOAD CSV FROM '{url}' AS row CREATE (:Leak {{line: row[0]}});\n")
    code, graph = load(data_dir, script, "--csv-dir", str(tmp_path))
    err = capsys.readouterr().err
    assert code == 2 and said in err and "--csv-dir" in err, err
    assert graph not in graph_names(falkordb_server)


def test_a_symlink_in_the_csv_folder_leading_out_is_refused(data_dir, falkordb_server, tmp_path, capsys):
    folder = tmp_path / "import"
    folder.mkdir()
    (folder / "users.csv").symlink_to(HOST_FILE)
    (folder / "nested").symlink_to("/etc")
    for name in ("users.csv", "nested/passwd"):
        script = tmp_path / f"{name.replace('/', '_')}.cypher"
        script.write_text(f"LOAD CSV FROM 'file:///{name}' AS row CREATE (:Leak {{line: row[0]}});\n")
        code, graph = load(data_dir, script, "--csv-dir", str(folder))
        err = capsys.readouterr().err
        assert code == 2 and f"leads to {HOST_FILE}" in err and "import folders (--csv-dir" in err, err
        assert graph not in graph_names(falkordb_server)


@pytest.mark.parametrize("folder", ["/proc/self", "/sys/kernel", "/dev"])
def test_proc_sys_and_dev_are_never_import_folders(data_dir, tmp_path, capsys, folder):
    script = tmp_path / "s.cypher"
    script.write_text("LOAD CSV FROM 'file:///environ' AS row CREATE (:Leak {line: row[0]});\n")
    code, _ = load(data_dir, script, "--csv-dir", folder)
    assert code == 2 and "never read" in capsys.readouterr().err


def test_a_fifo_in_the_folder_is_refused_instead_of_blocking(data_dir, tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.csv")
    script = tmp_path / "s.cypher"
    script.write_text("LOAD CSV FROM 'file:///pipe.csv' AS row CREATE (:X {v: row[0]});\n")
    code, _ = load(data_dir, script)
    assert code == 2 and "not a regular file" in capsys.readouterr().err


def test_a_script_written_for_neo4j_s_import_directory_reads_from_csv_dir(data_dir, falkordb_server, tmp_path):
    imports = tmp_path / "import"
    (imports / "sub").mkdir(parents=True)
    (imports / "products.csv").write_text('productID,productName\n1,Chai\n2,"Chang, the tea"\n')
    (imports / "sub" / "suppliers.csv").write_text("supplierID,companyName\n1,Exotic Liquids\n")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    script = scripts / "northwind.cypher"
    script.write_text(
        'LOAD CSV WITH HEADERS FROM "file:///products.csv" AS row\n'
        "CREATE (:Product {productID: toInteger(row.productID), productName: row.productName});\n"
        "LOAD CSV WITH HEADERS FROM 'file:///sub/suppliers.csv' AS row\n"
        "CREATE (:Supplier {companyName: row.companyName});\n"
    )
    code, graph = load(data_dir, script, "--csv-dir", str(imports))
    assert code == 0
    db = FalkorDBGraph(graph, host=falkordb_server.host, port=falkordb_server.port)
    names = db.query("MATCH (n) RETURN coalesce(n.productName, n.companyName) AS name ORDER BY name").rows
    assert names == [["Chai"], ["Chang, the tea"], ["Exotic Liquids"]]
    db.clear()


def test_rows_are_read_as_the_file_is_read_not_after():
    endless = itertools.chain(["id,name\n"], (f"{i},row {i}\n" for i in itertools.count()))
    first = list(itertools.islice(iter_csv_rows(endless, headers=True), 3))
    assert first == [{"id": "0", "name": "row 0"}, {"id": "1", "name": "row 1"}, {"id": "2", "name": "row 2"}]
