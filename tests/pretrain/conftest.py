"""The tiny corpus of `tiny_corpus.make_tiny_corpus`, written per test."""
from pathlib import Path

import pytest
from tiny_corpus import make_tiny_corpus


@pytest.fixture
def tiny_corpus(tmp_path) -> Path:
    return make_tiny_corpus(tmp_path)
