from __future__ import annotations

import pytest

from evals_pipeline.suites import slugify
from evals_pipeline.suites.slugs import MAX_SLUG, suite_slug


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("My Test", "my-test"),
        ("my-test", "my-test"),
        ("  Create hello.py!  ", "create-hello-py"),
        ("a|b,c...d", "a-b-c-d"),
        ("snake_case_id", "snake_case_id"),
        ("a - b", "a-b"),
        ("--x--", "x"),
        ("Café Crème", "cafe-creme"),
        ("Test 42", "test-42"),
    ],
)
def test_slugify_makes_partition_keys(text: str, slug: str) -> None:
    assert slugify(text) == slug


@pytest.mark.parametrize("text", ["", "---", "!!!", "日本"])
def test_slugify_rejects_text_without_letters_or_digits(text: str) -> None:
    with pytest.raises(ValueError, match="no letters or digits"):
        slugify(text)


def test_suite_slug_is_an_asset_key_prefix() -> None:
    assert suite_slug("Hello Suite-2") == "hello_suite_2"


def test_a_long_name_keeps_its_start_and_a_hash_of_the_whole() -> None:
    long_a, long_b = "fix " * 75 + "a", "fix " * 75 + "b"  # 301 characters, same start
    slug_a, slug_b = slugify(long_a), slugify(long_b)
    assert len(slug_a) == len(slug_b) == MAX_SLUG
    assert slug_a != slug_b
    assert slug_a.startswith("fix-fix-") and slug_a[-9] == "-"
    assert slugify(long_a) == slug_a  # stable
    assert slugify("x" * MAX_SLUG) == "x" * MAX_SLUG  # at the limit: unchanged
