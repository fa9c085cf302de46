"""The spot eviction model (issue 32): a constant rate per node-hour, Azure's hourly bands turned
into rates, `--spot-eviction RATE | POOL=RATE` parsed, and eviction instants that depend on
the seed, the pool and the node alone."""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

import pytest

from aks_kueue.k8s.loader import LoadError
from aks_kueue.replay.spot import (DEFAULT, DEFAULT_RATE, MAX_RATE, SpotModel, SpotRate, SpotRates,
                                   parse_spot_eviction, rate_from_hourly_chance)


@dataclass(frozen=True)
class P:
    name: str
    spot: bool


POOLS = [P("cpu", False), P("h100spot", True), P("cpuspot", True)]


def test_the_default_is_the_top_of_azures_lowest_band_as_a_rate():
    """5% an hour is a 5% chance of eviction within the hour: 1 - exp(-λ) = 0.05."""
    assert DEFAULT_RATE == pytest.approx(0.051293, abs=1e-6)
    assert 1 - math.exp(-DEFAULT_RATE) == pytest.approx(0.05)
    assert DEFAULT.mean_hours == pytest.approx(19.50, abs=0.01)
    assert "0-5% an hour" in DEFAULT.source and "learn.microsoft.com/azure/virtual-machines/spot-vms" in DEFAULT.source
    assert rate_from_hourly_chance(0.2) == pytest.approx(-math.log(0.8))
    with pytest.raises(ValueError):
        rate_from_hourly_chance(1.0)


def test_rates_for_every_spot_pool_and_per_pool():
    rates = parse_spot_eviction(["20%", "cpuspot=0.01"])
    assert rates.everywhere == SpotRate(pytest.approx(-math.log(0.8)), "given as 20% an hour")
    assert rates.per_pool == {"cpuspot": SpotRate(0.01, "given")}
    model = rates.model(POOLS, seed=3)
    assert set(model.rates) == {"h100spot", "cpuspot"}          # a regular pool is never evicted
    assert model.rates["cpuspot"].per_node_hour == 0.01
    assert model.rates["h100spot"].source == "given as 20% an hour"
    assert parse_spot_eviction([]).model(POOLS).rates["h100spot"] is DEFAULT
    assert parse_spot_eviction(["h100spot=.5"]).per_pool["h100spot"].per_node_hour == 0.5
    assert parse_spot_eviction(["h100spot=1e-3"]).per_pool["h100spot"].per_node_hour == 0.001


@pytest.mark.parametrize("values, message", [
    (["=0.1"], "--spot-eviction '=0.1': name the pool before '=' (POOL=RATE), or give RATE alone"),
    (["often"], "--spot-eviction 'often': 'often' is not a rate; give evictions per node-hour (0.05) or Azure's "
                "hourly eviction chance (5%)"),
    (["-0.1"], "--spot-eviction '-0.1': a rate is 0 (never evicted) or more"),
    (["h100spot=nan"], "--spot-eviction 'h100spot=nan': 'nan' is not a rate"),
    (["100%"], "--spot-eviction '100%': a chance of eviction within an hour is under 100%"),
    (["61"], "--spot-eviction '61': 61 evictions per node-hour is more than 60 (one a minute), the most the "
             "replay takes"),
    (["0.1", "0.2"], "--spot-eviction '0.2': a rate for every spot pool is given twice"),
    (["a=0.1", "a=0.2"], "--spot-eviction 'a=0.2': pool a is given twice"),
])
def test_a_bad_rate_is_refused_with_a_sentence_about_the_flag(values, message):
    with pytest.raises(LoadError) as refused:
        parse_spot_eviction(values)
    assert refused.value.source == "" and str(refused.value).startswith(message)


