//! Ad-hoc throughput figures (not a test of speed: it prints, asserts only correctness).
//! Run: `cargo test --release -p shapeshift-formats --test formats skiff_bench:: -- --ignored --nocapture`

use std::time::Instant;

use shapeshift_formats::skiff::{Codec, MappingOptions, SystemFields};
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Value, ValueRef};

/// BM1's table: 1000 non-optional numeric columns cycling through every integer width and double.
fn bm1_schema() -> TableSchema {
    let kinds = [
        P::Int8,
        P::Int16,
        P::Int32,
        P::Int64,
        P::Uint8,
        P::Uint16,
        P::Uint32,
        P::Uint64,
        P::Double,
    ];
    TableSchema::new(
        (0..1000)
            .map(|i| ColumnSchema::new(format!("c{i}"), kinds[i % kinds.len()].into()))
            .collect(),
    )
}

fn bm1_value(primitive: P, seed: u64) -> Value {
    let zero = seed.is_multiple_of(7);
    let v = if zero { 0 } else { seed % 100 + 1 };
    match primitive {
        P::Double => Value::Double(v as f64),
        P::Uint8 | P::Uint16 | P::Uint32 | P::Uint64 => Value::Uint64(v),
        _ => Value::Int64(v as i64),
    }
}

fn is_zero(value: ValueRef<'_>) -> bool {
    match value {
        ValueRef::Int64(v) => v == 0,
        ValueRef::Uint64(v) => v == 0,
        ValueRef::Double(v) => v == 0.0,
        _ => false,
    }
}

/// CPU time this thread has run, from /proc/thread-self/schedstat (ns); the machine is shared,
/// so wall time alone would mostly measure the other tenants.
fn thread_cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Best wall time and best CPU time over `runs` runs, and the last result.
fn best_of<F: FnMut() -> u64>(runs: usize, mut f: F) -> (f64, f64, u64) {
    let mut best_wall = f64::MAX;
    let mut best_cpu = f64::MAX;
    let mut result = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let cpu_start = thread_cpu_seconds();
        result = f();
        best_wall = best_wall.min(start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu_start, thread_cpu_seconds()) {
            best_cpu = best_cpu.min(b - a);
        }
    }
    (best_wall, best_cpu, result)
}

