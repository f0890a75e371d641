"""The one result store: keyed rows, resume, torn rows."""

import pytest

from routecli.store import Provenance, ResultStore


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
