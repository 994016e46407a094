//! Property: any records written with any supported options read back identically.

use proptest::prelude::*;
use shapeshift_records::{Reader, Writer};

fn options() -> impl Strategy<Value = String> {
    let compression = prop_oneof![
        Just("uncompressed".to_string()),
        (1..8i32).prop_map(|level| format!("zstd:{level}")),
        (0..7i32).prop_map(|level| format!("brotli:{level}")),
        Just("snappy".to_string()),
    ];
    (1..20u64, compression)
        .prop_map(|(group_size, compression)| format!("group_size:{group_size},{compression}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn written_records_read_back(
        records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..60),
        options in options(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, &options).unwrap();
        for record in &records {
            writer.write(record).unwrap();
        }
        writer.close().unwrap();
        let reader = Reader::open(&path).unwrap();
        prop_assert_eq!(reader.num_records(), records.len() as u64);
        prop_assert_eq!(reader.read_all().unwrap().to_vecs(), records.clone());
        for (index, record) in records.iter().enumerate() {
            prop_assert_eq!(&reader.read(index as u64).unwrap(), record);
        }
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_signature_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..70_000)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.array_record");
        let mut writer = Writer::create(&path, "group_size:1,uncompressed").unwrap();
        writer.close().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(64);
        bytes.extend_from_slice(&tail);
        std::fs::write(&path, &bytes).unwrap();
        if let Ok(reader) = Reader::open(&path) {
            let _ = reader.read_all();
        }
    }
}
