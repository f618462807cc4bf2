"""Web accounts: users and roles, argon2 passwords, server-side sessions, invitations, the sign-in rate
limit. No web framework here (``mt_eval.web.auth`` binds this to requests and cookies).

Roles: ``admin`` (campaigns, invitations, accounts) and ``reviewer`` (rates the items of the campaigns
they are assigned to). Public viewers need no account. Nothing secret is stored in clear: passwords
as argon2id hashes, session ids and invitation tokens as SHA-256.
"""

from __future__ import annotations

ROLES = ("admin", "reviewer")
