//! Datasets of rust_serialization_benchmark (github djkoloski/rust_serialization_benchmark,
//! `src/datasets/`), rebuilt by our own seeded generator with the same schemas, counts and
//! value ranges: `log` (10,000 HTTP access logs) and `mesh` (125,000 triangles).
//!
//! Each dataset is typed Rust structs (what the crates serialize) and a YT table with one row
//! per record (what our formats write): a log is a row of `address` (struct of four uint8),
//! `identity`, `userid`, `date`, `request` (utf8), `code` (uint16) and `size` (uint64); a
//! triangle is a row of `v0`, `v1`, `v2`, `normal`, each a struct of three floats.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shapeshift_types::{TableSchema, Value};

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Address {
    pub x0: u8,
    pub x1: u8,
    pub x2: u8,
    pub x3: u8,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Log {
    pub address: Address,
    pub identity: String,
    pub userid: String,
    pub date: String,
    pub request: String,
    pub code: u16,
    pub size: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Logs {
    pub logs: Vec<Log>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Vector3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode,
)]
pub struct Triangle {
    pub v0: Vector3,
    pub v1: Vector3,
    pub v2: Vector3,
    pub normal: Vector3,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, bitcode::Encode, bitcode::Decode)]
pub struct Mesh {
    pub triangles: Vec<Triangle>,
}

/// The benchmark's record counts.
pub const LOG_COUNT: usize = 10_000;
pub const TRIANGLE_COUNT: usize = 125_000;

