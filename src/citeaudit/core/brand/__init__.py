"""Brand figures (pure): competitor citation share, mentions beside citations, official pages retrieved but not
cited, entity confusion and version drift.

:mod:`~citeaudit.core.brand.results` holds what the figures report, :mod:`~citeaudit.core.brand.figures` computes
them from an audit, and :mod:`~citeaudit.core.brand.columns` computes the same figures from columns read from a
database.
"""
