//! Writes `OUT_DIR/bm1_zeros.rs`: BM1's zero count over the 1000 fields of the prost message
//! `shapeshift_formats::protobuf::messages::Bm1Row` (a generated message has no field
//! iterator; the static Protobuf job reads each field by name, as user code would).

use std::fmt::Write as _;
use std::path::PathBuf;

/// Column `i` of BM1 has the type at `i % 10` of int8..int64, uint8..uint64, float, double;
/// the message declares float and double `optional`.
const OPTIONAL_FLOATS: [usize; 2] = [8, 9];
const BM1_COLUMNS: usize = 1000;

fn main() {
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut code = String::from(
        "/// Zero fields of a BM1 row message.\n\
         #[allow(clippy::all)]\n\
         pub(crate) fn bm1_zeros(row: &shapeshift_formats::protobuf::messages::Bm1Row) -> u64 {\n\
         \x20   let mut zeros = 0u64;\n",
    );
    for i in 0..BM1_COLUMNS {
        if OPTIONAL_FLOATS.contains(&(i % 10)) {
            writeln!(
                code,
                "    zeros += (row.c{i}.unwrap_or(0.0) == 0.0) as u64;"
            )
            .unwrap();
        } else {
            writeln!(code, "    zeros += (row.c{i} == 0) as u64;").unwrap();
        }
    }
    code.push_str("    zeros\n}\n");
    std::fs::write(out_dir.join("bm1_zeros.rs"), code).expect("write bm1_zeros.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
