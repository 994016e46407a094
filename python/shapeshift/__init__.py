"""shapeshift: choose and use data formats well.

Submodules: ``shapeshift.yson``, ``shapeshift.skiff``, ``shapeshift.records``,
``shapeshift.columns`` and the lab, ``shapeshift.lab``.
"""

from shapeshift import _native  # noqa: F401  (fails loudly if the extension is missing)

__version__ = "0.1.0"
