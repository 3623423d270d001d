"""Evidence grounding against the test vectors of judging.md §3.2, and the verdict rules of §3.1."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rapidfuzz import fuzz

from evals_pipeline.judging.grounding import (
    RETRY_FEEDBACK,
    ground_verdict,
    normalize,
    verify_quote,
)
from evals_pipeline.models.judging import Evidence, JudgeVerdict

# §3.2 test data, verbatim.
T = (
    "$ pytest -q\n\x1b[31mFAILED\x1b[0m tests/test_parser.py::test_empty - AssertionError: expected [] got None\n"
    "41 passed, 1 failed in 3.21s\n"
    "Agent: I updated `parse()` to return an empty list when the input is blank.\n"
)
G2 = "I updated  `parse()` to return an empty list\nwhen the input is blank"

G1 = "FAILED tests/test_parser.py::test_empty - AssertionError: expected [] got None"
G3 = "42 passed in 3.21s"
QUOTES = {
    "G1": G1,
    "G2": G2,
    "G3": G3,
    "G4": "42 passed, 1 failed in 3.21s",
    "G5": "PASSED tests/test_parser.py::test_empty - AssertionError: expected [] got None",
    "G6": "I updated `parse()` to not return an empty list when the input is blank",
    "G7": "test_parser.py::test_empty - AssertionError expected [] got None",
    "G8": "all tests passed successfully after the fix",
    "G9": "short",
}

# (vector, normalized length, match, reason, score, text the aligned window must contain)
VECTORS = [
    ("G1", 78, "EXACT", "", 100.0, None),
    ("G2", 67, "EXACT", "", 100.0, None),
    ("G3", 18, "UNVERIFIED", "too-short-for-fuzzy", 0.0, None),
    ("G4", 28, "UNVERIFIED", "numeric-mismatch", 96.43, "41 passed, 1 failed in 3.21s"),
    ("G5", 78, "UNVERIFIED", "polarity-mismatch", 96.15, "FAILED tests/"),
    ("G6", 71, "UNVERIFIED", "polarity-mismatch", 96.40, "to return an empty list"),
    ("G7", 64, "FUZZY", "", 98.44, "test_empty - AssertionError: expected [] got None"),
    ("G8", 43, "UNVERIFIED", "below-threshold", 44.44, None),
    ("G9", 5, "UNVERIFIED", "too-short", 0.0, None),
]


@pytest.mark.parametrize(
    ("vector", "length", "match", "reason", "score", "window"), VECTORS, ids=[v[0] for v in VECTORS]
)
def test_section_3_2_quote_vectors(
    vector: str, length: int, match: str, reason: str, score: float, window: str | None
) -> None:
    """judging.md §3.2, table G1-G9: match, reason, score (< 5e-3) and aligned window."""
    check = verify_quote(QUOTES[vector], T)
    assert (check.length, check.match, check.reason) == (length, match, reason)
    assert abs(check.score - score) < 5e-3
    if window is not None:
        assert check.window is not None and window in check.window


def test_section_3_2_g3_would_score_72_22_if_computed() -> None:
    """judging.md §3.2, G3: too short for fuzzy matching, though partial_ratio would give 72.22."""
    score = fuzz.partial_ratio(normalize(G3).lower(), normalize(T).lower())
    assert abs(score - 72.22) < 5e-3


@pytest.mark.parametrize("vector", ["G4", "G5", "G6"])
def test_section_3_2_counter_examples_pass_fuzzy_matching_alone(vector: str) -> None:
    """judging.md §3.2: G4-G6 score ≥ 90, so only the numeric and polarity guards reject them."""
    check = verify_quote(QUOTES[vector], T)
    assert check.score >= 90 and not check.verified


def test_section_3_2_g1_strips_ansi_and_g7_keeps_numbers_and_polarity() -> None:
    """judging.md §3.2: G1 matches once ANSI colour is stripped; G7's window agrees on both guards."""
    assert G1 not in T and G1 in normalize(T)
    g7 = verify_quote(QUOTES["G7"], T)
    assert g7.window is not None and "Error" in g7.window and "FAILED" not in g7.window


def verdict(quotes: list[str], **fields: Any) -> JudgeVerdict:
    evidence = [{"quote": q, "source": None, "claim": "c"} for q in quotes]
    raw = {
        "dimension": "correctness",
        "evidence": evidence,
        "verdict": "FAIL",
        "confidence": 0.9,
        "critique": "see quotes",
        **fields,
    }
    return JudgeVerdict.model_validate({"judge_model": "judge-2025-01-01", **raw})


