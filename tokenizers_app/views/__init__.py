"""The dashboard's pages, one module per workflow: leaderboard, corpora, runs, versions, compare.

Every view parses its input, calls one service or one QuerySet method, and renders; no metric is
computed in a request. A page that updates itself (a run's progress) answers htmx requests with
its fragment from the same URL.
"""
