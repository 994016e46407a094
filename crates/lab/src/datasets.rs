//! Seeded, deterministic generators for the format study's tables (REFERENCE.md §1).
//!
//! | id  | schema                                                                 |
//! |-----|------------------------------------------------------------------------|
//! | BM1 | 1000 numeric columns cycling int8..int64, uint8..uint64, float, double |
//! | BM2 | `{id: uint32, data: string}`                                           |
//! | BM3 | 10 columns of numbers and strings (also BM4's and BM6's input)         |
//! | BM5 | `optional<string>`, `list<double>`, `struct<foo:int32,bar:string>`, `dict<int64,string>` |
//!
//! The same seed gives the same rows on every machine; `Cardinality::Low` draws every column
//! from a small pool of values (the study's low-cardinality remark).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shapeshift_types::{ColumnSchema, Member, PrimitiveType, TableSchema, Type, Value};

/// Which of the study's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dataset {
    Bm1,
    Bm2,
    Bm3,
    Bm5,
}

/// How many distinct values columns draw from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cardinality {
    High,
    /// At most 16 distinct values per column.
    Low,
}

/// The number of columns of BM1.
pub const BM1_COLUMNS: usize = 1000;

const BM1_CYCLE: [PrimitiveType; 10] = [
    PrimitiveType::Int8,
    PrimitiveType::Int16,
    PrimitiveType::Int32,
    PrimitiveType::Int64,
    PrimitiveType::Uint8,
    PrimitiveType::Uint16,
    PrimitiveType::Uint32,
    PrimitiveType::Uint64,
    PrimitiveType::Float,
    PrimitiveType::Double,
];

impl Dataset {
    pub const ALL: [Dataset; 4] = [Dataset::Bm1, Dataset::Bm2, Dataset::Bm3, Dataset::Bm5];

    pub fn name(self) -> &'static str {
        match self {
            Dataset::Bm1 => "BM1",
            Dataset::Bm2 => "BM2",
            Dataset::Bm3 => "BM3",
            Dataset::Bm5 => "BM5",
        }
    }

    pub fn from_name(name: &str) -> Option<Dataset> {
        Dataset::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    /// The table schema (strict, no sort order).
    pub fn schema(self) -> TableSchema {
        let p = Type::Primitive;
        let columns = match self {
            Dataset::Bm1 => (0..BM1_COLUMNS)
                .map(|i| ColumnSchema::new(format!("c{i}"), p(BM1_CYCLE[i % BM1_CYCLE.len()])))
                .collect(),
            Dataset::Bm2 => vec![
                ColumnSchema::new("id", p(PrimitiveType::Uint32)),
                ColumnSchema::new("data", p(PrimitiveType::String)),
            ],
            Dataset::Bm3 => vec![
                ColumnSchema::new("id", p(PrimitiveType::Int64)),
                ColumnSchema::new("counter", p(PrimitiveType::Int64)),
                ColumnSchema::new("user", p(PrimitiveType::String)),
                ColumnSchema::new("score", p(PrimitiveType::Double)),
                ColumnSchema::new("active", p(PrimitiveType::Bool)),
                ColumnSchema::new("country", p(PrimitiveType::String)),
                ColumnSchema::new("created", p(PrimitiveType::Timestamp)),
                ColumnSchema::new("code", p(PrimitiveType::Int32)),
                ColumnSchema::new("ratio", p(PrimitiveType::Float)),
                ColumnSchema::new("comment", p(PrimitiveType::Utf8)),
            ],
            Dataset::Bm5 => vec![
                ColumnSchema::new("maybe", Type::optional(p(PrimitiveType::String))),
                ColumnSchema::new("values", Type::list(p(PrimitiveType::Double))),
                ColumnSchema::new(
                    "pair",
                    Type::Struct(vec![
                        Member::new("foo", p(PrimitiveType::Int32)),
                        Member::new("bar", p(PrimitiveType::String)),
                    ]),
                ),
                ColumnSchema::new(
                    "dict",
                    Type::dict(p(PrimitiveType::Int64), p(PrimitiveType::String)),
                ),
            ],
        };
        TableSchema::new(columns)
    }

    /// `rows` rows of this table from `seed`.
    pub fn rows(self, rows: usize, seed: u64, cardinality: Cardinality) -> Vec<Vec<Value>> {
        let mut generator = RowGenerator::new(self, seed, cardinality);
        (0..rows).map(|_| generator.next_row()).collect()
    }
}

