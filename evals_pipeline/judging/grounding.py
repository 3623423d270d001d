"""Evidence grounding (reference spec `judging.md` §3): does each quote a judge cites occur in the
text the judge was shown, and what does that make of its verdict?

A quote is looked up exactly, then after normalisation, then fuzzily (RapidFuzz `partial_ratio`),
and a fuzzy match must still carry the same numbers and the same pass/fail words as the text it
aligns with: fuzzy matching alone accepts "42 passed" for "41 passed" or "PASSED" for "FAILED".
The corpus must be exactly what the judge saw (after truncation), not the untruncated log.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rapidfuzz import fuzz

from evals_pipeline.models.judging import Evidence, GroundingReason, JudgeVerdict, MatchKind

MIN_QUOTE_CHARS = 12
MIN_FUZZY_CHARS = 20
FUZZY_THRESHOLD = 90.0
MIN_VERIFIED_FRACTION = 0.5

RETRY_FEEDBACK = "These strings do not occur in the input; quote verbatim or retract:"

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_WHITESPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_POLARITY = re.compile(
    r"\b(?:pass(?:ed|es|ing)?|fail(?:ed|s|ing|ure)?|errors?|not|no|never|success(?:ful)?|ok)\b",
    re.IGNORECASE,
)

GroundingOutcome = Literal["grounded", "partially_grounded", "retry", "abstain", "unsupported_pass"]


@dataclass(frozen=True)
class QuoteCheck:
    """What looking one quote up found; `window` is the aligned text when fuzzy matching ran."""

    match: MatchKind
    score: float
    reason: GroundingReason
    length: int
    window: str | None = None

    @property
    def verified(self) -> bool:
        return self.match != "UNVERIFIED"


@dataclass(frozen=True)
class GroundingResult:
    """A grounded verdict and what the caller does next (§3.1).

    `needs_retry`: re-ask the judge once with `retry_feedback`, then ground again with
    `retried=True`. `checks` parallel `verdict.evidence`.
    """

    verdict: JudgeVerdict
    checks: tuple[QuoteCheck, ...]
    outcome: GroundingOutcome
    needs_retry: bool
    retry_feedback: str | None


def normalize(text: str) -> str:
    """§3's normalisation, so that quotes survive ANSI colour, curly quotes and re-wrapping."""
    text = unicodedata.normalize("NFKC", text)
    text = _ANSI.sub("", text)
    text = text.translate(_QUOTES)
    return _WHITESPACE.sub(" ", text).strip()


def _lower(text: str) -> str:
    # RapidFuzz's alignment indexes the lowered text; slicing the original with it is only safe
    # when lowering kept every character one character long ("İ" becomes two).
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class _Corpus:
    """A text normalised once, for looking up many quotes in it."""

    def __init__(self, text: str) -> None:
        self.text = normalize(text)
        self.lowered = _lower(self.text)

    def check(self, quote: str) -> QuoteCheck:
        q = normalize(quote)
        if len(q) < MIN_QUOTE_CHARS:
            return QuoteCheck("UNVERIFIED", 0.0, "too-short", len(q))
        if q in self.text:
            return QuoteCheck("EXACT", 100.0, "", len(q))
        if len(q) < MIN_FUZZY_CHARS:
            return QuoteCheck("UNVERIFIED", 0.0, "too-short-for-fuzzy", len(q))
        alignment = fuzz.partial_ratio_alignment(_lower(q), self.lowered)
        if alignment is None:  # RapidFuzz returns None only under a score_cutoff; none is given
            return QuoteCheck("UNVERIFIED", 0.0, "below-threshold", len(q))
        window = self.text[alignment.dest_start : alignment.dest_end]
        score = alignment.score
        if score < FUZZY_THRESHOLD:
            return QuoteCheck("UNVERIFIED", score, "below-threshold", len(q), window)
        if sorted(_NUMBER.findall(q)) != sorted(_NUMBER.findall(window)):
            return QuoteCheck("UNVERIFIED", score, "numeric-mismatch", len(q), window)
        if _polarity(q) != _polarity(window):
            return QuoteCheck("UNVERIFIED", score, "polarity-mismatch", len(q), window)
        return QuoteCheck("FUZZY", score, "", len(q), window)


