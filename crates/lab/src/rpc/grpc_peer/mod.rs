//! The gRPC peer: the same store behind tonic's server (HTTP/2, prost messages), with the
//! service code tonic-prost-build generated from `store.proto` (`store.rs`, checked in).
//!
//! The load generator speaks to it as a tonic user would: one [`StoreClient`] per client, each
//! on its own channel (one HTTP/2 connection), one unary call per request. A channel's bytes
//! are counted where they meet the socket ([`CountingStream`]), so bytes per request include
//! HTTP/2's frames and headers, as the framed servers' include their 4-byte lengths.
//!
//! Both sides set `TCP_NODELAY`, as the framed servers and the load generator's other clients
//! do. Everything else is tonic's default.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Channel, Endpoint, Server, Uri};
use tonic::{Request, Response, Status};

use super::load::Caller;
use super::messages::{tiny_value, ValueKind};
use super::peer_store::PeerStore;

#[allow(clippy::all)]
mod store;

use store::store_client::StoreClient;
use store::store_server::{Store, StoreServer};
pub use store::{Done, Image, Key, Media, MediaContent, PutMediaRequest, PutTinyRequest, Tiny};

/// The peer's name in the study's results and on `bench rpc-server --peer`.
pub const PEER_NAME: &str = "grpc-tonic";

/// jvm-serializers' media.1 in the generated types.
pub fn media1() -> MediaContent {
    let image = |uri: &str, width, height, size: store::Size| Image {
        uri: uri.into(),
        title: Some("Javaone Keynote".into()),
        width,
        height,
        size: size.into(),
    };
    MediaContent {
        image: vec![
            image(
                "http://javaone.com/keynote_large.jpg",
                1024,
                768,
                store::Size::Large,
            ),
            image(
                "http://javaone.com/keynote_small.jpg",
                320,
                240,
                store::Size::Small,
            ),
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
            player: store::Player::Java.into(),
            copyright: None,
        },
    }
}

/// The store, and a key outside it as gRPC's NOT_FOUND.
struct Handler(PeerStore<MediaContent>);

fn not_found(key: i32) -> Status {
    Status::not_found(format!("no item {key}"))
}

#[tonic::async_trait]
impl Store for Handler {
    async fn get_tiny(&self, request: Request<Key>) -> Result<Response<Tiny>, Status> {
        let key = request.into_inner().key;
        let value = (self.0.tiny(key).ok_or_else(|| not_found(key)))?
            .lock()
            .expect("store lock")
            .clone();
        Ok(Response::new(Tiny { value }))
    }

    async fn put_tiny(&self, request: Request<PutTinyRequest>) -> Result<Response<Done>, Status> {
        let PutTinyRequest { key, value } = request.into_inner();
        *self
            .0
            .tiny(key)
            .ok_or_else(|| not_found(key))?
            .lock()
            .expect("store lock") = value;
        Ok(Response::new(Done {}))
    }

    async fn get_media(&self, request: Request<Key>) -> Result<Response<MediaContent>, Status> {
        let key = request.into_inner().key;
        let value = (self.0.media(key).ok_or_else(|| not_found(key)))?
            .lock()
            .expect("store lock")
            .clone();
        Ok(Response::new(value))
    }

    async fn put_media(&self, request: Request<PutMediaRequest>) -> Result<Response<Done>, Status> {
        let PutMediaRequest { key, value } = request.into_inner();
        *self
            .0
            .media(key)
            .ok_or_else(|| not_found(key))?
            .lock()
            .expect("store lock") = value;
        Ok(Response::new(Done {}))
    }
}

