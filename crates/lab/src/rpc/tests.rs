//! The server and load generator over real sockets on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use shapeshift_formats::registry::FormatKind;

use super::framing::{read_frame, write_frame};
use super::load::{self, LoadConfig, OurProtocol, Target, Workload};
use super::messages::*;
use super::server::{RunningServer, ServerConfig};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

async fn call(stream: &mut TcpStream, codec: &MessageCodec, request: &Request) -> Response {
    write_frame(stream, &codec.encode_request(request).unwrap())
        .await
        .unwrap();
    let bytes = read_frame(stream, 1 << 20)
        .await
        .unwrap()
        .expect("a response");
    codec.decode_response(bytes).unwrap()
}

/// Reads until the server closes the connection (bounded by a timeout).
async fn assert_closed(stream: &mut TcpStream) {
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the server kept the connection open"
    );
}

/// The server still serves: a get of `key` on a new connection is answered with OK.
async fn assert_serves_a_new_connection(
    addr: std::net::SocketAddr,
    codec: &MessageCodec,
    key: i64,
) {
    let mut other = TcpStream::connect(addr).await.unwrap();
    let request = Request {
        op: OP_GET,
        key,
        value: None,
    };
    assert_eq!(call(&mut other, codec, &request).await.result, RESULT_OK);
}

#[test]
fn get_and_put_round_trip_through_a_server_in_every_format() {
    for format in STUDY_FORMATS {
        for kind in ValueKind::ALL {
            let server = RunningServer::start(ServerConfig::new(format, kind), 0).unwrap();
            let codec = MessageCodec::new(format, kind).unwrap();
            runtime().block_on(async {
                let mut stream = TcpStream::connect(server.addr).await.unwrap();
                let got = call(
                    &mut stream,
                    &codec,
                    &Request {
                        op: OP_GET,
                        key: 5,
                        value: None,
                    },
                )
                .await;
                assert_eq!(
                    got,
                    Response {
                        result: RESULT_OK,
                        value: Some(kind.initial_item(5))
                    },
                    "{format}"
                );
                let new_value = kind.initial_item(42);
                let put = Request {
                    op: OP_PUT,
                    key: 5,
                    value: Some(new_value.clone()),
                };
                assert_eq!(
                    call(&mut stream, &codec, &put).await.result,
                    RESULT_OK,
                    "{format}"
                );
                let got = call(
                    &mut stream,
                    &codec,
                    &Request {
                        op: OP_GET,
                        key: 5,
                        value: None,
                    },
                )
                .await;
                assert_eq!(
                    got.value,
                    Some(new_value),
                    "{format}: the put was not stored"
                );
                let missing = call(
                    &mut stream,
                    &codec,
                    &Request {
                        op: OP_GET,
                        key: 100,
                        value: None,
                    },
                )
                .await;
                assert_eq!(missing.result, RESULT_NOT_FOUND, "{format}");
                let requests = call(
                    &mut stream,
                    &codec,
                    &Request {
                        op: OP_REQUESTS,
                        key: 0,
                        value: None,
                    },
                )
                .await;
                assert_eq!(requests.result, 4, "{format}: requests before this one");
            });
            server.stop();
        }
    }
}

#[test]
fn garbage_payloads_are_bad_requests_and_the_connection_goes_on() {
    let server =
        RunningServer::start(ServerConfig::new(FormatKind::Msgpack, ValueKind::Tiny), 0).unwrap();
    let codec = MessageCodec::new(FormatKind::Msgpack, ValueKind::Tiny).unwrap();
    runtime().block_on(async {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        for garbage in [&b""[..], b"\xc1\xc1\xc1", b"\x93\x01", &[0xffu8; 64]] {
            write_frame(&mut stream, garbage).await.unwrap();
            let response = codec
                .decode_response(read_frame(&mut stream, 1 << 20).await.unwrap().unwrap())
                .unwrap();
            assert_eq!(response.result, RESULT_BAD_REQUEST, "{garbage:?}");
        }
        // A well-formed message that is not a request: a put without a value, an unknown op.
        for request in [
            Request {
                op: OP_PUT,
                key: 1,
                value: None,
            },
            Request {
                op: 77,
                key: 1,
                value: None,
            },
        ] {
            assert_eq!(
                call(&mut stream, &codec, &request).await.result,
                RESULT_BAD_REQUEST
            );
        }
        let got = call(
            &mut stream,
            &codec,
            &Request {
                op: OP_GET,
                key: 1,
                value: None,
            },
        )
        .await;
        assert_eq!(got.result, RESULT_OK);
    });
}

