//! The Apache Thrift peer: the same store behind Thrift's own threaded server (`TServer` of
//! the `thrift` crate, framed transport, binary or compact protocol), with the processor the
//! Apache Thrift compiler generated from `store.thrift` (`store.rs`, checked in).
//!
//! The load generator speaks to it with the same framing as to our server (Thrift's framed
//! transport is a 4-byte big-endian length and the payload): [`ThriftProtocol`] spells each
//! call as the generated client would (a call message of the method's argument struct) and
//! reads the reply with the generated types.
//!
//! One adjustment to the server's defaults, for a fair comparison: its transports read and
//! write through a buffer ([`BufferedFramedRead`], [`BufferedFramedWrite`]). Thrift's framed
//! write transport sends the 4-byte length and the payload as two writes; on a connection
//! without `TCP_NODELAY` (TServer sets none) Nagle's algorithm then holds the payload until
//! the client's delayed acknowledgement, some 40 ms per call, which would measure TCP
//! rather than Thrift.

use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use thrift::protocol::{
    TBinaryInputProtocol, TBinaryInputProtocolFactory, TBinaryOutputProtocol,
    TBinaryOutputProtocolFactory, TCompactInputProtocol, TCompactInputProtocolFactory,
    TCompactOutputProtocol, TCompactOutputProtocolFactory, TFieldIdentifier, TInputProtocol,
    TInputProtocolFactory, TMessageIdentifier, TMessageType, TOutputProtocol,
    TOutputProtocolFactory, TSerializable, TStructIdentifier, TType,
};
use thrift::server::TServer;
use thrift::transport::{
    TFramedReadTransport, TFramedWriteTransport, TReadTransport, TReadTransportFactory,
    TWriteTransport, TWriteTransportFactory,
};

use super::load::WireProtocol;
use super::messages::{tiny_value, ValueKind};
use super::peer_store::PeerStore;

#[allow(dead_code, clippy::all)]
mod store;

pub use store::{Image, Media, MediaContent};

/// Thrift's two protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThriftWire {
    Binary,
    Compact,
}

impl ThriftWire {
    /// The peer's name in the study's results.
    pub fn peer_name(self) -> &'static str {
        match self {
            ThriftWire::Binary => "thrift-server",
            ThriftWire::Compact => "thrift-server-compact",
        }
    }

    pub fn from_peer_name(name: &str) -> Option<ThriftWire> {
        [ThriftWire::Binary, ThriftWire::Compact]
            .into_iter()
            .find(|w| w.peer_name() == name)
    }
}

/// jvm-serializers' media.1 in the generated types.
pub fn media1() -> MediaContent {
    let image = |uri: &str, width, height, size| Image {
        uri: uri.into(),
        title: Some("Javaone Keynote".into()),
        width,
        height,
        size,
    };
    MediaContent {
        image: vec![
            image("http://javaone.com/keynote_large.jpg", 1024, 768, 1),
            image("http://javaone.com/keynote_small.jpg", 320, 240, 0),
        ],
        media: Media {
            uri: "http://javaone.com/keynote.mpg".into(),
            title: Some("Javaone Keynote".into()),
            width: 640,
            height: 480,
            format: "video/mpg4".into(),
            duration: 18_000_000,
            size: 58_982_400,
            bitrate: Some(262_144),
            person: vec!["Bill Gates".into(), "Steve Jobs".into()],
            player: 0,
            copyright: None,
        },
    }
}

/// The store, and a key outside it as the service's NotFound.
struct Handler(PeerStore<MediaContent>);

fn not_found(key: i32) -> thrift::Error {
    store::NotFound { key: Some(key) }.into()
}

impl store::StoreSyncHandler for Handler {
    fn handle_get_tiny(&self, key: i32) -> thrift::Result<Vec<u8>> {
        Ok(self
            .0
            .tiny(key)
            .ok_or_else(|| not_found(key))?
            .lock()
            .expect("store lock")
            .clone())
    }

