from __future__ import annotations

import pytest

from evals_pipeline.suites import slugify
from evals_pipeline.suites.slugs import suite_slug


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