/// tonic's server on its own runtime, serving until [`GrpcServer::stop`] or drop.
pub struct GrpcServer {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl GrpcServer {
    /// Starts tonic's server on 127.0.0.1 (any free port) on a runtime of `workers` threads,
    /// the same as our server's.
    ///
    /// # Errors
    /// A message when the runtime cannot start or no port is free.
    pub fn start(workers: usize) -> Result<GrpcServer, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .enable_all()
            .build()
            .map_err(|e| format!("grpc server runtime: {e}"))?;
        let handler = Handler(PeerStore::new(media1));
        let incoming = runtime
            .block_on(async { TcpIncoming::bind(SocketAddr::from(([127, 0, 0, 1], 0))) })
            .map_err(|e| format!("grpc server bind: {e}"))?
            .with_nodelay(Some(true));
        let addr = incoming
            .local_addr()
            .map_err(|e| format!("grpc server address: {e}"))?;
        let (shutdown, stopped) = oneshot::channel::<()>();
        runtime.spawn(async move {
            let served = Server::builder()
                .add_service(StoreServer::new(handler))
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(e) = served {
                eprintln!("grpc server: {e}");
            }
        });
        Ok(GrpcServer {
            addr,
            shutdown: Some(shutdown),
            runtime: Some(runtime),
        })
    }

    /// Stops accepting, lets calls in flight finish, and stops the runtime.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(std::time::Duration::from_secs(2));
        }
    }
}

impl Drop for GrpcServer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Bytes a connection has written and read.
#[derive(Default)]
struct WireCounters {
    sent: AtomicU64,
    received: AtomicU64,
}

/// A TCP stream that counts the bytes through it.
struct CountingStream {
    stream: TcpStream,
    counters: Arc<WireCounters>,
}

impl AsyncRead for CountingStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        let read = buf.filled().len() - before;
        self.counters
            .received
            .fetch_add(read as u64, Ordering::Relaxed);
        polled
    }
}

impl AsyncWrite for CountingStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.counters.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            self.counters.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// One load-generator client of the gRPC peer: a tonic client on its own channel.
pub struct GrpcCaller {
    client: StoreClient<Channel>,
    kind: ValueKind,
    counters: Arc<WireCounters>,
    /// The value every media put sends (built once: building it is not the transport's work).
    media: MediaContent,
}

impl GrpcCaller {
    /// Opens a channel (one HTTP/2 connection) to the server at `addr`.
    ///
    /// # Errors
    /// A message when the connection fails.
    pub async fn connect(addr: SocketAddr, kind: ValueKind) -> Result<GrpcCaller, String> {
        let counters = Arc::new(WireCounters::default());
        let connector_counters = Arc::clone(&counters);
        let connector = tower::service_fn(move |_: Uri| {
            let counters = Arc::clone(&connector_counters);
            async move {
                let stream = TcpStream::connect(addr).await?;
                stream.set_nodelay(true)?;
                Ok::<_, io::Error>(TokioIo::new(CountingStream { stream, counters }))
            }
        });
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| format!("grpc endpoint {addr}: {e}"))?
            .connect_with_connector(connector)
            .await
            .map_err(|e| format!("grpc connect {addr}: {e}"))?;
        Ok(GrpcCaller {
            client: StoreClient::new(channel),
            kind,
            counters,
            media: media1(),
        })
    }
}

fn call_error(status: Status) -> String {
    format!("grpc call: {:?}: {}", status.code(), status.message())
}

impl Caller for GrpcCaller {
    async fn call(&mut self, key: i64, write: bool) -> Result<(), String> {
        let key = i32::try_from(key).map_err(|_| format!("key {key} out of range"))?;
        let ok = match (self.kind, write) {
            (ValueKind::Tiny, false) => {
                let reply = self.client.get_tiny(Key { key }).await;
                reply.map_err(call_error)?.into_inner().value.len() == 16
            }
            (ValueKind::Tiny, true) => {
                let value = tiny_value(key.into());
                let reply = self.client.put_tiny(PutTinyRequest { key, value }).await;
                reply.map(|_| true).map_err(call_error)?
            }
            (ValueKind::Media, false) => {
                let reply = self.client.get_media(Key { key }).await;
                !reply.map_err(call_error)?.into_inner().image.is_empty()
            }
            (ValueKind::Media, true) => {
                let value = self.media.clone();
                let reply = self.client.put_media(PutMediaRequest { key, value }).await;
                reply.map(|_| true).map_err(call_error)?
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{} response of key {key}: wrong value",
                self.kind.name()
            ))
        }
    }

    fn wire_bytes(&self) -> (u64, u64) {
        (
            self.counters.sent.load(Ordering::Relaxed),
            self.counters.received.load(Ordering::Relaxed),
        )
    }
}