#[test]
#[ignore = "throughput figures; run with --ignored --nocapture in release"]
fn bm1_read_every_field() {
    let schema = bm1_schema();
    let codec = Codec::for_table_schemas(std::slice::from_ref(&schema), &MappingOptions::default())
        .unwrap();
    let rows = 20_000u64;
    let mut bytes = Vec::new();
    let mut expected_zeros = 0u64;
    let mut values = Vec::with_capacity(1000);
    for r in 0..rows {
        values.clear();
        for (c, column) in schema.columns.iter().enumerate() {
            let shapeshift_types::Type::Primitive(p) = column.ty else {
                unreachable!()
            };
            let value = bm1_value(p, r * 1000 + c as u64);
            if matches!(value, Value::Int64(0) | Value::Uint64(0)) || value == Value::Double(0.0) {
                expected_zeros += 1;
            }
            values.push(value);
        }
        codec
            .encode_row(0, &values, &SystemFields::default(), &mut bytes)
            .unwrap();
    }
    let mb = bytes.len() as f64 / 1e6;
    println!(
        "BM1: {rows} rows x 1000 columns, {mb:.1} MB, row size {}",
        bytes.len() as u64 / rows
    );

    let (t, cpu, zeros) = best_of(5, || {
        let mut reader = codec.reader(&bytes);
        let mut zeros = 0u64;
        while let Some(row) = reader.next_row().unwrap() {
            for field in row.fields() {
                if let Some(v) = field.as_value_ref() {
                    zeros += is_zero(v) as u64;
                }
            }
        }
        zeros
    });
    assert_eq!(zeros, expected_zeros);
    println!(
        "  SliceReader + RowView::fields + as_value_ref: {:.0} MB/s wall, {:.0} MB/s cpu ({:.2} ns/field cpu)",
        mb / t,
        mb / cpu,
        cpu * 1e9 / (rows as f64 * 1000.0)
    );

    let (t, cpu, zeros) = best_of(5, || {
        let mut reader = codec.reader(&bytes);
        let mut zeros = 0u64;
        while let Some(row) = reader.next_row().unwrap() {
            for column in 0..row.len() {
                zeros += row.value_ref(column).is_some_and(is_zero) as u64;
            }
        }
        zeros
    });
    assert_eq!(zeros, expected_zeros);
    println!(
        "  SliceReader + RowView::value_ref(i):          {:.0} MB/s wall, {:.0} MB/s cpu",
        mb / t,
        mb / cpu
    );

    let (t, cpu, zeros) = best_of(5, || {
        let mut reader = codec.reader(&bytes);
        let mut zeros = 0u64;
        while let Some(row) = reader.next_row().unwrap() {
            row.for_each_value(|_, v| zeros += is_zero(v) as u64);
        }
        zeros
    });
    assert_eq!(zeros, expected_zeros);
    println!(
        "  SliceReader + RowView::for_each_value:        {:.0} MB/s wall, {:.0} MB/s cpu",
        mb / t,
        mb / cpu
    );

    let (t, cpu, zeros) = best_of(3, || {
        let mut reader = codec.stream_reader(&bytes[..]);
        let mut zeros = 0u64;
        while let Some(row) = reader.next_row().unwrap() {
            row.for_each_value(|_, v| zeros += is_zero(v) as u64);
        }
        zeros
    });
    assert_eq!(zeros, expected_zeros);
    println!(
        "  StreamReader + RowView::for_each_value:       {:.0} MB/s wall, {:.0} MB/s cpu",
        mb / t,
        mb / cpu
    );

    let (t, cpu, count) = best_of(3, || {
        let mut reader = codec.reader(&bytes);
        let mut n = 0u64;
        while let Some(row) = reader.next_row().unwrap() {
            n += row.to_values().unwrap().len() as u64;
        }
        n
    });
    assert_eq!(count, rows * 1000);
    println!(
        "  SliceReader + RowView::to_values (owned):     {:.0} MB/s wall, {:.0} MB/s cpu",
        mb / t,
        mb / cpu
    );

    let decoded = codec.decode_rows(&bytes).unwrap();
    let (t, cpu, size) = best_of(3, || {
        let mut out = Vec::with_capacity(bytes.len());
        for row in &decoded {
            codec
                .encode_row(0, &row.values, &row.system, &mut out)
                .unwrap();
        }
        out.len() as u64
    });
    assert_eq!(size, bytes.len() as u64);
    println!(
        "  Codec::encode_row from &[Value]:              {:.0} MB/s wall, {:.0} MB/s cpu",
        mb / t,
        mb / cpu
    );
}

#[test]
#[ignore = "throughput figures; run with --ignored --nocapture in release"]
fn bm2_strings() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", P::Uint32.into()),
        ColumnSchema::new("data", P::String.into()),
    ]);
    let codec = Codec::for_table_schemas(std::slice::from_ref(&schema), &MappingOptions::default())
        .unwrap();
    let rows = 1_000_000u64;
    let mut bytes = Vec::new();
    let mut total = 0u64;
    for r in 0..rows {
        let data = vec![b'x'; (r % 200) as usize];
        total += data.len() as u64;
        codec
            .encode_row(
                0,
                &[Value::Uint64(r % 1000), Value::String(data)],
                &SystemFields::default(),
                &mut bytes,
            )
            .unwrap();
    }
    let mb = bytes.len() as f64 / 1e6;
    let (t, cpu, sum) = best_of(5, || {
        let mut reader = codec.reader(&bytes);
        let mut sum = 0u64;
        while let Some(row) = reader.next_row().unwrap() {
            if let Some(ValueRef::String(s)) = row.value_ref(1) {
                sum += s.len() as u64;
            }
        }
        sum
    });
    assert_eq!(sum, total);
    println!(
        "BM2: {rows} rows, {mb:.1} MB: SliceReader + value_ref {:.0} MB/s wall, {:.0} MB/s cpu, {:.1} M rows/s cpu",
        mb / t,
        mb / cpu,
        rows as f64 / cpu / 1e6
    );
}

