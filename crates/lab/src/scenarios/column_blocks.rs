//! Column-ordered logic for row formats: rows transposed into blocks of typed columns.
//!
//! The variant `BM1-columnar` asks what the study's "Arrow on column-ordered input" means for
//! a job whose logic is written column by column (a vectorized kernel per column, as a
//! DataFusion/Polars/NumPy user function is), on the same BM1 input. Arrow hands such a job
//! its record batches as they are. A row format has to lay rows out as columns first: this
//! module is that transposition, the same code for every format (rows arrive as borrowed
//! [`ValueRef`]s from the common interface).
//!
//! Invariants:
//! - a block holds at most [`BLOCK_ROWS`] rows, the batch size of our Arrow writer, so both
//!   sides run their kernels over blocks of the same length;
//! - every column of a block has exactly as many slots as the block has rows; a null takes a
//!   slot (its bits are unused) and is marked in the column's validity, which exists only
//!   once the column has seen a null;
//! - a column's kind (integer or floating point) comes from the table schema and every value
//!   pushed must match it, so the zero kernel never guesses: an integer zero is all-zero bits,
//!   a floating-point zero is all-zero bits but the sign (`0.0` and `-0.0`; NaN is not zero).
//! - a row that fails [`ColumnBlock::push_row`] may have been pushed in part: the job stops on
//!   that error, so the block is never used again.

use shapeshift_formats::arrow::DEFAULT_BATCH_ROWS;
use shapeshift_types::{PrimitiveType, TableSchema, Type, ValueRef};

use super::ScenarioError;

/// Rows per block: the Arrow writer's batch size.
pub(crate) const BLOCK_ROWS: usize = DEFAULT_BATCH_ROWS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Integer,
    Float,
}

/// One column of a block: raw 64-bit patterns (two's complement integers, IEEE doubles).
struct Column {
    kind: Kind,
    bits: Vec<u64>,
    /// `Some` once a null was pushed: `true` where the slot holds a value.
    validity: Option<Vec<bool>>,
}

impl Column {
    fn zeros(&self) -> u64 {
        let is_zero = match self.kind {
            Kind::Integer => |bits: u64| bits == 0,
            Kind::Float => |bits: u64| bits << 1 == 0,
        };
        match &self.validity {
            None => self.bits.iter().filter(|b| is_zero(**b)).count() as u64,
            Some(valid) => self
                .bits
                .iter()
                .zip(valid)
                .filter(|(b, v)| **v && is_zero(**b))
                .count() as u64,
        }
    }
}

/// Rows transposed into typed columns, [`BLOCK_ROWS`] at a time.
pub(crate) struct ColumnBlock {
    columns: Vec<Column>,
    rows: usize,
}