    fn handle_put_tiny(&self, key: i32, value: Vec<u8>) -> thrift::Result<()> {
        *self
            .0
            .tiny(key)
            .ok_or_else(|| not_found(key))?
            .lock()
            .expect("store lock") = value;
        Ok(())
    }

    fn handle_get_media(&self, key: i32) -> thrift::Result<MediaContent> {
        Ok(self
            .0
            .media(key)
            .ok_or_else(|| not_found(key))?
            .lock()
            .expect("store lock")
            .clone())
    }

    fn handle_put_media(&self, key: i32, value: MediaContent) -> thrift::Result<()> {
        *self
            .0
            .media(key)
            .ok_or_else(|| not_found(key))?
            .lock()
            .expect("store lock") = value;
        Ok(())
    }
}

/// Thrift's framed read transport over a buffered channel.
pub struct BufferedFramedRead;

impl TReadTransportFactory for BufferedFramedRead {
    fn create(&self, channel: Box<dyn Read + Send>) -> Box<dyn TReadTransport + Send> {
        Box::new(TFramedReadTransport::new(BufReader::new(channel)))
    }
}

/// Thrift's framed write transport over a buffered channel: a frame leaves in one write.
pub struct BufferedFramedWrite;

impl TWriteTransportFactory for BufferedFramedWrite {
    fn create(&self, channel: Box<dyn Write + Send>) -> Box<dyn TWriteTransport + Send> {
        Box::new(TFramedWriteTransport::new(BufWriter::new(channel)))
    }
}