def test_a_rate_must_name_a_spot_pool_of_the_configurations():
    parse_spot_eviction(["h100spot=0.1"]).check(POOLS)
    with pytest.raises(LoadError, match="h100=...: h100 names no pool of the configurations replayed; spot pools: "
                                        "cpuspot, h100spot"):
        parse_spot_eviction(["h100=0.1"]).check(POOLS)
    with pytest.raises(LoadError, match=r"cpu=...: cpu is not a spot pool \(spot: false\)"):
        parse_spot_eviction(["cpu=0.1"]).check(POOLS)
    with pytest.raises(LoadError, match="have no spot pool"):
        parse_spot_eviction(["0.1"]).check([P("cpu", False)])
    assert MAX_RATE == 60


def test_an_eviction_instant_worked_by_hand():
    """seed 7, the 3rd node of h100spot, Ready at 600 s, 0.2 evictions per node-hour: u from the
    first 8 bytes of BLAKE2b("7\\0h100spot\\03"), life -ln(u) / 0.2 hours."""
    digest = hashlib.blake2b(b"7\x00h100spot\x003", digest_size=8).digest()
    u = (int.from_bytes(digest, "big") + 0.5) / 2 ** 64
    expected = 600 + 3600 * -math.log(u) / 0.2
    model = SpotModel(7, {"h100spot": SpotRate(0.2, "given")})
    assert model.eviction_at("h100spot", 3, 600.0) == pytest.approx(expected, rel=1e-12)
    assert model.evictions("h100spot", 3, 600.0, expected + 1) == [pytest.approx(expected)]
    assert model.evictions("h100spot", 3, 600.0, expected - 1) == []        # scaled down first
    assert model.eviction_at("cpu", 3, 600.0) is None                        # not a spot pool
    assert SpotModel(7, {"h100spot": SpotRate(0.0, "given")}).eviction_at("h100spot", 3, 0.0) is None


def test_instants_depend_on_seed_pool_and_node_alone():
    model = SpotModel(0, {"a": SpotRate(0.1, "given"), "b": SpotRate(0.1, "given")})
    keys = [(pool, node) for pool in "ab" for node in range(1, 200)]
    first = {key: model.eviction_at(*key, 0.0) for key in keys}
    shuffled = keys[:]
    random.Random(1).shuffle(shuffled)
    assert {key: model.eviction_at(*key, 0.0) for key in shuffled} == first   # any order of events
    assert first[("a", 5)] != first[("b", 5)]
    other = SpotModel(1, model.rates)
    assert sum(other.eviction_at(*key, 0.0) == first[key] for key in keys) == 0
    # The same node of another configuration's pool at twice the rate lives half as long: the
    # configurations of --compare draw the same lives (common random numbers).
    faster = SpotModel(0, {"a": SpotRate(0.2, "given")})
    assert faster.eviction_at("a", 5, 100.0) - 100 == pytest.approx(first[("a", 5)] / 2)


def test_over_many_nodes_the_draws_have_the_rate_they_were_given():
    """At the default rate, 5% of nodes go within their first hour and the mean life is 19.5 h
    (20,000 nodes: the bounds are five standard errors wide)."""
    model = SpotModel(0, {"p": DEFAULT})
    lives = [model.eviction_at("p", node, 0.0) / 3600 for node in range(1, 20_001)]
    assert sum(life <= 1 for life in lives) / len(lives) == pytest.approx(0.05, abs=0.0077)
    assert sum(lives) / len(lives) == pytest.approx(19.50, rel=0.036)


def test_the_assumptions_say_the_rate_its_source_and_what_is_not_modelled():
    lines = SpotRates().model(POOLS, seed=4).assumptions()
    assert lines[0] == ("pool h100spot: spot, a node is evicted at 0.05129 a node-hour (on average after 19.5 h "
                        f"Ready), {DEFAULT.source}")
    assert "drawn from --seed 4 by pool and node number" in lines[2]
    assert "not modelled: many nodes evicted at once" in lines[2]
    assert SpotRates().model([P("cpu", False)]).assumptions() == []
