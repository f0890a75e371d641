"""The PE lists of the paper's tables and the paper's values (Tables 4, 6, 10-12)."""

from __future__ import annotations

import pytest

from routecli.errors import OptionError
from routecli.experiments.pe.paper import (
    expand_pes,
    paper_gap_at,
    paper_pairs,
    paper_reference,
    paper_value,
)


def test_table_lists_follow_the_paper_with_its_printed_ipe_and_ours_as_one_extra_row():
    full = "ipe_inv_xpe:schedule=geometric"
    table4 = expand_pes("all", "cvrp")
    assert len(table4) == 15 and table4[0] == "nope" and table4[-2:] == [full, "ipe_inv_xpe"]
    assert "ipe_inv:schedule=geometric" in table4 and "ipe" not in table4
    assert expand_pes("table4", "pdtsp")[-2:] == ["ipe_xpe:schedule=geometric", "ipe_xpe"]
    assert expand_pes("table10", "cvrp") == ["nope", "ipe_inv:schedule=geometric",
                                             "ipe_inv_index:schedule=geometric", "xpe", full]
    table11 = expand_pes("table11", "cvrp")
    assert len(table11) == 6 and "ipe_inv_xpe:xpe_aggregate=demand,schedule=geometric" in table11
    assert expand_pes("table12,sin,nope", "cvrp") == ["ipe_xpe:schedule=geometric", full, "sin",
                                                      "nope"]
    assert expand_pes("table6", "pdtsp") == ["n2s", "ipe_xpe:schedule=geometric"]
    formula = expand_pes("ipe-formula", "cvrp")
    assert len(formula) == 9 and full in formula and "ipe_inv_xpe" in formula
    integer = expand_pes("tables10-12-harmonic", "cvrp")
    assert len(integer) == 9 and not any("schedule" in pe for pe in integer)
    assert expand_pes("ipe_inv_xpe:xpe_aggregate=mean,schedule=geometric,sin", "cvrp") == [
        "ipe_inv_xpe:xpe_aggregate=mean,schedule=geometric", "sin"]
    with pytest.raises(OptionError, match="not key=value"):
        expand_pes("ipe:schedule", "cvrp")
    with pytest.raises(OptionError, match="posenc"):
        expand_pes("posenc", "cvrp")


def test_every_listed_pe_has_the_papers_value_except_routecli_s_own_ipe():
    for name in ("table4", "table10", "table11", "table12"):
        for pe in expand_pes(name, "cvrp"):
            assert (paper_value(pe, "cvrp", "dact", 100) is None) == (pe == "ipe_inv_xpe"), pe
    for pe in expand_pes("table4", "pdtsp"):
        assert (paper_value(pe, "pdtsp", "dact", 51) is None) == (pe == "ipe_xpe"), pe
    assert paper_value("n2s", "pdtsp", "n2s", 21) == (4.565, 0.05)
    assert paper_value("ipe_inv_xpe:xpe_aggregate=mean,schedule=geometric", "cvrp", "dact",
                       100) == (15.83, 1.61)
    assert paper_value("ipe_inv_xpe:schedule=geometric,amplitude=harmonic", "cvrp", "dact",
                       100) is None


def test_the_paper_reference_is_the_one_of_the_reproduced_table():
    # Table 6 (N2S) has LKH at each PDTSP size; Table 4 one reference per problem
    assert paper_reference("pdtsp", "n2s", 21) == 4.563
    assert paper_reference("pdtsp", "n2s", 101) == 9.428
    assert paper_reference("pdtsp", "dact", 51) == 6.87
    assert paper_reference("cvrp", "dact", 20) == 15.58


def test_the_compared_pairs_are_ours_against_every_table_entry_and_table10s_ipe_pair():
    full = "ipe_inv_xpe:schedule=geometric"
    pairs = {(a, b): tables for tables, a, b in paper_pairs("cvrp", "dact")}
    assert pairs[(full, "nope")] == "4, 10"
    assert pairs[(full, "ipe_xpe:schedule=geometric")] == "12"
    assert pairs[(full, "ipe_inv_xpe:xpe_aggregate=median,schedule=geometric")] == "11"
    assert pairs[("ipe_inv:schedule=geometric", "ipe_inv_index:schedule=geometric")] == "10"
    assert not any("ipe_inv_xpe" in pair for pair in pairs)  # routecli's variant: no claim
    assert len(pairs) == 13 + 1 + 5 + 1 + 1  # Table 4, 10's index IPE, 11, 12, 10's IPE pair
    assert paper_pairs("pdtsp", "n2s") == [("6", "ipe_xpe:schedule=geometric", "n2s")]
    assert paper_gap_at("n2s", "pdtsp", "n2s", 60) == ("PDTSP-51", 2.40)
    assert paper_gap_at("ipe_inv:schedule=geometric", "pdtsp", "dact", 51) is None