/// BM6's row: the BM3 schema filled with fixed data (the study's write-only scenario builds
/// this row again and again and writes it).
pub fn bm6_fixed_row() -> Vec<Value> {
    vec![
        Value::Int64(1_234_567),
        Value::Int64(42),
        Value::String(b"user314159".to_vec()),
        Value::Double(2.625),
        Value::Bool(true),
        Value::String(b"DE".to_vec()),
        Value::Uint64(1_700_000_123_456_789),
        Value::Int64(-77_777),
        Value::Double(0.375),
        Value::String(b"lorem ipsum dolor sit amet consectetur".to_vec()),
    ]
}

/// Generates the rows of one dataset, one at a time.
pub struct RowGenerator {
    dataset: Dataset,
    schema: TableSchema,
    rng: ChaCha8Rng,
    cardinality: Cardinality,
    row_index: u64,
}

const WORDS: [&str; 16] = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "magna",
];

impl RowGenerator {
    pub fn new(dataset: Dataset, seed: u64, cardinality: Cardinality) -> RowGenerator {
        RowGenerator {
            dataset,
            schema: dataset.schema(),
            rng: ChaCha8Rng::seed_from_u64(
                seed ^ (dataset as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            cardinality,
            row_index: 0,
        }
    }

    pub fn next_row(&mut self) -> Vec<Value> {
        let row = match self.dataset {
            Dataset::Bm1 => (0..self.schema.columns.len())
                .map(|i| self.bm1_value(BM1_CYCLE[i % BM1_CYCLE.len()]))
                .collect(),
            Dataset::Bm2 => {
                let length = self.rng.random_range(16..240);
                vec![
                    Value::Uint64(self.row_index % (u32::MAX as u64 + 1)),
                    Value::String(self.text(length)),
                ]
            }
            Dataset::Bm3 => self.bm3_row(),
            Dataset::Bm5 => self.bm5_row(),
        };
        self.row_index += 1;
        row
    }

    /// A draw in `0..n`, or in `0..min(n, 16)` for low-cardinality data.
    fn pick(&mut self, n: u64) -> u64 {
        match self.cardinality {
            Cardinality::High => self.rng.random_range(0..n),
            Cardinality::Low => self.rng.random_range(0..n.min(16)),
        }
    }

    fn bm1_value(&mut self, ty: PrimitiveType) -> Value {
        // A tenth of the values are zeros: BM1's map logic counts them.
        let zero = self.rng.random_ratio(1, 10);
        let signed = |bits: u32, this: &mut Self| -> Value {
            if zero {
                return Value::Int64(0);
            }
            let span = 1u64 << bits;
            Value::Int64(this.pick(span) as i64 - (span / 2) as i64)
        };
        let unsigned = |bits: u32, this: &mut Self| -> Value {
            if zero {
                return Value::Uint64(0);
            }
            let span = if bits == 64 { u64::MAX } else { 1u64 << bits };
            Value::Uint64(this.pick(span))
        };
        match ty {
            PrimitiveType::Int8 => signed(8, self),
            PrimitiveType::Int16 => signed(16, self),
            PrimitiveType::Int32 => signed(32, self),
            PrimitiveType::Int64 => signed(63, self),
            PrimitiveType::Uint8 => unsigned(8, self),
            PrimitiveType::Uint16 => unsigned(16, self),
            PrimitiveType::Uint32 => unsigned(32, self),
            PrimitiveType::Uint64 => unsigned(64, self),
            PrimitiveType::Float => {
                // Representable in f32 so that float columns round-trip exactly.
                let v = if zero {
                    0.0
                } else {
                    self.pick(1 << 20) as f32 / 64.0
                };
                Value::Double(v as f64)
            }
            _ => Value::Double(if zero {
                0.0
            } else {
                self.pick(1 << 40) as f64 / 1024.0 + 0.5
            }),
        }
    }

    fn text(&mut self, approximate_length: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(approximate_length + 12);
        while out.len() < approximate_length {
            if !out.is_empty() {
                out.push(b' ');
            }
            let word = WORDS[self.pick(WORDS.len() as u64) as usize];
            out.extend_from_slice(word.as_bytes());
        }
        out
    }

    fn bm3_row(&mut self) -> Vec<Value> {
        let user_id = self.pick(1_000_000);
        let comment_length = self.rng.random_range(8..64);
        vec![
            Value::Int64(self.row_index as i64),
            Value::Int64(self.pick(1 << 20) as i64),
            Value::String(format!("user{user_id}").into_bytes()),
            Value::Double(self.pick(1 << 30) as f64 / 1000.0),
            Value::Bool(self.rng.random_bool(0.5)),
            Value::String(
                ["RU", "US", "DE", "FR", "CN", "BR", "IN", "JP"][self.rng.random_range(0..8)]
                    .into(),
            ),
            Value::Uint64(1_700_000_000_000_000 + self.pick(1 << 40)),
            Value::Int64(self.pick(1 << 31) as i64 - (1 << 30)),
            Value::Double((self.pick(1 << 20) as f32 / 256.0) as f64),
            Value::String(self.text(comment_length)),
        ]
    }

    fn bm5_row(&mut self) -> Vec<Value> {
        let maybe = if self.rng.random_ratio(1, 4) {
            Value::Null
        } else {
            let length = self.rng.random_range(4..40);
            Value::String(self.text(length))
        };
        let list_length = self.rng.random_range(0..12);
        let values = (0..list_length)
            .map(|_| Value::Double(self.pick(1 << 24) as f64 / 16.0))
            .collect();
        let bar_length = self.rng.random_range(4..24);
        let pair = Value::Tuple(vec![
            Value::Int64(self.pick(1 << 31) as i64 - (1 << 30)),
            Value::String(self.text(bar_length)),
        ]);
        let dict_length = self.rng.random_range(0..6);
        let dict = (0..dict_length)
            .map(|_| {
                let key = Value::Int64(self.pick(1 << 40) as i64);
                let value_length = self.rng.random_range(2..16);
                (key, Value::String(self.text(value_length)))
            })
            .collect();
        vec![maybe, Value::List(values), pair, Value::Dict(dict)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_gives_same_rows_and_other_seed_differs() {
        for dataset in Dataset::ALL {
            let a = dataset.rows(50, 7, Cardinality::High);
            let b = dataset.rows(50, 7, Cardinality::High);
            let c = dataset.rows(50, 8, Cardinality::High);
            assert_eq!(a, b, "{}", dataset.name());
            assert_ne!(a, c, "{}", dataset.name());
        }
    }

    #[test]
    fn rows_have_one_value_per_column() {
        for dataset in Dataset::ALL {
            let columns = dataset.schema().columns.len();
            for row in dataset.rows(20, 1, Cardinality::High) {
                assert_eq!(row.len(), columns, "{}", dataset.name());
            }
        }
        assert_eq!(Dataset::Bm1.schema().columns.len(), BM1_COLUMNS);
    }

    #[test]
    fn narrow_integers_stay_in_range() {
        let schema = Dataset::Bm1.schema();
        for row in Dataset::Bm1.rows(30, 3, Cardinality::High) {
            for (value, column) in row.iter().zip(&schema.columns) {
                match (column.ty.clone(), value) {
                    (Type::Primitive(PrimitiveType::Int8), Value::Int64(v)) => {
                        assert!(i8::try_from(*v).is_ok())
                    }
                    (Type::Primitive(PrimitiveType::Uint16), Value::Uint64(v)) => {
                        assert!(u16::try_from(*v).is_ok())
                    }
                    (Type::Primitive(PrimitiveType::Float), Value::Double(v)) => {
                        assert_eq!(*v as f32 as f64, *v)
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn low_cardinality_limits_distinct_values() {
        let rows = Dataset::Bm1.rows(500, 5, Cardinality::Low);
        let mut distinct = std::collections::HashSet::new();
        for row in &rows {
            if let Value::Int64(v) = row[3] {
                distinct.insert(v);
            }
        }
        assert!(distinct.len() <= 17, "{} distinct", distinct.len()); // 16 draws + zero
    }
}