def _polarity(text: str) -> list[str]:
    return sorted(word.lower() for word in _POLARITY.findall(text))


def verify_quote(quote: str, text: str) -> QuoteCheck:
    """Whether `quote` occurs in `text`: EXACT, FUZZY (same numbers and polarity) or UNVERIFIED."""
    return _Corpus(text).check(quote)


def ground_verdict(
    verdict: JudgeVerdict,
    corpus: str,
    *,
    sources: Mapping[str, str] | None = None,
    post_edit_runs: Sequence[str] = (),
    retried: bool = False,
) -> GroundingResult:
    """Check every quote of `verdict` against `corpus` and apply §3.1 to the verdict.

    `corpus` is exactly the text the judge was shown. `sources` maps the ids quotes cite
    (`event:41`) to that event's text; a verified quote not found in its cited event keeps its
    match but gets `reason="source-mismatch"` (None: sources are not checked).
    `post_edit_runs` are the outputs, as shown to the judge, of the test/build commands that ran
    after the last edit; a `verification` PASS needs a verified quote from one of them.
    """
    text = _Corpus(corpus)
    by_source = {key: _Corpus(value) for key, value in (sources or {}).items()}
    runs = [_Corpus(run) for run in post_edit_runs]
    checks = tuple(text.check(e.quote) for e in verdict.evidence)
    evidence = tuple(
        _grounded(e, c, by_source if sources is not None else None)
        for e, c in zip(verdict.evidence, checks, strict=True)
    )
    verified = [e for e, c in zip(evidence, checks, strict=True) if c.verified]
    fraction = len(verified) / len(checks) if checks else 0.0
    unverified = [e.quote for e, c in zip(evidence, checks, strict=True) if not c.verified]

    outcome: GroundingOutcome
    if not checks or fraction < MIN_VERIFIED_FRACTION:
        # The retry comes first: a re-asked judge may also bring the post-edit quote it lacked.
        outcome = "abstain" if retried else "retry"
    elif (
        verdict.dimension == "verification"
        and verdict.verdict == "PASS"
        and not any(run.check(e.quote).verified for e in verified for run in runs)
    ):
        outcome = "unsupported_pass"
    else:
        outcome = "grounded" if fraction == 1.0 else "partially_grounded"

    grounded = verdict.model_copy(
        update={
            "evidence": evidence,
            "critique": _without(verdict.critique, unverified),
            "verified_fraction": fraction,
            "valid": outcome in ("grounded", "partially_grounded"),
            "effective_confidence": verdict.confidence * fraction,
            "partially_grounded": MIN_VERIFIED_FRACTION <= fraction < 1.0,
            "retried": retried,
        }
    )
    needs_retry = outcome == "retry"
    return GroundingResult(
        verdict=grounded,
        checks=checks,
        outcome=outcome,
        needs_retry=needs_retry,
        retry_feedback=retry_feedback(unverified) if needs_retry else None,
    )


def retry_feedback(failed_quotes: Sequence[str]) -> str:
    """The one re-ask §3.1 allows, naming the quotes that were not found."""
    if not failed_quotes:
        return "Your answer cited no evidence. Quote the input verbatim for every claim."
    listed = "\n".join(f"- {quote!r}" for quote in failed_quotes)
    return f"{RETRY_FEEDBACK}\n{listed}"


def _grounded(
    evidence: Evidence, check: QuoteCheck, sources: Mapping[str, _Corpus] | None
) -> Evidence:
    reason = check.reason
    if check.verified and sources is not None and evidence.source is not None:
        cited = sources.get(evidence.source)
        if cited is None or not cited.check(evidence.quote).verified:
            reason = "source-mismatch"
    return evidence.model_copy(
        update={"match": check.match, "match_score": check.score, "reason": reason}
    )


def _without(critique: str, quotes: Sequence[str]) -> str:
    # §3.1: what could not be found must not survive in the stored critique either.
    for quote in quotes:
        if quote.strip():
            critique = critique.replace(quote, "[unverified quote removed]")
    return critique
