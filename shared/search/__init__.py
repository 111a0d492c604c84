"""Search in Russian and English: words, stems, the query language, ranking, snippets (docs/architecture.md s.3,
search).

Engine-free: the store engines (``shared/stores/*/search.py``) compile what is
defined here. Modules: ``analysis`` (words, folding, stems, languages),
``stopwords``, ``query`` (the search box's language), ``ranking`` (BM25 ×
freshness), ``kinds`` (news / article / product), ``request`` (filters, cursor
pages, hits), ``snippets`` (whole-word highlights, the best passage).
"""
