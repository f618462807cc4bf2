"""What one output may be: a bound every metric can afford (issue 22: a submitter can make scoring expensive).

An output over ``MAX_OUTPUT_CHARS`` characters is refused before anything is scored, with one line naming the
entry, its length and the limit (``UserError``, exit 2), rather than capped: a capped output would be scored as a
text the method never produced, and a card must score what it holds. The limit is far above any segment a corpus
holds (NTREX's longest reference is 1,052 characters) and low enough that every metric, TER's edit distance
included, scores an output of that length in seconds (``benchmarks/bench_word_salad.py --long-line``).
"""

from __future__ import annotations

from collections.abc import Sequence

from mt_eval.corpus.models import Entry
from mt_eval.errors import UserError

MAX_OUTPUT_CHARS = 100_000


def refuse_overlong(hypotheses: Sequence[str], entries: Sequence[Entry]) -> None:
    """Raise for the first output longer than ``MAX_OUTPUT_CHARS``."""
    for entry, text in zip(entries, hypotheses, strict=True):
        if len(text) > MAX_OUTPUT_CHARS:
            raise UserError(
                f"the output is {len(text):,} characters, over the {MAX_OUTPUT_CHARS:,} one output may have "
                "(nothing was scored)", entry=entry.id, field="predicted",
                hint="a runaway generation: truncate that output or record the entry as failed, then score again",
            )