#[test]
fn an_oversized_frame_is_answered_and_the_connection_closed() {
    let mut config = ServerConfig::new(FormatKind::Cbor, ValueKind::Tiny);
    config.max_frame = 64;
    let server = RunningServer::start(config, 0).unwrap();
    let codec = MessageCodec::new(FormatKind::Cbor, ValueKind::Tiny).unwrap();
    runtime().block_on(async {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        // Announces 4 GiB - 1 and sends a few bytes: the server must not wait for or allocate it.
        stream
            .write_all(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3])
            .await
            .unwrap();
        let response = codec
            .decode_response(read_frame(&mut stream, 1 << 20).await.unwrap().unwrap())
            .unwrap();
        assert_eq!(response.result, RESULT_FRAME_TOO_LARGE);
        assert_closed(&mut stream).await;
        // The server itself goes on.
        assert_serves_a_new_connection(server.addr, &codec, 3).await;
    });
}

#[test]
fn a_truncated_frame_closes_only_its_connection() {
    let server =
        RunningServer::start(ServerConfig::new(FormatKind::Json, ValueKind::Tiny), 0).unwrap();
    let codec = MessageCodec::new(FormatKind::Json, ValueKind::Tiny).unwrap();
    runtime().block_on(async {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        stream.write_all(&[0, 0, 0, 50, b'{']).await.unwrap();
        stream.shutdown().await.unwrap();
        assert_closed(&mut stream).await;
        assert_serves_a_new_connection(server.addr, &codec, 0).await;
    });
}

#[test]
fn connections_over_the_bound_are_refused_with_busy() {
    let mut config = ServerConfig::new(FormatKind::Protobuf, ValueKind::Tiny);
    config.max_connections = 2;
    let server = RunningServer::start(config, 0).unwrap();
    let codec = MessageCodec::new(FormatKind::Protobuf, ValueKind::Tiny).unwrap();
    runtime().block_on(async {
        let get = Request {
            op: OP_GET,
            key: 0,
            value: None,
        };
        let mut first = TcpStream::connect(server.addr).await.unwrap();
        let mut second = TcpStream::connect(server.addr).await.unwrap();
        assert_eq!(call(&mut first, &codec, &get).await.result, RESULT_OK);
        assert_eq!(call(&mut second, &codec, &get).await.result, RESULT_OK);
        let mut third = TcpStream::connect(server.addr).await.unwrap();
        let response = codec
            .decode_response(read_frame(&mut third, 1 << 20).await.unwrap().unwrap())
            .unwrap();
        assert_eq!(response.result, RESULT_BUSY);
        assert_closed(&mut third).await;
        // A slot freed is a slot taken again (once the server has seen the close).
        drop(first);
        let mut served = false;
        for _ in 0..100 {
            let mut stream = TcpStream::connect(server.addr).await.unwrap();
            // Only a refused connection has a frame waiting before it asks anything.
            let waiting =
                tokio::time::timeout(Duration::from_millis(50), read_frame(&mut stream, 1 << 20))
                    .await;
            if waiting.is_err() {
                assert_eq!(call(&mut stream, &codec, &get).await.result, RESULT_OK);
                served = true;
                break;
            }
        }
        assert!(served, "the freed slot was never taken again");
    });
}