def test_section_3_2_verdict_vector_unsupported_verification_pass() -> None:
    """judging.md §3.2 verdict vector: verification PASS on G1, G2, G3 → vf 2/3, effective 0.6,
    partially grounded, and invalid: no verified quote of a test run after the last edit."""
    result = ground_verdict(verdict([G1, G2, G3], dimension="verification", verdict="PASS"), T)
    v = result.verdict
    assert v.verified_fraction is not None and abs(v.verified_fraction - 0.6667) < 5e-5
    assert v.effective_confidence is not None and abs(v.effective_confidence - 0.6) < 5e-5
    assert v.partially_grounded is True
    assert v.valid is False
    assert result.outcome == "unsupported_pass" and not result.needs_retry
    assert [e.match for e in v.evidence] == ["EXACT", "EXACT", "UNVERIFIED"]


def test_verification_pass_quoting_a_post_edit_run_is_valid() -> None:
    run = "$ pytest -q\n42 passed in 3.21s\n"
    quote = "42 passed in 3.21s"
    result = ground_verdict(
        verdict([quote, G2], dimension="verification", verdict="PASS"),
        T + run,
        post_edit_runs=[run],
    )
    assert result.outcome == "grounded" and result.verdict.valid is True
    assert result.verdict.effective_confidence == 0.9


def test_fully_grounded_verdict_keeps_its_confidence() -> None:
    result = ground_verdict(verdict([G1, QUOTES["G7"]]), T)
    v = result.verdict
    assert (result.outcome, v.valid, v.verified_fraction, v.effective_confidence) == (
        "grounded",
        True,
        1.0,
        0.9,
    )
    assert not v.partially_grounded
    assert [(e.match, e.reason) for e in v.evidence] == [("EXACT", ""), ("FUZZY", "")]


def test_partially_grounded_verdict_drops_the_unverified_quote_from_the_critique() -> None:
    fabricated = QUOTES["G4"]
    v = verdict([G1, fabricated], critique=f"Output says {fabricated!s} and {G1}.")
    result = ground_verdict(v, T)
    grounded = result.verdict
    assert result.outcome == "partially_grounded"
    assert (grounded.valid, grounded.partially_grounded) == (True, True)
    assert grounded.effective_confidence == pytest.approx(0.45)
    assert fabricated not in grounded.critique and G1 in grounded.critique
    assert grounded.evidence[1].reason == "numeric-mismatch"


def test_mostly_unverified_verdict_is_retried_once_then_abstains() -> None:
    v = verdict([G1, QUOTES["G4"], QUOTES["G8"]])
    first = ground_verdict(v, T)
    assert first.outcome == "retry" and first.needs_retry and first.verdict.valid is False
    assert first.retry_feedback is not None
    assert first.retry_feedback.startswith(RETRY_FEEDBACK)
    assert QUOTES["G4"] in first.retry_feedback and G1 not in first.retry_feedback
    again = ground_verdict(v, T, retried=True)
    assert again.outcome == "abstain" and not again.needs_retry
    assert (again.verdict.valid, again.verdict.retried) == (False, True)


def test_verdict_without_quotes_is_retried() -> None:
    result = ground_verdict(verdict([]), T)
    assert result.outcome == "retry" and result.verdict.verified_fraction == 0.0
    assert result.retry_feedback is not None


def test_quote_found_outside_its_cited_event_is_a_source_mismatch() -> None:
    v = verdict([G1, G2]).model_copy(
        update={
            "evidence": (
                Evidence(quote=G1, source="event:3", claim="test failed"),
                Evidence(quote=G2, source="event:3", claim="agent changed parse"),
            )
        }
    )
    sources = {
        "event:3": "FAILED tests/test_parser.py::test_empty - AssertionError: expected [] got None"
    }
    result = ground_verdict(v, T, sources=sources)
    assert [(e.match, e.reason) for e in result.verdict.evidence] == [
        ("EXACT", ""),
        ("EXACT", "source-mismatch"),
    ]
    assert result.verdict.verified_fraction == 1.0


def test_judge_json_of_section_2_1_parses_and_rejects_unknown_fields() -> None:
    raw = json.loads(
        '{"dimension": "verification", "evidence": [{"quote": "41 passed, 1 failed in 3.21s",'
        ' "source": "event:41", "claim": "tests ran after the last edit"}],'
        ' "verdict": "FAIL", "confidence": 0.9, "critique": "quote 0 shows a failure"}'
    )
    parsed = JudgeVerdict.model_validate({**raw, "judge_model": "judge-2025-01-01"})
    assert parsed.evidence[0].match is None and parsed.valid is None
    with pytest.raises(ValueError, match="extra"):
        JudgeVerdict.model_validate({**raw, "judge_model": "j", "score": 3})
