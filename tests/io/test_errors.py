"""Clean errors are one line of readable length (issue 15, item 10)."""

from routecli.errors import MAX_MESSAGE, InstanceFormatError, OptionError, excerpt, one_line


def test_one_line_joins_lines_and_cuts_long_text():
    assert one_line("cannot parse:\n  line 3\r\n\tbad  value") == "cannot parse: line 3 bad value"
    cut = one_line("x" * 100_000)
    assert len(cut) == MAX_MESSAGE and cut.endswith("…")
    assert one_line("short") == "short"


def test_excerpt_quotes_a_short_piece():
    assert excerpt("four") == "'four'"
    assert excerpt("9" * 5000) == "'" + "9" * 39 + "…'"


def test_every_routecli_error_is_one_line():
    multi = "a.vrp: vrplib says\nInstance does not conform\nto the VRPLIB format."
    flat = "a.vrp: vrplib says Instance does not conform to the VRPLIB format."
    assert str(InstanceFormatError(multi)) == flat
    assert len(str(OptionError("--model " + "m" * 10_000))) == MAX_MESSAGE


def test_cli_prints_one_line_for_a_giant_input_line(data_dir, capsys):
    from routecli.cli.app import main

    assert main(["info", str(data_dir / "malformed" / "giant_line.tsp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and len(err) <= MAX_MESSAGE + 8
    assert "line 5: expected 'KEY : value'" in err


def test_display_path_is_relative_below_the_working_directory(tmp_path, monkeypatch):
    from routecli.errors import display_path

    monkeypatch.chdir(tmp_path)
    assert display_path(tmp_path / "sub" / "x.vrp") == "sub/x.vrp"
    assert display_path("x.vrp") == "x.vrp"


def test_display_path_elides_the_middle_of_a_long_path_and_keeps_the_file_name():
    from routecli.errors import MAX_PATH, display_path

    deep = "/elsewhere/" + "deep-folder/" * 30 + "X-n101-k25.vrp"
    shown = display_path(deep)
    assert len(shown) == MAX_PATH and shown.startswith("/elsewhere/") and "…" in shown
    assert shown.endswith("/X-n101-k25.vrp")


def test_no_explanation_is_cut_however_deep_the_folder(malformed_dir, capsys):
    """Every malformed fixture, from a 150+ character folder: the line ends in the reader's full
    explanation (the one the library error carries), never in the cut mark."""
    from routecli.cli.app import main
    from routecli.errors import RoutecliError
    from routecli.io import read_instance

    assert len(str(malformed_dir)) >= 150
    instances = sorted(p for p in malformed_dir.iterdir() if p.suffix in (".tsp", ".vrp", ".kp", ".txt"))
    for path in instances:
        try:
            read_instance(path)
        except RoutecliError as exc:
            explanation = str(exc).split(": ", 1)[1]
        else:
            raise AssertionError(f"{path.name} was read")
        assert main(["info", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.endswith(explanation), (path.name, err)
        assert not explanation.endswith("…"), (path.name, err)  # an excerpt ends in …' instead
