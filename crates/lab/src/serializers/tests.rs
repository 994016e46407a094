//! The study's checks: every contender carries every value, media.1's sizes are
//! jvm-serializers' published ones for every encoder of its schemas (the crates' and ours),
//! and our messages are the crates' bytes.

use shapeshift_formats::registry::FormatKind;

use super::contender::{check_round_trip, compressed_sizes, Contender, Trials};
use super::*;

fn media1() -> MediaContent {
    media::values(&["media.1".to_string()]).unwrap().remove(0).1
}

fn encode(c: &impl Contender, value: &MediaContent) -> Vec<u8> {
    check_round_trip(c, value).unwrap()
}

fn sizes(bytes: &[u8]) -> (usize, usize) {
    (bytes.len(), compressed_sizes(bytes).unwrap().0)
}

/// The message after YT's u32 LE length (our framed Protobuf and Thrift rows).
fn framed_message(data: &[u8]) -> &[u8] {
    let len = u32::from_le_bytes(data[..4].try_into().unwrap()) as usize;
    &data[4..4 + len]
}

#[test]
fn media1_sizes_are_the_published_ones_for_the_crates() {
    let value = media1();
    assert_eq!(sizes(&encode(&peer_prost::Prost, &value)), (239, 149));
    let binary = peer_thrift::ThriftCrate { compact: false };
    assert_eq!(sizes(&encode(&binary, &value)), (349, 197));
    let compact = peer_thrift::ThriftCrate { compact: true };
    assert_eq!(sizes(&encode(&compact, &value)), (240, 148));
    let avro = peer_avro::ApacheAvro::new().unwrap();
    assert_eq!(sizes(&encode(&avro, &value)), (221, 133));
}

#[test]
fn our_messages_are_the_crates_bytes_and_sizes() {
    let value = media1();
    let schema = media::table_schema(false);
    let codecs = ours::RowCodec::all(&schema).unwrap();
    let codec = |name: &str| &codecs.iter().find(|(n, _)| *n == name).unwrap().1;
    let thrift_binary = encode(&peer_thrift::ThriftCrate { compact: false }, &value);
    let thrift_compact = encode(&peer_thrift::ThriftCrate { compact: true }, &value);
    let avro = encode(&peer_avro::ApacheAvro::new().unwrap(), &value);
    assert_eq!(encode(codec("thrift"), &value), thrift_binary);
    assert_eq!(encode(codec("thrift-compact"), &value), thrift_compact);
    assert_eq!(encode(codec("avro"), &value), avro);
    // Our Protobuf is proto3-like: the zero enums (JAVA, SMALL) are left out ...
    assert_eq!(encode(codec("protobuf-dynamic"), &value).len(), 235);
    // ... and with media.proto's required enums (optional<int32>) it is prost's message.
    let proto2 = ours::RowCodec::all(&media::table_schema(true)).unwrap();
    let prost = encode(&peer_prost::Prost, &value);
    let proto2_codec = &proto2
        .iter()
        .find(|(n, _)| *n == "protobuf-dynamic")
        .unwrap()
        .1;
    assert_eq!(encode(proto2_codec, &value), prost);

    // Through the interface: the same messages inside YT's framing.
    let interface = |kind, proto2_enums| ours::Interface {
        kind,
        schema: media::table_schema(proto2_enums),
    };
    let framed = encode(&interface(FormatKind::Thrift, false), &value);
    assert_eq!(framed_message(&framed), thrift_binary);
    let framed = encode(&interface(FormatKind::ThriftCompact, false), &value);
    assert_eq!(framed_message(&framed), thrift_compact);
    let framed = encode(&interface(FormatKind::ProtobufDynamic, true), &value);
    assert_eq!(framed_message(&framed), prost);
    assert_eq!(sizes(framed_message(&framed)), (239, 149));
    // Our Avro container holds apache-avro's datum.
    let container = encode(&interface(FormatKind::Avro, false), &value);
    assert!(container.windows(avro.len()).any(|w| w == avro));
}

#[test]
fn every_contender_round_trips_every_value() {
    let report = run(
        &[],
        &[],
        Trials {
            trials: 2,
            iterations: 3,
            trial_budget_s: 1e-4,
        },
        2,
        0.01,
        |_| {},
    )
    .unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.results.len(), report.contenders.len() * 4);
    for name in [
        "ours json",
        "ours thrift codec",
        "serde_json",
        "sonic-rs",
        "rmp-serde",
        "ciborium",
        "prost",
        "apache-avro",
        "thrift binary",
        "thrift compact",
        "bitcode",
    ] {
        assert!(report.contenders.iter().any(|c| c.name == name), "{name}");
    }
    for r in &report.results {
        let row = &r.row;
        for column in [
            &row.create,
            &row.ser,
            &row.same,
            &row.deser,
            &row.shal,
            &row.deep,
        ] {
            assert_eq!(column.trials_ns.len(), 2, "{r:?}");
            assert!(column.min_ns > 0.0 && column.iterations >= 1, "{r:?}");
        }
        assert_eq!(row.total.min_ns, row.ser.min_ns + row.deep.min_ns);
        assert!(row.size > 0 && row.deflate > 0 && row.zstd > 0, "{r:?}");
    }
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["results"][0]["+deep"]["trials_ns"].is_array());
    assert!(json["results"][0]["+dfl"].is_u64());
}