/// BM3's shape: 10 columns of numbers and strings; increment one int column and write the row.
#[test]
#[ignore = "throughput figures; run with --ignored --nocapture in release"]
fn bm3_patch_and_bm4_append() {
    let schema = TableSchema::new(vec![
        ColumnSchema::new("id", P::Int64.into()),
        ColumnSchema::new("count", P::Uint32.into()),
        ColumnSchema::new("score", P::Double.into()),
        ColumnSchema::new("name", P::String.into()),
        ColumnSchema::new("n", P::Int32.into()),
        ColumnSchema::new("city", P::String.into()),
        ColumnSchema::new("flag", P::Bool.into()),
        ColumnSchema::new("big", P::Uint64.into()),
        ColumnSchema::new("ratio", P::Double.into()),
        ColumnSchema::new("note", P::String.into()),
    ]);
    let codec = Codec::for_table_schemas(std::slice::from_ref(&schema), &MappingOptions::default())
        .unwrap();
    let mut added = schema.clone();
    added
        .columns
        .push(ColumnSchema::new("added", P::Int64.into()));
    let extended = Codec::for_table_schemas(&[added], &MappingOptions::default()).unwrap();
    let added_plan = extended.table(0).unwrap().column_plan(10).clone();
    let rows = 500_000u64;
    let mut bytes = Vec::new();
    for r in 0..rows {
        let values = [
            Value::Int64(r as i64),
            Value::Uint64(r % 1000),
            Value::Double(r as f64 / 3.0),
            Value::String(format!("name-{r}").into_bytes()),
            Value::Int64((r % 50_000) as i64),
            Value::String(b"Amsterdam".to_vec()),
            Value::Bool(r % 2 == 0),
            Value::Uint64(r * 7),
            Value::Double(0.5),
            Value::String(vec![b'n'; (r % 40) as usize]),
        ];
        codec
            .encode_row(0, &values, &SystemFields::default(), &mut bytes)
            .unwrap();
    }
    let mb = bytes.len() as f64 / 1e6;
    let table = codec.table(0).unwrap();
    println!("BM3: {rows} rows x 10 columns, {mb:.1} MB");

    let (t, cpu, size) = best_of(3, || {
        let mut reader = codec.reader(&bytes);
        let mut writer = codec.writer(Vec::with_capacity(bytes.len()));
        let mut buffer = shapeshift_formats::skiff::RowBuffer::default();
        while let Some(row) = reader.next_row().unwrap() {
            let Some(ValueRef::Int64(n)) = row.value_ref(4) else {
                unreachable!()
            };
            row.copy_into(&mut buffer);
            buffer.patch(table, 4, &Value::Int64(n + 1)).unwrap();
            writer.write_raw(buffer.as_bytes()).unwrap();
        }
        writer.finish().unwrap().len() as u64
    });
    assert_eq!(size, bytes.len() as u64);
    println!("  increment via RowView::copy_into + RowBuffer::patch + write_raw: {:.0} MB/s wall, {:.0} MB/s cpu", mb / t, mb / cpu);

    let (t, cpu, size) = best_of(3, || {
        let mut reader = codec.reader(&bytes);
        let mut writer = codec.writer(Vec::with_capacity(bytes.len()));
        while let Some(row) = reader.next_row().unwrap() {
            let mut values = row.to_values().unwrap();
            if let Value::Int64(n) = &mut values[4] {
                *n += 1;
            }
            writer
                .write_row(0, &values, &SystemFields::default())
                .unwrap();
        }
        writer.finish().unwrap().len() as u64
    });
    assert_eq!(size, bytes.len() as u64);
    println!("  increment via to_values + write_row (owned):                 {:.0} MB/s wall, {:.0} MB/s cpu", mb / t, mb / cpu);

    let (t, cpu, size) = best_of(3, || {
        let mut reader = codec.reader(&bytes);
        let mut writer = extended.writer(Vec::with_capacity(bytes.len() * 2));
        let mut buffer = shapeshift_formats::skiff::RowBuffer::default();
        while let Some(row) = reader.next_row().unwrap() {
            row.copy_into(&mut buffer);
            buffer.append(&added_plan, &Value::Int64(1)).unwrap();
            writer.write_raw(buffer.as_bytes()).unwrap();
        }
        writer.finish().unwrap().len() as u64
    });
    assert_eq!(size, bytes.len() as u64 + rows * 8);
    println!("BM4: append a column via copy_into + RowBuffer::append + write_raw: {:.0} MB/s wall, {:.0} MB/s cpu", mb / t, mb / cpu);
}
