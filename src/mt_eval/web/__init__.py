"""The web leaderboard (``mt-eval serve``): FastAPI, pages rendered on the server with Jinja2.

Every page reads fine without JavaScript; ``static/app.js`` only sorts tables, submits a filter
menu when it changes and narrows the entry table as one types. Every asset is served from here
(no CDN), charts are inline SVG drawn on the server, and each page has a JSON twin under
``/api/`` (``/openapi.json``). One router per area (``leaderboard``, ``runs``, ``compare``,
``datasets``), so further areas (reviews, accounts) are routers of their own added in
``app.create_app``. The queries are in ``mt_eval.store.pages``; nothing here computes a score.
"""
