"""The pure core: the vocabulary, the rules and the arithmetic, with no I/O.

Nothing here opens a file, a database, a socket or a terminal; the store, the services and the interfaces
build on it. The layer contracts in ``pyproject.toml`` enforce this for every module in this package.
"""