const USERIDS: [&str; 9] = [
    "-", "alice", "bob", "carmen", "david", "eric", "frank", "george", "harry",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const METHODS: [&str; 5] = ["GET", "POST", "PUT", "UPDATE", "DELETE"];
const ROUTES: [&str; 7] = [
    "/favicon.ico",
    "/css/index.css",
    "/css/font-awsome.min.css",
    "/img/logo-full.svg",
    "/img/splash.jpg",
    "/api/login",
    "/api/logout",
];
const PROTOCOLS: [&str; 4] = ["HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3"];

/// HTTP status codes the benchmark draws from: the registered ones from 100 to 511.
fn status_codes() -> Vec<u16> {
    let mut codes: Vec<u16> = (100..=103).chain(200..=208).collect();
    codes.push(226);
    codes.extend(300..=308);
    codes.extend(400..=418);
    codes.extend(421..=426);
    codes.extend([428, 429, 431, 451]);
    codes.extend(500..=508);
    codes.extend([510, 511]);
    codes
}

/// `count` access logs from `seed`: random IPv4 addresses, a user from a fixed list, a date
/// between 1970 and 2021 with a whole-hour time zone, a request line of method, route and
/// protocol, a registered status code and a size below 100,000,000.
pub fn logs(count: usize, seed: u64) -> Logs {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let codes = status_codes();
    let logs = (0..count)
        .map(|_| {
            let address = Address {
                x0: rng.random_range(0..=255),
                x1: rng.random_range(0..=255),
                x2: rng.random_range(0..=255),
                x3: rng.random_range(0..=255),
            };
            let zone: i32 = rng.random_range(-12..=12);
            let date = format!(
                "{}/{}/{}:{}:{}:{} {}{:02}00",
                rng.random_range(1..=28),
                MONTHS[rng.random_range(0..MONTHS.len())],
                rng.random_range(1970..=2021),
                rng.random_range(0..24),
                rng.random_range(0..60),
                rng.random_range(0..60),
                if zone < 0 { '-' } else { '+' },
                zone.abs(),
            );
            let request = format!(
                "{} {} {}",
                METHODS[rng.random_range(0..METHODS.len())],
                ROUTES[rng.random_range(0..ROUTES.len())],
                PROTOCOLS[rng.random_range(0..PROTOCOLS.len())],
            );
            Log {
                address,
                identity: "-".into(),
                userid: USERIDS[rng.random_range(0..USERIDS.len())].into(),
                date,
                request,
                code: codes[rng.random_range(0..codes.len())],
                size: rng.random_range(0..100_000_000),
            }
        })
        .collect();
    Logs { logs }
}

/// `count` triangles from `seed`, every coordinate uniform in [0, 1).
pub fn mesh(count: usize, seed: u64) -> Mesh {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut vector = || Vector3 {
        x: rng.random::<f32>(),
        y: rng.random::<f32>(),
        z: rng.random::<f32>(),
    };
    Mesh {
        triangles: (0..count)
            .map(|_| Triangle {
                v0: vector(),
                v1: vector(),
                v2: vector(),
                normal: vector(),
            })
            .collect(),
    }
}

/// A dataset as rows of a YT table: the forward and reverse steps of our formats.
pub trait TableRows: Sized {
    fn schema() -> TableSchema;
    /// Calls `row` with each record's row, in order.
    fn for_each_row(&self, row: impl FnMut(Vec<Value>) -> Result<(), String>)
        -> Result<(), String>;
    fn from_rows(rows: impl Iterator<Item = Result<Vec<Value>, String>>) -> Result<Self, String>;
}

fn schema_of(text: &str) -> TableSchema {
    let node = shapeshift_formats::yson::from_slice(text.as_bytes()).expect("the schema parses");
    TableSchema::from_node(&node).expect("the schema is valid")
}

fn take<const N: usize>(value: Value, what: &str) -> Result<[Value; N], String> {
    match value {
        Value::Tuple(items) => items
            .try_into()
            .map_err(|items: Vec<Value>| format!("{what}: {} members, expected {N}", items.len())),
        other => Err(format!("{what}: expected a struct, found {other:?}")),
    }
}

fn row_of<const N: usize>(row: Vec<Value>, what: &str) -> Result<[Value; N], String> {
    take(Value::Tuple(row), what)
}

fn unsigned(value: Value) -> Result<u64, String> {
    match value {
        Value::Uint64(v) => Ok(v),
        other => Err(format!("expected an unsigned integer, found {other:?}")),
    }
}

fn narrow<T: TryFrom<u64>>(value: Value) -> Result<T, String> {
    let v = unsigned(value)?;
    T::try_from(v).map_err(|_| format!("{v} out of range"))
}

fn text(value: Value) -> Result<String, String> {
    match value {
        Value::String(bytes) => String::from_utf8(bytes).map_err(|e| e.to_string()),
        other => Err(format!("expected a string, found {other:?}")),
    }
}

fn float(value: Value) -> Result<f32, String> {
    match value {
        // A float column holds the f32 exactly as a double.
        Value::Double(v) => Ok(v as f32),
        other => Err(format!("expected a float, found {other:?}")),
    }
}

fn string(s: &str) -> Value {
    Value::String(s.as_bytes().to_vec())
}

impl TableRows for Logs {
    fn schema() -> TableSchema {
        schema_of(
            "[{name=address; type_v3={type_name=struct; members=[\
               {name=x0; type=uint8}; {name=x1; type=uint8}; {name=x2; type=uint8}; {name=x3; type=uint8}]}};\
             {name=identity; type_v3=utf8}; {name=userid; type_v3=utf8}; {name=date; type_v3=utf8};\
             {name=request; type_v3=utf8}; {name=code; type_v3=uint16}; {name=size; type_v3=uint64}]",
        )
    }

    fn for_each_row(
        &self,
        mut row: impl FnMut(Vec<Value>) -> Result<(), String>,
    ) -> Result<(), String> {
        for log in &self.logs {
            let a = log.address;
            row(vec![
                Value::Tuple(
                    [a.x0, a.x1, a.x2, a.x3]
                        .map(|x| Value::Uint64(x.into()))
                        .to_vec(),
                ),
                string(&log.identity),
                string(&log.userid),
                string(&log.date),
                string(&log.request),
                Value::Uint64(log.code.into()),
                Value::Uint64(log.size),
            ])?;
        }
        Ok(())
    }

    fn from_rows(rows: impl Iterator<Item = Result<Vec<Value>, String>>) -> Result<Logs, String> {
        let logs = rows
            .map(|row| {
                let [address, identity, userid, date, request, code, size] = row_of(row?, "log")?;
                let [x0, x1, x2, x3] = take(address, "address")?;
                Ok(Log {
                    address: Address {
                        x0: narrow(x0)?,
                        x1: narrow(x1)?,
                        x2: narrow(x2)?,
                        x3: narrow(x3)?,
                    },
                    identity: text(identity)?,
                    userid: text(userid)?,
                    date: text(date)?,
                    request: text(request)?,
                    code: narrow(code)?,
                    size: unsigned(size)?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Logs { logs })
    }
}

fn vector_value(v: Vector3) -> Value {
    Value::Tuple(vec![
        Value::Double(v.x.into()),
        Value::Double(v.y.into()),
        Value::Double(v.z.into()),
    ])
}

fn vector_of(value: Value) -> Result<Vector3, String> {
    let [x, y, z] = take(value, "vector")?;
    Ok(Vector3 {
        x: float(x)?,
        y: float(y)?,
        z: float(z)?,
    })
}

impl TableRows for Mesh {
    fn schema() -> TableSchema {
        let vector = "{type_name=struct; members=[{name=x; type=float}; {name=y; type=float}; {name=z; type=float}]}";
        schema_of(&format!(
            "[{{name=v0; type_v3={vector}}}; {{name=v1; type_v3={vector}}}; \
              {{name=v2; type_v3={vector}}}; {{name=normal; type_v3={vector}}}]"
        ))
    }

    fn for_each_row(
        &self,
        mut row: impl FnMut(Vec<Value>) -> Result<(), String>,
    ) -> Result<(), String> {
        for t in &self.triangles {
            row(vec![
                vector_value(t.v0),
                vector_value(t.v1),
                vector_value(t.v2),
                vector_value(t.normal),
            ])?;
        }
        Ok(())
    }

    fn from_rows(rows: impl Iterator<Item = Result<Vec<Value>, String>>) -> Result<Mesh, String> {
        let triangles = rows
            .map(|row| {
                let [v0, v1, v2, normal] = row_of(row?, "triangle")?;
                Ok(Triangle {
                    v0: vector_of(v0)?,
                    v1: vector_of(v1)?,
                    v2: vector_of(v2)?,
                    normal: vector_of(normal)?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Mesh { triangles })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_keeps_the_benchmarks_ranges() {
        assert_eq!(logs(200, 7), logs(200, 7));
        assert_ne!(logs(200, 7), logs(200, 8));
        assert_eq!(mesh(100, 7), mesh(100, 7));
        assert_eq!(status_codes().len(), 63);
        for log in &logs(2000, 1).logs {
            assert!(
                (100..=511).contains(&log.code) && log.size < 100_000_000,
                "{log:?}"
            );
            assert!(USERIDS.contains(&log.userid.as_str()) && log.identity == "-");
            let (_, zone) = log.date.split_once(' ').unwrap();
            assert_eq!(zone.len(), 5, "{}", log.date);
            assert_eq!(log.request.split(' ').count(), 3);
        }
        for t in &mesh(1000, 1).triangles {
            for v in [t.v0, t.v1, t.v2, t.normal] {
                assert!([v.x, v.y, v.z].iter().all(|c| (0.0..1.0).contains(c)));
            }
        }
    }

    #[test]
    fn rows_round_trip_and_match_their_schema() {
        fn check<T: TableRows + PartialEq + std::fmt::Debug>(data: &T) {
            let schema = T::schema();
            let mut rows = Vec::new();
            data.for_each_row(|row| {
                for (v, c) in row.iter().zip(&schema.columns) {
                    shapeshift_types::check_value(v, &c.ty).map_err(|e| e.to_string())?;
                }
                rows.push(row);
                Ok(())
            })
            .unwrap();
            assert_eq!(&T::from_rows(rows.into_iter().map(Ok)).unwrap(), data);
        }
        check(&logs(300, 3));
        check(&mesh(300, 3));
    }
}
