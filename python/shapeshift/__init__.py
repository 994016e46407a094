"""shapeshift: choose and use data formats well.

Submodules: ``shapeshift.yson``, ``shapeshift.skiff``, ``shapeshift.records``,
``shapeshift.columns``, ``shapeshift.formats``, the lab, ``shapeshift.lab``,
``shapeshift.sql`` (SQL over files in any of those formats, ``shapeshift.query``) and
``shapeshift.advise(path_or_table)``: which format suits the user's own data.
"""

from shapeshift import _native  # noqa: F401  (fails loudly if the extension is missing)

from shapeshift.query import Session, sql  # noqa: E402,F401

__version__ = "0.1.0"


def advise(path_or_table, budget: float = 60.0, access: str = "random", schema=None, **options):
    """Measures every format choice on the user's table and recommends per use: see
    :func:`shapeshift.advisor.advise` (imported on first call: it needs pyarrow)."""
    from shapeshift.advisor import advise as run

    return run(path_or_table, budget=budget, access=access, schema=schema, **options)