#[test]
fn the_load_generator_measures_a_bounded_run() {
    let server =
        RunningServer::start(ServerConfig::new(FormatKind::Msgpack, ValueKind::Media), 0).unwrap();
    let codec = MessageCodec::new(FormatKind::Msgpack, ValueKind::Media).unwrap();
    let protocol = Arc::new(OurProtocol::new(codec.clone(), ValueKind::Media));
    let target = Target {
        addr: server.addr,
        pid: std::process::id(),
        stats: Some(&codec),
    };
    for workload in Workload::ALL {
        let config = LoadConfig {
            workload,
            clients: 4,
            max_requests: 400,
            max_duration: Duration::from_secs(20),
            warmup_per_client: 5,
            seed: 1,
        };
        let result = runtime()
            .block_on(load::run(&target, protocol.clone(), &config))
            .unwrap();
        assert_eq!(result.requests, 400, "{workload:?}");
        assert!(result.p50_us > 0.0 && result.p50_us <= result.p99_us);
        assert!(
            result.bytes_per_request > 100.0,
            "a MediaContent read or write carries the value"
        );
        assert!(result.server_cpu_ns_per_request > 0.0);
        let share = result.codec_wall_share.unwrap();
        assert!(share > 0.0, "{share}");
    }
}

/// A short run against a peer: 3 clients, 60 requests.
fn peer_run(workload: Workload) -> LoadConfig {
    LoadConfig {
        workload,
        clients: 3,
        max_requests: 60,
        max_duration: Duration::from_secs(20),
        warmup_per_client: 2,
        seed: 3,
    }
}

#[test]
fn the_thrift_peer_serves_gets_and_puts_in_both_protocols() {
    use super::thrift_peer::{start_server, ThriftProtocol, ThriftWire};
    for wire in [ThriftWire::Binary, ThriftWire::Compact] {
        let addr = start_server(wire, 8).unwrap();
        for kind in ValueKind::ALL {
            let protocol = Arc::new(ThriftProtocol::new(wire, kind));
            let target = Target {
                addr,
                pid: std::process::id(),
                stats: None,
            };
            for workload in Workload::ALL {
                let config = peer_run(workload);
                let result = runtime()
                    .block_on(load::run(&target, protocol.clone(), &config))
                    .unwrap();
                assert_eq!(result.requests, 60, "{wire:?} {kind:?} {workload:?}");
                assert!(result.codec_wall_share.is_none());
            }
            // A key outside the store is the service's NotFound, which the check reports.
            use super::load::WireProtocol;
            let request = protocol.get(100);
            let response = runtime().block_on(async {
                let mut stream = TcpStream::connect(addr).await.unwrap();
                write_frame(&mut stream, &request).await.unwrap();
                read_frame(&mut stream, 1 << 20).await.unwrap().unwrap()
            });
            let err = protocol.check(response, false).unwrap_err();
            assert!(err.contains("NotFound"), "{err}");
        }
    }
}

#[test]
fn the_grpc_peer_serves_gets_and_puts_and_counts_its_bytes() {
    use super::grpc_peer::{GrpcCaller, GrpcServer};
    use super::load::Caller;
    let server = GrpcServer::start(2).unwrap();
    let target = Target {
        addr: server.addr,
        pid: std::process::id(),
        stats: None,
    };
    let runtime = runtime();
    for kind in ValueKind::ALL {
        for workload in Workload::ALL {
            let config = peer_run(workload);
            let result = runtime
                .block_on(load::run_with(
                    &target,
                    || GrpcCaller::connect(server.addr, kind),
                    &config,
                ))
                .unwrap();
            assert_eq!(result.requests, 60, "{kind:?} {workload:?}");
            // HTTP/2 frames around a message: more bytes than the message, both ways.
            assert!(result.request_bytes > 9.0 && result.response_bytes > 9.0);
        }
    }
    // A MediaContent read carries the value back; a tiny one does not.
    runtime.block_on(async {
        let mut tiny = GrpcCaller::connect(server.addr, ValueKind::Tiny)
            .await
            .unwrap();
        let mut media = GrpcCaller::connect(server.addr, ValueKind::Media)
            .await
            .unwrap();
        tiny.call(5, false).await.unwrap();
        media.call(5, false).await.unwrap();
        let (tiny_bytes, media_bytes) = (tiny.wire_bytes().1, media.wire_bytes().1);
        assert!(media_bytes > tiny_bytes + 150, "{tiny_bytes} {media_bytes}");
        // A key outside the store is the service's NOT_FOUND, which the call reports.
        let err = tiny.call(100, false).await.unwrap_err();
        assert!(err.contains("NotFound"), "{err}");
        let err = media.call(-1, true).await.unwrap_err();
        assert!(err.contains("NotFound"), "{err}");
    });
    server.stop();
}