impl ColumnBlock {
    /// An empty block for `schema`, whose columns must all be numeric (BM1's table).
    ///
    /// # Errors
    /// A column of a non-numeric type.
    pub(crate) fn for_numeric_table(schema: &TableSchema) -> Result<ColumnBlock, ScenarioError> {
        let columns = schema
            .columns
            .iter()
            .map(|column| {
                let kind = match &column.ty {
                    Type::Primitive(PrimitiveType::Float | PrimitiveType::Double) => Kind::Float,
                    Type::Primitive(
                        PrimitiveType::Int8
                        | PrimitiveType::Int16
                        | PrimitiveType::Int32
                        | PrimitiveType::Int64
                        | PrimitiveType::Uint8
                        | PrimitiveType::Uint16
                        | PrimitiveType::Uint32
                        | PrimitiveType::Uint64,
                    ) => Kind::Integer,
                    other => {
                        return Err(ScenarioError::new(format!(
                            "column {} of type {other:?} has no numeric column block",
                            column.name
                        )))
                    }
                };
                Ok(Column {
                    kind,
                    bits: Vec::with_capacity(BLOCK_ROWS),
                    validity: None,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(ColumnBlock { columns, rows: 0 })
    }

    pub(crate) fn is_full(&self) -> bool {
        self.rows >= BLOCK_ROWS
    }

    /// Appends one row, value `i` to column `i`. `row_number` only names the row in errors.
    ///
    /// # Errors
    /// A row of the wrong width, or a value whose kind does not match its column.
    pub(crate) fn push_row(
        &mut self,
        values: &[ValueRef<'_>],
        row_number: u64,
    ) -> Result<(), ScenarioError> {
        if values.len() != self.columns.len() {
            return Err(ScenarioError::new(format!(
                "row {row_number}: {} values for {} columns",
                values.len(),
                self.columns.len()
            )));
        }
        let rows_before = self.rows;
        for (index, (column, value)) in self.columns.iter_mut().zip(values).enumerate() {
            let bits = match (column.kind, value) {
                (Kind::Integer, ValueRef::Int64(v)) => *v as u64,
                (Kind::Integer, ValueRef::Uint64(v)) => *v,
                (Kind::Float, ValueRef::Double(v)) => v.to_bits(),
                (_, ValueRef::Null) => {
                    column
                        .validity
                        .get_or_insert_with(|| vec![true; rows_before])
                        .push(false);
                    column.bits.push(0);
                    continue;
                }
                (kind, other) => {
                    return Err(ScenarioError::new(format!(
                        "row {row_number}, column {index}: {other:?} in a {kind:?} column"
                    )))
                }
            };
            column.bits.push(bits);
            if let Some(valid) = &mut column.validity {
                valid.push(true);
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// The zero values of every column of the block (column by column), then empties it.
    pub(crate) fn drain_zeros(&mut self) -> u64 {
        let mut zeros = 0;
        for column in &mut self.columns {
            zeros += column.zeros();
            column.bits.clear();
            column.validity = None;
        }
        self.rows = 0;
        zeros
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shapeshift_types::ColumnSchema;

    fn schema() -> TableSchema {
        TableSchema::new(vec![
            ColumnSchema::new("i", Type::Primitive(PrimitiveType::Int32)),
            ColumnSchema::new("u", Type::Primitive(PrimitiveType::Uint64)),
            ColumnSchema::new("d", Type::Primitive(PrimitiveType::Double)),
        ])
    }

    #[test]
    fn counts_zeros_per_column_and_skips_nulls() {
        let mut block = ColumnBlock::for_numeric_table(&schema()).unwrap();
        let rows = [
            [
                ValueRef::Int64(0),
                ValueRef::Uint64(0),
                ValueRef::Double(-0.0),
            ],
            [
                ValueRef::Int64(-1),
                ValueRef::Null,
                ValueRef::Double(f64::NAN),
            ],
            [ValueRef::Null, ValueRef::Uint64(7), ValueRef::Double(0.0)],
        ];
        for (n, row) in rows.iter().enumerate() {
            block.push_row(row, n as u64).unwrap();
        }
        assert_eq!(block.drain_zeros(), 4);
        // Drained: the next block starts empty, without the old validity.
        block
            .push_row(
                &[
                    ValueRef::Int64(0),
                    ValueRef::Uint64(1),
                    ValueRef::Double(1.0),
                ],
                3,
            )
            .unwrap();
        assert_eq!(block.drain_zeros(), 1);
    }

    #[test]
    fn rejects_values_of_the_wrong_kind_and_rows_of_the_wrong_width() {
        let mut block = ColumnBlock::for_numeric_table(&schema()).unwrap();
        let error = block
            .push_row(
                &[
                    ValueRef::Double(0.0),
                    ValueRef::Uint64(0),
                    ValueRef::Double(0.0),
                ],
                9,
            )
            .unwrap_err();
        assert!(error.message.contains("row 9, column 0"), "{error}");
        let error = block.push_row(&[ValueRef::Int64(0)], 10).unwrap_err();
        assert!(
            error.message.contains("row 10: 1 values for 3 columns"),
            "{error}"
        );
    }

    /// Property, over seeded random tables: whatever the values, nulls and the points where
    /// blocks are drained, the block count equals the row-by-row count of BM1.
    #[test]
    fn block_counts_equal_row_counts_for_random_tables() {
        use rand::{RngExt, SeedableRng};
        let kinds = [
            PrimitiveType::Int8,
            PrimitiveType::Uint64,
            PrimitiveType::Float,
        ];
        for seed in 0..64u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let width = rng.random_range(1..6usize);
            let types: Vec<PrimitiveType> = (0..width)
                .map(|_| kinds[rng.random_range(0..3usize)])
                .collect();
            let schema = TableSchema::new(
                types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| ColumnSchema::new(format!("c{i}"), Type::Primitive(*t)))
                    .collect(),
            );
            let mut block = ColumnBlock::for_numeric_table(&schema).unwrap();
            let (mut by_blocks, mut by_rows) = (0u64, 0u64);
            for row_number in 0..rng.random_range(0..300u64) {
                let row: Vec<ValueRef<'static>> = types
                    .iter()
                    .map(|t| match (rng.random_range(0..8u8), t) {
                        (0, _) => ValueRef::Null,
                        (1..=3, PrimitiveType::Float) => {
                            ValueRef::Double(if rng.random() { 0.0 } else { -0.0 })
                        }
                        (_, PrimitiveType::Float) => {
                            ValueRef::Double(f64::from_bits(rng.random::<u64>()))
                        }
                        (1..=3, PrimitiveType::Int8) => ValueRef::Int64(0),
                        (_, PrimitiveType::Int8) => ValueRef::Int64(rng.random_range(-128..128)),
                        (1..=3, _) => ValueRef::Uint64(0),
                        _ => ValueRef::Uint64(rng.random()),
                    })
                    .collect();
                by_rows += row
                    .iter()
                    .filter(|v| super::super::is_zero_value(v))
                    .count() as u64;
                block.push_row(&row, row_number).unwrap();
                if block.is_full() || rng.random_range(0..50u8) == 0 {
                    by_blocks += block.drain_zeros();
                }
            }
            by_blocks += block.drain_zeros();
            assert_eq!(by_blocks, by_rows, "seed {seed}");
        }
    }

    #[test]
    fn refuses_non_numeric_tables() {
        let schema = TableSchema::new(vec![ColumnSchema::new(
            "s",
            Type::Primitive(PrimitiveType::String),
        )]);
        assert!(ColumnBlock::for_numeric_table(&schema).is_err());
    }
}
