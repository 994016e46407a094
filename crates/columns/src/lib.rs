//! shapeshift's columns layer: adaptive per-block encodings for numeric columns.
