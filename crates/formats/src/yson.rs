//! YSON, YTsaurus 's data format: text, pretty and binary.
