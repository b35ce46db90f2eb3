"""Scoring what is at a path: an audit file, a database, Arrow tables or a Parquet folder, through the pure core.

``paths`` scores an audit file or a database (and reads its misattribution, agreement and scope), ``columnar``
hands Arrow tables or Parquet files to the vectorized core, and ``comparison`` compares two scored scopes paired per
question. The modules are imported by name; this package loads none of them.
"""
