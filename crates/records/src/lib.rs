//! shapeshift's records layer: ArrayRecord-compatible record files.