/// Starts Thrift's server on 127.0.0.1 in a background thread (it serves until the process
/// ends: `TServer::listen` does not return) and waits until it accepts connections.
/// `workers` bounds the connections served at once (TServer gives each its own thread).
///
/// # Errors
/// A message when no port is free or the server does not come up within five seconds.
pub fn start_server(wire: ThriftWire, workers: usize) -> Result<SocketAddr, String> {
    // TServer binds its own listener: find a free port first.
    let addr = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("free port: {e}"))?;
    let handler = Handler(PeerStore::new(media1));
    let processor = store::StoreSyncProcessor::new(handler);
    std::thread::Builder::new()
        .name("thrift-server".into())
        .spawn(move || {
            let result = match wire {
                ThriftWire::Binary => listen(
                    processor,
                    TBinaryInputProtocolFactory::new(),
                    TBinaryOutputProtocolFactory::new(),
                    addr,
                    workers,
                ),
                ThriftWire::Compact => listen(
                    processor,
                    TCompactInputProtocolFactory::new(),
                    TCompactOutputProtocolFactory::new(),
                    addr,
                    workers,
                ),
            };
            if let Err(e) = result {
                eprintln!("thrift server: {e}");
            }
        })
        .map_err(|e| format!("thrift server thread: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(addr).is_err() {
        if Instant::now() > deadline {
            return Err(format!("thrift server on {addr} did not come up"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(addr)
}

fn listen<IPF, OPF>(
    processor: store::StoreSyncProcessor<Handler>,
    input: IPF,
    output: OPF,
    addr: SocketAddr,
    workers: usize,
) -> thrift::Result<()>
where
    IPF: TInputProtocolFactory + Send + 'static,
    OPF: TOutputProtocolFactory + Send + 'static,
{
    let mut server = TServer::new(
        BufferedFramedRead,
        input,
        BufferedFramedWrite,
        output,
        processor,
        workers.max(1),
    );
    server.listen(addr)
}

/// The load generator's side of the Thrift peer: calls as the generated client writes them.
pub struct ThriftProtocol {
    wire: ThriftWire,
    kind: ValueKind,
    media: MediaContent,
}

impl ThriftProtocol {
    pub fn new(wire: ThriftWire, kind: ValueKind) -> ThriftProtocol {
        ThriftProtocol {
            wire,
            kind,
            media: media1(),
        }
    }

    fn method(&self, write: bool) -> &'static str {
        match (self.kind, write) {
            (ValueKind::Tiny, false) => "getTiny",
            (ValueKind::Tiny, true) => "putTiny",
            (ValueKind::Media, false) => "getMedia",
            (ValueKind::Media, true) => "putMedia",
        }
    }

    fn call(
        &self,
        write: bool,
        args: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>,
    ) -> Vec<u8> {
        let mut bytes = Vec::new();
        let method = self.method(write);
        let write_call = |o: &mut dyn TOutputProtocol| -> thrift::Result<()> {
            o.write_message_begin(&TMessageIdentifier::new(method, TMessageType::Call, 1))?;
            o.write_struct_begin(&TStructIdentifier::new(format!("{method}_args")))?;
            args(o)?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_message_end()
        };
        let written = match self.wire {
            ThriftWire::Binary => write_call(&mut TBinaryOutputProtocol::new(&mut bytes, true)),
            ThriftWire::Compact => write_call(&mut TCompactOutputProtocol::new(&mut bytes)),
        };
        written.expect("writing to memory does not fail");
        bytes
    }

    fn read_reply(&self, i: &mut dyn TInputProtocol, write: bool) -> thrift::Result<bool> {
        let message = i.read_message_begin()?;
        if message.message_type != TMessageType::Reply || message.name != self.method(write) {
            return Err(thrift::Error::Application(thrift::ApplicationError::new(
                thrift::ApplicationErrorKind::InvalidMessageType,
                format!("{:?} of {}", message.message_type, message.name),
            )));
        }
        i.read_struct_begin()?;
        let mut success = false;
        loop {
            let field = i.read_field_begin()?;
            match (field.field_type, field.id) {
                (TType::Stop, _) => break,
                (TType::String, Some(0)) if self.kind == ValueKind::Tiny => {
                    success = i.read_bytes()?.len() == 16
                }
                (TType::Struct, Some(0)) => {
                    success = !MediaContent::read_from_in_protocol(i)?.image.is_empty()
                }
                (TType::Struct, Some(1)) => {
                    return Err(store::NotFound::read_from_in_protocol(i)?.into());
                }
                (other, _) => i.skip(other)?,
            }
            i.read_field_end()?;
        }
        i.read_struct_end()?;
        i.read_message_end()?;
        Ok(success)
    }
}

impl WireProtocol for ThriftProtocol {
    fn get(&self, key: i64) -> Vec<u8> {
        self.call(false, |o| {
            o.write_field_begin(&TFieldIdentifier::new("key", TType::I32, 1))?;
            o.write_i32(key as i32)?;
            o.write_field_end()
        })
    }

    fn put(&self, key: i64) -> Vec<u8> {
        self.call(true, |o| {
            o.write_field_begin(&TFieldIdentifier::new("key", TType::I32, 1))?;
            o.write_i32(key as i32)?;
            o.write_field_end()?;
            match self.kind {
                ValueKind::Tiny => {
                    o.write_field_begin(&TFieldIdentifier::new("value", TType::String, 2))?;
                    o.write_bytes(&tiny_value(key))?;
                }
                ValueKind::Media => {
                    o.write_field_begin(&TFieldIdentifier::new("value", TType::Struct, 2))?;
                    self.media.write_to_out_protocol(o)?;
                }
            }
            o.write_field_end()
        })
    }

    fn check(&self, response: Vec<u8>, write: bool) -> Result<(), String> {
        let mut bytes = &response[..];
        let read = match self.wire {
            ThriftWire::Binary => {
                self.read_reply(&mut TBinaryInputProtocol::new(&mut bytes, true), write)
            }
            ThriftWire::Compact => {
                self.read_reply(&mut TCompactInputProtocol::new(&mut bytes), write)
            }
        };
        match read {
            Ok(success) if success != write => Ok(()),
            Ok(_) => Err(format!(
                "{} reply without the expected result",
                self.method(write)
            )),
            Err(e) => Err(format!("{} reply: {e}", self.method(write))),
        }
    }
}
