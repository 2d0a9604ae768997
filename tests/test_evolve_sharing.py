"""Copy-on-write states: ``evolve`` shares what an event leaves alone, so it must never change a
state it is given, and the audit, which checks each event on the state deciding it led to, must
end where a plain fold of the log ends."""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conjure.server.audit_verify import audit
from conjure.server.logformat import encode_record
from conjure.server.rules import evolve, fold
from tests.test_redecide import random_game, records_of


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(3, 6), variant=st.sampled_from(["standard", "dark-magic"]))
def test_evolve_never_changes_the_state_it_is_given(data, n, variant):
    decisions = random_game(data, n, variant)
    states = []
    state = None
    for _, events, _ in decisions:
        for e in events:
            state = evolve(state, e)
            states.append((state, copy.deepcopy(state)))
    # Every state still holds what it held when it was made, after all later events were folded.
    for i, (shared, snapshot) in enumerate(states):
        assert shared == snapshot, f"the state after event {i} was changed by a later one"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(3, 6), variant=st.sampled_from(["standard", "dark-magic"]))
def test_the_audit_ends_on_the_fold_of_the_log(data, n, variant, tmp_path_factory):
    decisions = random_game(data, n, variant)
    log = Path(tmp_path_factory.mktemp("log")) / "g.jsonl"
    log.write_bytes(b"".join(encode_record(r) for r in records_of(decisions)))
    a = audit(log)
    assert a.verified, a.problems
    assert a.redecided == len(decisions)
    assert a.state == fold([e for _, events, _ in decisions for e in events])
    assert [s.event for s in a.steps] == [e for _, events, _ in decisions for e in events]
