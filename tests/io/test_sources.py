import pytest

from routecli.cli.app import main
from routecli.io.sources import SOURCES, benchmark_set, no_such_file


@pytest.mark.parametrize("name, known", [
    ("X-n101-k25.vrp", "CVRPLIB"), ("A-n32-k5.vrp", "CVRPLIB"), ("Leuven1.vrp", "CVRPLIB"),
    ("berlin52.tsp", "TSPLIB"), ("kroA100.tsp", "TSPLIB"), ("a280.opt.tour", "TSPLIB"),
    ("mine.vrp", None), ("cvrp-demo-50.vrp", None), ("notes.txt", None), ("tiny.tsp", None),
])
def test_benchmark_names_are_recognised(name, known):
    assert benchmark_set(name) == known


def test_the_error_points_to_the_source_and_keeps_its_address_whole(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_DATA", str(tmp_path / "nothing-here"))
    message = str(no_such_file("/a/very/long/folder/that/goes/on/and/on/for/ever/berlin52.tsp"))
    assert message.startswith("…/berlin52.tsp: no such file") and SOURCES["TSPLIB"] in message
    assert "routecli data fetch" in message
    assert str(no_such_file("mine.vrp")) == "mine.vrp: no such file"


def test_the_error_names_the_copy_in_the_data_folder(tmp_path, monkeypatch):
    (tmp_path / "cvrplib" / "X").mkdir(parents=True)
    (tmp_path / "cvrplib" / "X" / "X-n101-k25.vrp").write_text("")
    monkeypatch.setenv("ROUTECLI_DATA", str(tmp_path))
    message = str(no_such_file("X-n101-k25.vrp"))
    assert message.startswith("X-n101-k25.vrp: no such file; the data folder has ")
    assert message.endswith("cvrplib/X/X-n101-k25.vrp")


@pytest.mark.parametrize("command, name, known", [
    ("solve", "X-n101-k25.vrp", "CVRPLIB"), ("info", "berlin52.tsp", "TSPLIB")])
def test_a_missing_benchmark_file_is_one_line_naming_its_source(tmp_path, monkeypatch, capsys,
                                                                 command, name, known):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROUTECLI_DATA", str(tmp_path / "nothing-here"))
    argv = [command, name] + (["-m", "nn"] if command == "solve" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and SOURCES[known] in err and "routecli data fetch" in err