#[test]
fn a_cut_message_is_an_error_for_every_contender() {
    let value = media1();
    for (info, runner) in contenders().unwrap() {
        let bytes = runner.round_trip(&value).unwrap();
        // (Not the last byte: a YSON or JSON row stream may end in an optional separator.)
        for cut in [1, bytes.len() / 3, bytes.len() / 2, bytes.len() * 2 / 3] {
            let decoded = runner.decode(&bytes[..cut]);
            assert!(decoded.is_err(), "{} cut at {cut}: {decoded:?}", info.name);
        }
    }
}

#[test]
fn every_dataset_is_measured_for_our_formats_and_the_crates() {
    let report = run(
        &rsb_bench::DATASETS.map(String::from),
        &[],
        Trials {
            trials: 2,
            iterations: 1,
            trial_budget_s: 0.0,
        },
        2,
        0.005,
        |_| {},
    )
    .unwrap();
    assert!(report.results.is_empty());
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    for dataset in rsb_bench::DATASETS {
        let names: Vec<&str> = report
            .datasets
            .iter()
            .filter(|d| d.dataset == dataset)
            .map(|d| d.contender.as_str())
            .collect();
        for name in [
            "ours yson",
            "ours arrow",
            "ours skiff",
            "ours avro",
            "ours protobuf-dynamic codec",
            "ours thrift codec",
            "ours msgpack serde",
            "ours cbor serde",
            "serde_json",
            "sonic-rs",
            "rmp-serde",
            "ciborium",
            "apache-avro",
            "prost",
            "thrift binary",
            "thrift compact",
            "bitcode",
        ] {
            assert!(names.contains(&name), "{dataset}: {name} in {names:?}");
        }
    }
    for d in &report.datasets {
        assert_eq!(d.serialize.trials_ns.len(), 2);
        assert!(
            d.size > 0 && d.zlib > 0 && d.zstd > 0 && d.deserialize.min_ns > 0.0,
            "{d:?}"
        );
    }
}

#[test]
fn the_rebuilt_datasets_have_the_benchmarks_published_sizes() {
    use rsb_bench::{BitcodeCrate, DataCodec, SerdeCrate};
    use rsb_prost::ProstCrate;

    /// Within `percent` of rust_serialization_benchmark's published sizes (its README's
    /// tables: bitcode, serde_json, rmp-serde, prost): other random draws, the same schemas,
    /// counts and ranges.
    fn check<T>(data: &T, published: [usize; 4], percent: f64)
    where
        BitcodeCrate: DataCodec<T>,
        SerdeCrate: DataCodec<T>,
        ProstCrate: DataCodec<T>,
    {
        let codecs: [&dyn DataCodec<T>; 4] = [
            &BitcodeCrate::default(),
            &SerdeCrate::SerdeJson,
            &SerdeCrate::RmpSerde,
            &ProstCrate,
        ];
        for (codec, published) in codecs.into_iter().zip(published) {
            let mut bytes = Vec::new();
            codec.serialize(data, &mut bytes).unwrap();
            let size = bytes.len() as f64;
            let off = (size / published as f64 - 1.0).abs() * 100.0;
            assert!(off < percent, "{size} bytes, published {published}");
        }
    }
    check(
        &rsb_data::logs(rsb_data::LOG_COUNT, 42),
        [703_710, 1_827_461, 784_997, 884_628],
        0.5,
    );
    check(
        &rsb_data::mesh(rsb_data::TRIANGLE_COUNT, 42),
        [6_000_006, 26_192_883, 8_125_006, 8_750_000],
        0.1,
    );
    check(
        &rsb_data::players(rsb_data::PLAYER_COUNT, 42),
        [327_688, 1_623_191, 424_533, 596_811],
        3.0,
    );
    check(
        &rsb_data::updates(rsb_data::UPDATE_COUNT, 42),
        [971_318, 9_390_461, 1_745_322, 1_859_886],
        3.0,
    );
}

#[test]
fn interleaved_trials_rotate_through_every_operation() {
    use std::cell::RefCell;

    use super::contender::{interleave, timed};

    let log = RefCell::new(Vec::new());
    let trials = Trials {
        trials: 3,
        iterations: 1,
        trial_budget_s: 1.0,
    };
    let mut ops: Vec<_> = (0..3)
        .map(|id| {
            let log = &log;
            timed(trials, move || {
                log.borrow_mut().push(id);
                Ok(())
            })
            .unwrap()
        })
        .collect();
    // Calibration: two calls and one warm-up trial of one iteration each, per operation.
    assert_eq!(*log.borrow(), [0, 0, 0, 1, 1, 1, 2, 2, 2]);
    log.borrow_mut().clear();
    let columns = interleave(3, &mut ops).unwrap();
    assert_eq!(
        *log.borrow(),
        [0, 1, 2, 1, 2, 0, 2, 0, 1],
        "a round starts one further along"
    );
    assert!(columns
        .iter()
        .all(|c| c.trials_ns.len() == 3 && c.iterations == 1));
    assert!(columns
        .iter()
        .all(|c| c.min_ns == c.trials_ns.iter().copied().fold(f64::INFINITY, f64::min)));
    // An operation's error ends the timing with it.
    let mut failing = vec![timed(trials, || Ok(())).unwrap()];
    let mut calls = 0;
    failing.push(
        timed(trials, move || {
            calls += 1;
            if calls > 3 {
                Err("broke".to_string())
            } else {
                Ok(())
            }
        })
        .unwrap(),
    );
    assert_eq!(interleave(2, &mut failing).unwrap_err(), "broke");
}
