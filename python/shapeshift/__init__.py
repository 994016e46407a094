"""shapeshift: choose and use data formats well.

Submodules: ``shapeshift.yson``, ``shapeshift.skiff``, ``shapeshift.records``,
``shapeshift.columns``, ``shapeshift.formats`` and the lab, ``shapeshift.lab``;
``shapeshift.sql`` runs SQL over files in any of those formats (``shapeshift.query``).
"""

from shapeshift import _native  # noqa: F401  (fails loudly if the extension is missing)

from shapeshift.query import sql  # noqa: E402,F401

__version__ = "0.1.0"
