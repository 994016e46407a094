//! `mesh`: triangles. A triangle is a row of `v0`, `v1`, `v2`, `normal`, each a struct of
//! three floats.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use shapeshift_types::{TableSchema, Value};

use super::{float, records_of, schema_of, take, TableRows};

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

/// The benchmark's record count.
pub const TRIANGLE_COUNT: usize = 125_000;

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
        let triangles = records_of(rows, "triangle", |[v0, v1, v2, normal]| {
            Ok(Triangle {
                v0: vector_of(v0)?,
                v1: vector_of(v1)?,
                v2: vector_of(v2)?,
                normal: vector_of(normal)?,
            })
        })?;
        Ok(Mesh { triangles })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_keeps_the_benchmarks_ranges() {
        assert_eq!(mesh(100, 7), mesh(100, 7));
        assert_ne!(mesh(100, 7), mesh(100, 8));
        for t in &mesh(1000, 1).triangles {
            for v in [t.v0, t.v1, t.v2, t.normal] {
                assert!([v.x, v.y, v.z].iter().all(|c| (0.0..1.0).contains(c)));
            }
        }
    }
}
