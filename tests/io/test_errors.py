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
