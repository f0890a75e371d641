"""Tables written whole: solve --csv's and the analyses' CSV and JSON."""

import json

import numpy as np

from routecli.results import write_rows, write_table


def test_a_table_is_written_whole_with_values_as_the_store_writes_them(tmp_path):
    path = tmp_path / "t.csv"
    write_table(path, ["a", "b"], [{"a": 1, "b": None}, {"a": "x", "b": 2.5}])
    assert path.read_text() == "a,b\n1,\nx,2.5\n"



def test_an_analysis_table_in_json_names_its_version_and_commit_and_nulls_undefined_numbers(
        tmp_path):
    path = tmp_path / "t.json"
    write_rows(path, [{"pe": "ipe", "rho": np.float32(0.5), "gap": float("nan")}], {"seed": 0})
    written = json.loads(path.read_text())
    assert {"routecli", "commit", "seed"} <= written.keys()
    assert written["rows"] == [{"pe": "ipe", "rho": 0.5, "gap": None}]
