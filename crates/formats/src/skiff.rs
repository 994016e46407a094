//! Skiff, YTsaurus 's schema-driven binary row format.
