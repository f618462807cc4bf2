"""Contests run by a community as sovereign hosting (issue 25): a contest root folder whose whole state is
the hash-chained audit log of its own ``sovereign.governance.Governance`` (``contest.*`` events).

``manifest.py`` creates a contest (deterministic dev/secret split, the secret half sealed under consent);
``state.py`` is the one reader of its state (``contest_state``) and the public ``ContestView``;
``entries.py``/``model_bundle.py`` take, qualify and execute entries; ``ranking.py`` ranks executed entries
(significance clusters, competition numbering); ``lifecycle.py`` closes and exports a contest.
"""
