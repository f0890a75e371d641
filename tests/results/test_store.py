"""The one result store: keyed rows, resume, torn rows, files of an earlier layout, the commit."""

import subprocess

import pytest

from routecli.results import Provenance, ResultStore, ResultStoreError, git_commit, read_csv


def test_store_resumes_by_key_and_drops_a_row_torn_by_a_kill(tmp_path):
    path = tmp_path / "r.csv"
    first = ResultStore(path, ["what", "fingerprint", "cost"], key=["what", "fingerprint"],
                        provenance=Provenance("abc", "d", "c"))
    first.add(what="hgs", fingerprint="f1", cost=1.5)
    with open(path, "a") as fh:
        fh.write("abc,d,c,hgs,f2,")  # killed in the middle of a row
    again = ResultStore(path, ["what", "fingerprint", "cost"], key=["what", "fingerprint"])
    assert again.done(what="hgs", fingerprint="f1") and not again.done(what="hgs", fingerprint="f2")
    again.add(what="hgs", fingerprint="f2", cost=2.5)
    lines = path.read_text().splitlines()
    assert lines[1:] == ["abc,d,c,hgs,f1,1.5", f"{again.rows[1]['commit']},"
                         f"{again.rows[1]['date']},{again.rows[1]['command']},hgs,f2,2.5"]
    with pytest.raises(ValueError, match="lacks"):
        again.add(what="nn")


def test_a_file_of_an_earlier_layout_reads_as_it_is_and_is_migrated_at_its_next_row(
        tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("what,cost,commit\r\nhgs,1.5,abc\r\n")
    store = ResultStore(path, ["what", "cost"], key=["what"], provenance=Provenance("def", "d", "c"))
    assert store.rows == [{"commit": "abc", "date": "", "command": "", "what": "hgs",
                           "cost": "1.5"}]
    assert path.read_bytes() == b"what,cost,commit\r\nhgs,1.5,abc\r\n"  # reading writes nothing
    store.add(what="ortools", cost=2.5)
    assert "rewrote its 1 rows" in capsys.readouterr().err
    assert path.read_text().splitlines() == ["commit,date,command,what,cost", "abc,,,hgs,1.5",
                                             "def,d,c,ortools,2.5"]
    assert ResultStore(path, ["what", "cost"], key=["what"]).rows == store.rows
    grown = ResultStore(path, ["what", "cost", "seed"], key=["what"])  # a new result field
    assert [r["seed"] for r in grown.rows] == ["", ""]
    with pytest.raises(ResultStoreError, match="has the columns"):  # a key column missing
        ResultStore(path, ["what", "cost", "seed"], key=["what", "seed"])
    with pytest.raises(ResultStoreError, match="has the columns"):  # a column it never had
        ResultStore(path, ["what"], key=["what"])


def test_the_commit_is_dirty_for_a_code_change_not_for_results_or_prose(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    files = {"solver.py": "x = 1\n", "notes.md": "# notes\n",
             "benchmarks/results/run/rows.csv": "pe,gap\n", "docs/plot.png": "png"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "start")
    clean = git_commit(tmp_path)
    assert clean and not clean.endswith("-dirty")
    for name in ("notes.md", "benchmarks/results/run/rows.csv", "docs/plot.png"):
        (tmp_path / name).write_text(files[name] + "more\n")
    assert git_commit(tmp_path) == clean
    (tmp_path / "solver.py").write_text("x = 2\n")
    assert git_commit(tmp_path) == clean + "-dirty"


def test_rows_name_the_commit_the_process_started_from_not_a_later_one(monkeypatch):
    import routecli.results.provenance as provenance

    monkeypatch.setattr(provenance, "git_commit", lambda cwd=None: "a-later-commit")
    assert Provenance.current().commit == provenance.STARTED_FROM != "a-later-commit"


def test_a_store_without_provenance_holds_its_columns_alone_and_appends_many_rows_at_once(
        tmp_path):
    path = tmp_path / "costs.csv"
    store = ResultStore(path, ["pe", "seed", "instance", "cost"], ["pe", "seed", "instance"],
                        provenance=False)
    store.add_rows([{"pe": "ipe", "seed": 0, "instance": k, "cost": 1.5 + k} for k in range(3)])
    assert path.read_text().splitlines()[0] == "pe,seed,instance,cost"
    again = ResultStore(path, ["pe", "seed", "instance", "cost"], ["pe", "seed", "instance"],
                        provenance=False)
    assert again.done(pe="ipe", seed=0, instance=2) and len(again.rows) == 3


def test_add_new_writes_a_key_once_even_when_another_store_wrote_it_meanwhile(tmp_path):
    path = tmp_path / "rows.csv"
    mine, theirs = (ResultStore(path, ["pe", "seed", "obj"], ["pe", "seed"]) for _ in range(2))
    assert mine.add_new(pe="xpe", seed=0, obj=1.0) is not None
    assert theirs.add_new(pe="xpe", seed=0, obj=2.0) is None  # read before mine was written
    assert [r["obj"] for r in theirs.rows] == ["1.0"]  # and read again
    assert theirs.add_new(pe="xpe", seed=1, obj=3.0) is not None
    assert [(r["seed"], r["obj"]) for r in read_csv(path)] == [("0", "1.0"), ("1", "3.0")]
