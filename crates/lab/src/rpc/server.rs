//! The study's server: a tokio server on 127.0.0.1 holding the store's items, answering
//! framed get/put requests in one of our formats.
//!
//! Bounds: a frame over `max_frame` bytes is answered with [`RESULT_FRAME_TOO_LARGE`] and the
//! connection closed; a connection over `max_connections` is answered with [`RESULT_BUSY`]
//! and closed; a frame that is not a request of the codec is answered with
//! [`RESULT_BAD_REQUEST`] (the framing is intact, so the connection stays open). The server
//! times its own codec calls (decode of each request, encode of each response) and reports
//! the sum through [`OP_CODEC_NS`], so the codec's share of the server's CPU can be given.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use shapeshift_formats::registry::FormatKind;
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::framing::{read_frame, write_frame, FrameError, DEFAULT_MAX_FRAME};
use super::messages::*;

/// Items the store holds (keys 0..ITEMS).
pub const ITEMS: usize = 100;

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub format: FormatKind,
    pub kind: ValueKind,
    pub max_frame: usize,
    pub max_connections: usize,
    /// Tokio worker threads.
    pub workers: usize,
}

impl ServerConfig {
    pub fn new(format: FormatKind, kind: ValueKind) -> ServerConfig {
        ServerConfig {
            format,
            kind,
            max_frame: DEFAULT_MAX_FRAME,
            max_connections: 256,
            workers: 2,
        }
    }
}

struct State {
    codec: MessageCodec,
    items: Vec<Mutex<Arc<Item>>>,
    max_frame: usize,
    codec_ns: AtomicU64,
    requests: AtomicU64,
}

impl State {
    /// The encoded response to one request frame.
    fn respond(&self, payload: Vec<u8>) -> Vec<u8> {
        let started = Instant::now();
        let request = self.codec.decode_request(payload);
        let decoded = Instant::now();
        let (result, value) = match request {
            Ok(request) => self.serve(request),
            Err(_) => (RESULT_BAD_REQUEST, None),
        };
        let answered = Instant::now();
        let bytes = self
            .codec
            .encode_response_parts(result, value.as_deref())
            .expect("responses are built to fit their schema");
        let encoded = Instant::now();
        let codec = (decoded - started) + (encoded - answered);
        self.codec_ns
            .fetch_add(codec.as_nanos() as u64, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
        bytes
    }

    /// The result code and, for a get, the item (shared, not copied: the encoder reads it).
    fn serve(&self, request: Request) -> (i64, Option<Arc<Item>>) {
        let slot = usize::try_from(request.key)
            .ok()
            .and_then(|k| self.items.get(k));
        match (request.op, slot, request.value) {
            (OP_GET, Some(slot), None) => (
                RESULT_OK,
                Some(Arc::clone(&slot.lock().expect("store lock"))),
            ),
            (OP_PUT, Some(slot), Some(value)) => {
                *slot.lock().expect("store lock") = Arc::new(value);
                (RESULT_OK, None)
            }
            (OP_GET | OP_PUT, None, _) => (RESULT_NOT_FOUND, None),
            (OP_CODEC_NS, _, None) => (self.codec_ns.load(Ordering::Relaxed) as i64, None),
            (OP_REQUESTS, _, None) => (self.requests.load(Ordering::Relaxed) as i64, None),
            _ => (RESULT_BAD_REQUEST, None),
        }
    }

    fn encode_result(&self, result: i64) -> Vec<u8> {
        self.codec
            .encode_response_parts(result, None)
            .expect("responses are built to fit their schema")
    }
}

/// Binds 127.0.0.1:`port` (0: any free port).
///
/// # Errors
/// The bind error.
pub async fn bind(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(("127.0.0.1", port)).await
}

/// Serves `listener` with `codec` (the messages of `config.format` and `config.kind`) until
/// `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    config: &ServerConfig,
    codec: MessageCodec,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let state = Arc::new(State {
        codec,
        items: (0..ITEMS as i64)
            .map(|key| Mutex::new(Arc::new(config.kind.initial_item(key))))
            .collect(),
        max_frame: config.max_frame,
        codec_ns: AtomicU64::new(0),
        requests: AtomicU64::new(0),
    });
    let slots = Arc::new(Semaphore::new(config.max_connections));
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A failed accept (out of descriptors, a reset) concerns that client only.
                Err(_) => continue,
            },
        };
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        match Arc::clone(&slots).try_acquire_owned() {
            Ok(permit) => {
                tokio::spawn(async move {
                    connection(stream, &state).await;
                    drop(permit);
                });
            }
            Err(_) => {
                tokio::spawn(async move {
                    let _ = refuse(stream, &state, RESULT_BUSY).await;
                });
            }
        }
    }
}

async fn refuse(mut stream: TcpStream, state: &State, result: i64) -> Result<(), FrameError> {
    let bytes = state.encode_result(result);
    write_frame(&mut stream, &bytes).await?;
    stream.shutdown().await?;
    Ok(())
}

async fn connection(stream: TcpStream, state: &State) {
    let (reader, writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    let mut writer = BufWriter::new(writer);
    loop {
        let payload = match read_frame(&mut reader, state.max_frame).await {
            Ok(Some(payload)) => payload,
            Ok(None) => return,
            Err(FrameError::TooLarge { .. }) => {
                let bytes = state.encode_result(RESULT_FRAME_TOO_LARGE);
                if write_frame(&mut writer, &bytes).await.is_ok() {
                    let _ = writer.flush().await;
                }
                let _ = writer.shutdown().await;
                return;
            }
            // A truncated frame or an I/O error: the client is gone or broken.
            Err(_) => return,
        };
        let bytes = state.respond(payload);
        if write_frame(&mut writer, &bytes).await.is_err() || writer.flush().await.is_err() {
            return;
        }
    }
}

/// A server running on its own runtime in a background thread (tests, and the CLI's
/// `rpc-server`).
pub struct RunningServer {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningServer {
    /// Starts a server on 127.0.0.1:`port`.
    ///
    /// # Errors
    /// The runtime's or the bind's error, or the format's (`InvalidInput`) when it cannot
    /// express the messages.
    pub fn start(config: ServerConfig, port: u16) -> std::io::Result<RunningServer> {
        let codec = MessageCodec::new(config.format, config.kind)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.workers.max(1))
            .enable_io()
            .build()?;
        let listener = runtime.block_on(bind(port))?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("rpc-server".into())
            .spawn(move || {
                runtime.block_on(serve(listener, &config, codec, async {
                    let _ = stopped.await;
                }));
            })?;
        Ok(RunningServer {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Stops accepting and waits for the server thread (open connections are dropped with
    /// the runtime).
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
