"""Where the tests' real data lives: ``tests/data``, checked in with the repository.

The data travels with the code so a fresh clone runs every test: nothing is skipped for lack of
data, and a missing file fails loudly (a ``FileNotFoundError``) instead of hiding as a skip.
``tests/data/README.md`` says what each folder is, where it comes from and what was cut.
"""

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
NTREX = DATA / "ntrex128"  # NTREX-128 newstest2019: English source + 27 reference languages
XQUAD = DATA / "xquad"  # XQuAD, 12 languages (SQuAD v1.1 JSON)
MQM_TED = DATA / "mqm-ted"  # WMT21 TED human MQM judgments, en-de and zh-en
SPEC = DATA / "spec"  # verbatim excerpts of the project's specification that tests check code against
