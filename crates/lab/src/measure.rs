//! What the native benchmarks share: timing runs and a checksum that makes every read touch
//! every value (so no decoder work can be skipped or optimized away).

use std::hint::black_box;
use std::time::Instant;

use shapeshift_formats::skiff::FieldRef;
use shapeshift_types::{Value, ValueRef};

/// Seconds of `repeat` runs of `operation`, after one warm-up run.
pub fn measure<T>(
    repeat: usize,
    mut operation: impl FnMut() -> Result<T, String>,
) -> Result<Vec<f64>, String> {
    black_box(operation()?);
    let mut samples = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let start = Instant::now();
        black_box(operation()?);
        samples.push(start.elapsed().as_secs_f64());
    }
    Ok(samples)
}

/// Seconds of `repeat` runs each of `a` and `b`, alternating (`a`, `b`, `a`, `b`, ...) after
/// one warm-up run of each: an A/B comparison on a shared machine, where load changes
/// between runs would bias two series timed one after the other.
pub fn measure_pair<T, U>(
    repeat: usize,
    mut a: impl FnMut() -> Result<T, String>,
    mut b: impl FnMut() -> Result<U, String>,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    black_box(a()?);
    black_box(b()?);
    let (mut a_samples, mut b_samples) = (Vec::with_capacity(repeat), Vec::with_capacity(repeat));
    for _ in 0..repeat {
        let start = Instant::now();
        black_box(a()?);
        a_samples.push(start.elapsed().as_secs_f64());
        let start = Instant::now();
        black_box(b()?);
        b_samples.push(start.elapsed().as_secs_f64());
    }
    Ok((a_samples, b_samples))
}

/// What reading touches: every scalar and string, and a count of composite values (binary
/// YSON through the interface, owned trees through the own APIs: both are fully decoded,
/// and both sides count the same values, so the checksums must agree).
#[derive(Default)]
pub struct Touch {
    zeros: u64,
    sum: u64,
    string_bytes: u64,
    composites: u64,
}

impl Touch {
    #[inline(always)]
    pub fn value(&mut self, value: ValueRef<'_>) {
        match value {
            ValueRef::Int64(v) => {
                self.zeros += (v == 0) as u64;
                self.sum = self.sum.wrapping_add(v as u64);
            }
            ValueRef::Uint64(v) => {
                self.zeros += (v == 0) as u64;
                self.sum = self.sum.wrapping_add(v);
            }
            ValueRef::Double(v) => {
                self.zeros += (v == 0.0) as u64;
                self.sum = self.sum.wrapping_add(v.to_bits());
            }
            ValueRef::Bool(b) => self.sum += b as u64,
            ValueRef::String(s) => self.string_bytes += s.len() as u64,
            ValueRef::Any(_) | ValueRef::Composite(_) => self.composites += 1,
            ValueRef::Null => {}
        }
    }

    /// An owned value, as `value` counts its borrowed form.
    #[inline(always)]
    pub fn owned(&mut self, value: &Value) {
        match value {
            Value::Null => {}
            Value::Bool(v) => self.value(ValueRef::Bool(*v)),
            Value::Int64(v) => self.value(ValueRef::Int64(*v)),
            Value::Uint64(v) => self.value(ValueRef::Uint64(*v)),
            Value::Double(v) => self.value(ValueRef::Double(*v)),
            Value::String(s) => self.value(ValueRef::String(s)),
            _ => self.composites += 1,
        }
    }

    /// A Skiff field, composites walked in place down to their scalars.
    pub fn field(&mut self, field: FieldRef<'_>) {
        match field {
            FieldRef::Value(value) => self.value(value),
            FieldRef::Lazy(lazy) => {
                for child in lazy.tuple_fields() {
                    self.field(child);
                }
                if let Some((_, child)) = lazy.variant() {
                    self.field(child);
                }
                for (_, item) in lazy.repeated() {
                    self.field(item);
                }
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.zeros ^ self.sum ^ self.string_bytes ^ self.composites.rotate_left(32)
    }
}
