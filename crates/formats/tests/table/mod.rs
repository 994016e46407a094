//! The row interface across every format: round trips, corruption, other columns, blocks.

mod blocks;
mod corruption;
mod other_columns;
mod roundtrip;
