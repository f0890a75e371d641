"""The value lists ``--help`` shows (copied into routecli.cli.choices so that the help does not
import torch) agree with the modules that define them."""

from __future__ import annotations

from routecli.cli import choices


def test_every_copied_list_matches_its_source():
    from routecli.analysis import anisometry, entropy
    from routecli.analysis.data import PROBLEMS
    from routecli.analysis.pe_plots import PLOTS
    from routecli.bench.protocol import PROTOCOLS
    from routecli.bench.sets import NAMED_SETS
    from routecli.experiments.pe.compare import TABLE4
    from routecli.generate import GENERATORS, KP_CAPACITIES
    from routecli.io import ROUND_CHOICES
    from routecli.pe import PE_REGISTRY
    from routecli.pe.routing import AMPLITUDES, SCHEDULES

    assert choices.ROUND == ROUND_CHOICES
    assert tuple(GENERATORS) == choices.GENERATE_PROBLEMS
    assert tuple(KP_CAPACITIES) == choices.KP_CAPACITIES
    assert tuple(NAMED_SETS) == choices.BENCH_SETS
    assert tuple(PROTOCOLS) == choices.BENCH_PROTOCOLS
    assert choices.SET_PROBLEMS == PROBLEMS
    assert tuple(anisometry.PAPER_TABLE1) == choices.TABLE1_SETS
    assert tuple(entropy.DEFAULT_SETS) == choices.ENTROPY_SETS
    assert (choices.ENTROPY_BINS, choices.ENTROPY_MIN_COUNT) == (entropy.DEFAULT_BINS,
                                                                 entropy.DEFAULT_MIN_COUNT)
    assert tuple(PE_REGISTRY) == choices.PE_NAMES
    assert choices.PE_PLOTS == PLOTS
    assert choices.COMPARE_PE_DEFAULT == TABLE4
    assert (choices.IPE_SCHEDULES, choices.IPE_AMPLITUDES) == (SCHEDULES, AMPLITUDES)


def test_distribution_and_shift_lists_match_their_sources():
    from routecli.analysis.shift import SHIFTS
    from routecli.generate import DISTRIBUTIONS

    assert choices.DISTRIBUTIONS == DISTRIBUTIONS
    assert tuple(SHIFTS) == choices.SHIFTS


def test_typed_options_are_the_lists_their_models_check():
    """The removal policies the kernels implement are the ones the options type names."""
    from routecli.search.options import REMOVALS
    from routecli.search.ruin import POLICIES

    assert tuple(POLICIES) == REMOVALS
